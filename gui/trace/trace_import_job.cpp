#include "gui/trace/trace_import_job.h"

#include <exception>

#include "profiler/import/import_many.h"
#include "profiler/import/import_trace.h"
#include "profiler/store/trace_output.h"

namespace meshwork::gui {

namespace {

struct ImportCancelled : std::exception {
    [[nodiscard]] const char* what() const noexcept override { return "import cancelled"; }
};

// Forwards to the trace being written, reporting the events written as the job's progress
// and stopping the importer (by throwing through it) once the job is cancelled: the
// importers have no cancellation of their own, and every one of them writes through a
// TraceSink.
class CountingSink : public TraceSink {
public:
    CountingSink(TraceSink& out, const JobControl& job) : out_(out), job_(job) {}
    void set_run_info(const TraceRunInfo& info) override { out_.set_run_info(info); }
    int add_track(const TrackInfo& track) override { return out_.add_track(track); }
    void add_event(const TraceEvent& event) override {
        // The stop token is checked every 4096 events; the progress store is as cheap as
        // the count itself.
        if ((events_ & 4095) == 0 && job_.stop_requested()) throw ImportCancelled();
        job_.progress(++events_);
        out_.add_event(event);
    }
    void add_counter(int rank, int track, const std::string& name, std::int64_t time_ns, double value) override {
        out_.add_counter(rank, track, name, time_ns, value);
    }
    void close() override { out_.close(); }

private:
    TraceSink& out_;
    const JobControl& job_;
    qint64 events_ = 0;
};

// How an import ended, for the signals.
struct ImportEnd {
    bool cancelled = false;
    QString summary;
};

}  // namespace

TraceImportJob::TraceImportJob(QObject* parent) : QObject(parent) {
    jobs_.on_progress([this](qint64 events, qint64) { emit progress(events); }, 100);
}

void TraceImportJob::wait() { jobs_.wait(); }

void TraceImportJob::cancel() { jobs_.cancel(); }

bool TraceImportJob::start(const QString& input, const QString& output) {
    if (running()) return false;
    jobs_.start(
        [input, output](const JobControl& job) {
            job.progress(0);  // "reading the file": importers read it all before the first event
            ImportEnd end;
            try {
                profiler::TraceOutput out(output.toStdString());
                CountingSink sink(out.writer(), job);
                const auto r = profiler::import_trace_file(input.toStdString(), sink, profiler::ImportOptions{});
                if (job.stop_requested()) throw ImportCancelled();
                out.commit();
                end.summary = tr("%1 export, rank %2: %3 events")
                                  .arg(QString::fromStdString(r.format)).arg(r.rank).arg(r.events);
            } catch (const ImportCancelled&) {
                end.cancelled = true;  // TraceOutput removed its temporary file
            }
            return end;
        },
        [this, input, output](const ImportEnd& end) {
            if (end.cancelled) emit cancelled(input);
            else emit finished(output, end.summary);
        },
        [this, input](const QString& message) { emit failed(input, message); });
    return true;
}

bool TraceImportJob::start_many(const QStringList& inputs, const QString& output) {
    if (running() || inputs.isEmpty()) return false;
    const QString first = inputs.front();
    jobs_.start(
        [inputs, output](const JobControl& job) {
            job.progress(0);
            ImportEnd end;
            std::vector<std::string> paths;
            for (const QString& input : inputs) paths.push_back(input.toStdString());
            profiler::TraceOutput out(output.toStdString());
            const auto r = profiler::import_trace_files(profiler::expand_trace_inputs(paths), out.writer(),
                                                        profiler::ImportManyOptions{});
            if (job.stop_requested()) {
                end.cancelled = true;  // TraceOutput removes its temporary file
                return end;
            }
            out.commit();
            end.summary = tr("%1 files merged as %2 ranks").arg(inputs.size()).arg(r.files.size());
            return end;
        },
        [this, first, output](const ImportEnd& end) {
            if (end.cancelled) emit cancelled(first);
            else emit finished(output, end.summary);
        },
        [this, first](const QString& message) { emit failed(first, message); });
    return true;
}

}  // namespace meshwork::gui
