// BackgroundJobs, the one helper behind the GUI's background work: order, delivery on the
// owner's thread, failures, cancellation of queued and running jobs, progress (the last
// value before the result), and a destructor that stops and waits.
#include <QtTest>

#include <QThread>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "gui/app/background_jobs.h"

using namespace meshwork::gui;

namespace {
// Blocks a job until released, so that a test can act while it runs.
struct Gate {
    std::atomic<bool> entered{false}, open{false};
    void pass(const JobControl& job) {
        entered = true;
        while (!open && !job.stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
};
}  // namespace

class TestBackgroundJobs : public QObject {
    Q_OBJECT
private slots:
    void results_arrive_in_order_on_the_owner_thread() {
        BackgroundJobs jobs;
        QList<int> got;
        QList<bool> running_in_done;
        QThread* const owner = QThread::currentThread();
        bool all_on_owner = true;
        for (int i = 0; i < 5; ++i) {
            jobs.start([i](const JobControl&) { return i * 10; },
                       [&, owner](int v) {
                           got << v;
                           running_in_done << jobs.running();
                           all_on_owner = all_on_owner && QThread::currentThread() == owner;
                       },
                       [](const QString&) { QFAIL("no job fails"); });
        }
        QVERIFY(jobs.running());
        QTRY_COMPARE(got.size(), 5);
        QCOMPARE(got, (QList<int>{0, 10, 20, 30, 40}));
        QVERIFY(all_on_owner);
        QCOMPARE(running_in_done.last(), false);  // the last delivery ends "running"
        QVERIFY(!jobs.running());
    }

    void an_exception_arrives_as_its_message() {
        BackgroundJobs jobs;
        QString message;
        bool done = false;
        jobs.start([](const JobControl&) -> int { throw std::runtime_error("trace.sqlite: events: corrupt"); },
                   [&](int) { done = true; }, [&](const QString& m) { message = m; });
        QTRY_COMPARE(message, QString("trace.sqlite: events: corrupt"));
        QVERIFY(!done);
        QVERIFY(!jobs.running());
    }

    void cancel_reaches_the_running_and_the_queued_jobs() {
        BackgroundJobs jobs;
        Gate gate;
        QList<bool> delivered;  // stop_requested() as each job returned it
        const auto work = [&](const JobControl& job) {
            gate.pass(job);
            return job.stop_requested();
        };
        jobs.start(work, [&](bool stopped) { delivered << stopped; }, [](const QString&) {});
        jobs.start([](const JobControl& job) { return job.stop_requested(); },
                   [&](bool stopped) { delivered << stopped; }, [](const QString&) {});
        QTRY_VERIFY(gate.entered.load());
        jobs.cancel();
        QTRY_COMPARE(delivered.size(), 2);
        // Both saw the request (the queued one from its start), and each answer still came.
        QCOMPARE(delivered, (QList<bool>{true, true}));
        QVERIFY(!jobs.running());
        // Jobs started after a cancel run as usual.
        gate.open = true;
        bool later_stopped = true;
        jobs.start([](const JobControl& job) { return job.stop_requested(); },
                   [&](bool stopped) { later_stopped = stopped; }, [](const QString&) {});
        QTRY_VERIFY(!jobs.running());
        QVERIFY(!later_stopped);
    }

    void the_last_progress_comes_before_the_result() {
        BackgroundJobs jobs;
        QList<qint64> seen;
        bool result_after_progress = false;
        // A long interval: the timer never fires while the job runs; the final report does.
        jobs.on_progress([&](qint64 done, qint64 total) { seen << done << total; }, 60'000);
        jobs.start(
            [](const JobControl& job) {
                for (int i = 1; i <= 1000; ++i) job.progress(i, 1000);
                return 0;
            },
            [&](int) { result_after_progress = seen == QList<qint64>{1000, 1000}; }, [](const QString&) {});
        QTRY_VERIFY(!jobs.running());
        QVERIFY2(result_after_progress, qPrintable(QString("progress seen: %1").arg(seen.size())));
    }

    void progress_is_sampled_while_a_job_runs() {
        BackgroundJobs jobs;
        qint64 latest = -1;
        jobs.on_progress([&](qint64 done, qint64) { latest = done; }, 10);
        Gate gate;
        jobs.start(
            [&](const JobControl& job) {
                job.progress(42);
                gate.pass(job);
                return 0;
            },
            [](int) {}, [](const QString&) {});
        QTRY_COMPARE(latest, qint64{42});  // from the timer: the job is still held at the gate
        QVERIFY(jobs.running());
        gate.open = true;
        QTRY_VERIFY(!jobs.running());
    }

    void destruction_stops_and_waits_for_the_worker() {
        Gate gate;
        std::atomic<bool> finished{false};
        bool delivered = false;
        {
            BackgroundJobs jobs;
            jobs.start(
                [&](const JobControl& job) {
                    gate.pass(job);  // released only by the destructor's stop request
                    finished = true;
                    return 0;
                },
                [&](int) { delivered = true; }, [](const QString&) {});
            QTRY_VERIFY(gate.entered.load());
        }
        QVERIFY(finished);  // the destructor waited for the job
        QCoreApplication::processEvents();
        QVERIFY(!delivered);  // and nothing reached the destroyed helper
    }
};

QTEST_GUILESS_MAIN(TestBackgroundJobs)
#include "tst_background_jobs.moc"
