// Imports an Nsight Systems SQLite export or a PyTorch profiler (Kineto) trace into a
// Meshwork trace on a worker thread (profiler/import does the reading), reporting the
// number of events imported so far and stopping when cancelled. The output is written
// under a temporary name and appears only once complete.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <atomic>
#include <memory>

namespace meshwork::gui {

class TraceImportJob : public QObject {
    Q_OBJECT
public:
    explicit TraceImportJob(QObject* parent = nullptr);
    ~TraceImportJob() override;  // cancels and waits for the worker

    // One import at a time; false (and nothing started) while one is running.
    bool start(const QString& input, const QString& output);
    void cancel();
    [[nodiscard]] bool running() const { return running_; }
    void wait();

signals:
    void progress(qint64 events);
    void finished(const QString& output, const QString& summary);
    void failed(const QString& input, const QString& message);
    void cancelled(const QString& input);

private:
    struct Shared {
        std::atomic<bool> cancel{false};
        std::atomic<qint64> events{0};
    };
    QThreadPool pool_;
    QTimer poll_;
    std::shared_ptr<Shared> shared_;
    bool running_ = false;
};

}  // namespace meshwork::gui
