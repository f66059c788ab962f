// Imports an Nsight Systems SQLite export or a PyTorch profiler (Kineto) trace into a
// Meshwork trace on a worker thread (profiler/import does the reading), reporting the
// number of events imported so far and stopping when cancelled. The output is written
// under a temporary name and appears only once complete.
#pragma once

#include <QObject>
#include <QStringList>

#include "gui/app/background_jobs.h"

namespace meshwork::gui {

class TraceImportJob : public QObject {
    Q_OBJECT
public:
    explicit TraceImportJob(QObject* parent = nullptr);

    // One import at a time; false (and nothing started) while one is running.
    bool start(const QString& input, const QString& output);
    // Several per-rank files of one job (Kineto JSON, nsys SQLite, Meshwork traces) merged as
    // the ranks of one trace (profiler/import/import_many.h: ranks from the files, clocks
    // aligned). Cancel takes effect once the merge is done (the merge has no stop token).
    bool start_many(const QStringList& inputs, const QString& output);
    void cancel();
    [[nodiscard]] bool running() const { return jobs_.running(); }
    void wait();

signals:
    void progress(qint64 events);
    void finished(const QString& output, const QString& summary);
    void failed(const QString& input, const QString& message);
    void cancelled(const QString& input);

private:
    BackgroundJobs jobs_;  // cancels and waits for the worker when destroyed
};

}  // namespace meshwork::gui
