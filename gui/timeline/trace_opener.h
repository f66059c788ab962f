// Opens trace files on a worker thread so that a large or remote-mounted file never
// freezes the window; reports the source or the error (a corrupt file is an InputError
// naming the file). "host:/path" (when no local file has that name) is served from that
// host through ssh (RemoteTraceSource); when the host cannot serve it, serve_unavailable
// says why and the caller copies the file instead.
#pragma once

#include <QObject>

#include <memory>

#include "gui/app/background_jobs.h"
#include "gui/timeline/timeline_source.h"

namespace meshwork::gui {

class TraceOpener : public QObject {
    Q_OBJECT
public:
    explicit TraceOpener(QObject* parent = nullptr);
    void open(const QString& path);
    void wait();

signals:
    void opened(std::shared_ptr<const meshwork::gui::TimelineSource> source, const QString& path);
    void failed(const QString& path, const QString& message);
    void serve_unavailable(const QString& spec, const QString& reason);

private:
    BackgroundJobs jobs_;
};

}  // namespace meshwork::gui
