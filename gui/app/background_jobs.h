// The one way the GUI runs work off its thread (after KDAB Hotspot's JobTracker): jobs run
// in order on one worker thread per owner; each gets a JobControl with a stop token and a
// cheap progress report; its result, or the message of the exception it threw, comes back
// on the owner's thread. A search, an import, a trace being opened or compared, a layout
// being assessed, a step being located: each is a job of a BackgroundJobs member.
//
// Guarantees the owners rely on:
// - Every job started runs and delivers once: its result or its failure.
// - A cancelled job sees stop_requested() (from its start when it was still queued); what
//   it returns is delivered, so a cancelled search or import reports that it was cancelled,
//   and a job made stale by a newer one can return at once.
// - Progress is sampled on the owner's thread every interval while a job runs, and once
//   more right before its result, so the last value is never lost.
// - The destructor cancels and waits for the worker: declare BackgroundJobs as the owner's
//   last member, so that it goes first and no job outlives what its results touch. Calls
//   queued for a destroyed helper are dropped by Qt.
#pragma once

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QTimer>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <utility>
#include <vector>

namespace meshwork::gui {

class BackgroundJobs;

// What a running job is given: whether to stop, where to report progress, and a way to
// run code on the owner's thread (phase texts, steps as they finish).
class JobControl {
public:
    [[nodiscard]] bool stop_requested() const { return stop_.stop_requested(); }
    [[nodiscard]] std::stop_token stop_token() const { return stop_; }
    // Two relaxed stores: call it as often as the work likes (per event is fine).
    void progress(qint64 done, qint64 total = 0) const;
    // Runs `fn` on the owner's thread, in order with the job's other calls and its result.
    void post(std::function<void()> fn) const;

private:
    friend class BackgroundJobs;
    JobControl(BackgroundJobs& jobs, std::stop_token stop) : jobs_(jobs), stop_(std::move(stop)) {}
    BackgroundJobs& jobs_;
    std::stop_token stop_;
};

class BackgroundJobs : public QObject {
    Q_OBJECT
public:
    explicit BackgroundJobs(QObject* parent = nullptr);
    ~BackgroundJobs() override;  // cancels every job and waits for the worker

    // Called on the owner's thread with the latest (done, total) a running job reported,
    // every `interval_ms` and once before each result; not called before the first report.
    void on_progress(std::function<void(qint64 done, qint64 total)> handler, int interval_ms = 100);

    // Queues `work` (Result work(const JobControl&)). `done(Result)` or `failed(message)`
    // (what the std::exception it threw said) then runs on the owner's thread.
    template <class Work, class Done>
    void start(Work work, Done done, std::function<void(const QString&)> failed) {
        start_job(
            [work = std::move(work), done = std::move(done)](const JobControl& job) mutable -> std::function<void()> {
                auto result = work(job);
                return [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); };
            },
            std::move(failed));
    }

    // Asks every queued and running job to stop.
    void cancel();
    // Blocks until no job runs (tests, shutdown). Results already queued still arrive later.
    void wait();
    // From start() until the job's result (or failure) is delivered, on the owner's thread;
    // false again when done/failed runs.
    [[nodiscard]] bool running() const { return pending_ > 0; }

private:
    friend class JobControl;
    using Deliver = std::function<void()>;
    struct Progress {
        std::atomic<qint64> done{0}, total{0};
        std::atomic<bool> reported{false};
    };
    void start_job(std::function<Deliver(const JobControl&)> work, std::function<void(const QString&)> failed);
    void post(std::function<void()> fn);
    void finish_on_owner_thread();
    void emit_progress();

    std::shared_ptr<Progress> progress_ = std::make_shared<Progress>();
    std::function<void(qint64, qint64)> progress_handler_;
    QTimer progress_timer_;
    int pending_ = 0;  // owner's thread only
    std::mutex mutex_;
    std::vector<std::shared_ptr<std::stop_source>> active_;  // queued or running, under mutex_
    QThreadPool pool_;  // last: destroyed (after waiting) before what the jobs use
};

}  // namespace meshwork::gui
