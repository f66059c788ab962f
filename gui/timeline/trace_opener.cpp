#include "gui/timeline/trace_opener.h"

#include <QMetaObject>

#include <exception>

#include "gui/timeline/trace_reader_source.h"

namespace meshwork::gui {

TraceOpener::TraceOpener(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<const TimelineSource>>();
    pool_.setMaxThreadCount(1);
}

TraceOpener::~TraceOpener() { pool_.waitForDone(); }

void TraceOpener::wait() { pool_.waitForDone(); }

void TraceOpener::open(const QString& path) {
    pool_.start([this, path] {
        std::shared_ptr<const TimelineSource> source;
        QString error;
        try {
            source = std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString()));
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        // Queued to this object's thread; dropped by Qt if the opener is gone by then.
        QMetaObject::invokeMethod(this, [this, source, path, error] {
            if (source) emit opened(source, path);
            else emit failed(path, error);
        }, Qt::QueuedConnection);
    });
}

}  // namespace meshwork::gui
