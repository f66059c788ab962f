#include "gui/timeline/trace_opener.h"

#include "gui/timeline/trace_reader_source.h"

namespace meshwork::gui {

TraceOpener::TraceOpener(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<const TimelineSource>>();
}

void TraceOpener::wait() { jobs_.wait(); }

void TraceOpener::open(const QString& path) {
    jobs_.start(
        [path](const JobControl&) -> std::shared_ptr<const TimelineSource> {
            return std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString()));
        },
        [this, path](std::shared_ptr<const TimelineSource> source) { emit opened(std::move(source), path); },
        [this, path](const QString& message) { emit failed(path, message); });
}

}  // namespace meshwork::gui
