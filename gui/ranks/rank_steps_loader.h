// Computes a trace's rank × step matrix (profiler::compute_rank_steps) and groups its ranks
// by the mesh of the layout the trace carries, on a worker thread (BackgroundJobs): a
// 1,024-rank trace never freezes the window. Reads the file with its own TraceReader, so
// the timeline's reader is never shared between threads. A host:path trace is asked over a
// serve-trace session of its own (gui/trace/remote_trace_source.h).
#pragma once

#include <QObject>

#include <memory>

#include "gui/app/background_jobs.h"
#include "gui/ranks/rank_overview_data.h"

namespace meshwork::gui {

class RankStepsLoader : public QObject {
    Q_OBJECT
public:
    explicit RankStepsLoader(QObject* parent = nullptr);
    // A newer load makes an older one stale: only the newest delivers.
    void load(const QString& path);
    void wait() { jobs_.wait(); }
    [[nodiscard]] bool running() const { return jobs_.running(); }

signals:
    // `what` is the phase; `total` 0 while its length is unknown.
    void progress(const QString& what, qint64 done, qint64 total);
    void loaded(std::shared_ptr<const meshwork::gui::RankOverviewData> data, const QString& path);
    void failed(const QString& path, const QString& message);

private:
    int generation_ = 0;
    QString phase_;
    BackgroundJobs jobs_;  // last: goes first
};

}  // namespace meshwork::gui
