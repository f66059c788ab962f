// "Go to step": finds when step N (or micro-batch M of it) ran in a trace file, over every
// rank, on a worker thread with its own read-only TraceReader (a reader is used by one
// thread at a time, and the timeline's own one paints on the GUI thread). The answer
// arrives once, through found() or failed(). A remote trace (host:path) is asked through a
// serve-trace session of its own.
#pragma once

#include <QObject>
#include <QString>

#include "gui/app/background_jobs.h"

namespace meshwork::gui {

// "3" -> step 3, all micro-batches; "3.1" or "3/1" -> micro-batch 1 of step 3. False when
// the text is neither.
bool parse_step_target(const QString& text, int& step, int& micro_batch);

class StepLocator : public QObject {
    Q_OBJECT
public:
    explicit StepLocator(QObject* parent = nullptr);

    void locate(const QString& trace_path, int step, int micro_batch);

signals:
    void found(qint64 start_ns, qint64 end_ns, const QString& what);
    void failed(const QString& message);

private:
    BackgroundJobs jobs_;
};

}  // namespace meshwork::gui
