#include "gui/trace/trace_import_job.h"

#include <QMetaObject>

#include <exception>

#include "profiler/import/import_trace.h"
#include "profiler/store/trace_output.h"

namespace meshwork::gui {

namespace {

struct ImportCancelled : std::exception {
    [[nodiscard]] const char* what() const noexcept override { return "import cancelled"; }
};

// Forwards to the trace being written, counting events for the progress display and
// stopping the importer (by throwing through it) once cancel is set: the importers have
// no cancellation of their own, and every one of them writes through a TraceSink.
class CountingSink : public TraceSink {
public:
    CountingSink(TraceSink& out, std::atomic<bool>& cancel, std::atomic<qint64>& events)
        : out_(out), cancel_(cancel), events_(events) {}
    void set_run_info(const TraceRunInfo& info) override { out_.set_run_info(info); }
    int add_track(const TrackInfo& track) override { return out_.add_track(track); }
    void add_event(const TraceEvent& event) override {
        // Checked every 4096 events: an atomic load per event would cost little, but the
        // relaxed counter update is what the progress display needs.
        const auto n = events_.fetch_add(1, std::memory_order_relaxed);
        if ((n & 4095) == 0 && cancel_.load(std::memory_order_relaxed)) throw ImportCancelled();
        out_.add_event(event);
    }
    void add_counter(int rank, int track, const std::string& name, std::int64_t time_ns, double value) override {
        out_.add_counter(rank, track, name, time_ns, value);
    }
    void close() override { out_.close(); }

private:
    TraceSink& out_;
    std::atomic<bool>& cancel_;
    std::atomic<qint64>& events_;
};

}  // namespace

TraceImportJob::TraceImportJob(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1);
    poll_.setInterval(100);
    connect(&poll_, &QTimer::timeout, this, [this] {
        if (shared_) emit progress(shared_->events.load(std::memory_order_relaxed));
    });
}

TraceImportJob::~TraceImportJob() {
    cancel();
    pool_.waitForDone();
}

void TraceImportJob::wait() { pool_.waitForDone(); }

void TraceImportJob::cancel() {
    if (shared_) shared_->cancel = true;
}

bool TraceImportJob::start(const QString& input, const QString& output) {
    if (running_) return false;
    running_ = true;
    shared_ = std::make_shared<Shared>();
    poll_.start();
    pool_.start([this, shared = shared_, input, output] {
        QString summary, error;
        bool was_cancelled = false;
        try {
            profiler::TraceOutput out(output.toStdString());
            CountingSink sink(out.writer(), shared->cancel, shared->events);
            const auto r = profiler::import_trace_file(input.toStdString(), sink, profiler::ImportOptions{});
            if (shared->cancel) throw ImportCancelled();
            out.commit();
            summary = tr("%1 export, rank %2: %3 events").arg(QString::fromStdString(r.format)).arg(r.rank).arg(r.events);
        } catch (const ImportCancelled&) {
            was_cancelled = true;  // TraceOutput removed its temporary file
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(this, [this, input, output, summary, error, was_cancelled] {
            running_ = false;
            poll_.stop();
            if (was_cancelled) emit cancelled(input);
            else if (error.isEmpty()) emit finished(output, summary);
            else emit failed(input, error);
        }, Qt::QueuedConnection);
    });
    return true;
}

}  // namespace meshwork::gui
