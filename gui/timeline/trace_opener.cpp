#include "gui/timeline/trace_opener.h"

#include "gui/timeline/trace_reader_source.h"
#include "gui/trace/remote_trace_source.h"

namespace meshwork::gui {

TraceOpener::TraceOpener(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<const TimelineSource>>();
}

void TraceOpener::wait() { jobs_.wait(); }

void TraceOpener::open(const QString& path) {
    RemoteSpec remote;
    if (is_remote_trace(path, remote)) {
        // The source, or why the host cannot serve the trace (then the file is copied).
        struct Opened {
            std::shared_ptr<const TimelineSource> source;
            QString unavailable;
        };
        jobs_.start(
            [remote](const JobControl&) -> Opened {
                try {
                    return {std::make_shared<RemoteTraceSource>(connect_remote_trace(remote)), {}};
                } catch (const profiler::remote::ServeUnavailable& e) {
                    return {nullptr, QString::fromStdString(e.what())};
                }
            },
            [this, path](Opened result) {
                if (result.source) emit opened(std::move(result.source), path);
                else emit serve_unavailable(path, result.unavailable);
            },
            [this, path](const QString& message) { emit failed(path, message); });
        return;
    }
    jobs_.start(
        [path](const JobControl&) -> std::shared_ptr<const TimelineSource> {
            return std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString()));
        },
        [this, path](std::shared_ptr<const TimelineSource> source) { emit opened(std::move(source), path); },
        [this, path](const QString& message) { emit failed(path, message); });
}

}  // namespace meshwork::gui
