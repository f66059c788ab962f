#include "profiler/collect/run_profile.h"

#include <exception>
#include <filesystem>

#include "profiler/collect/cupti_collector.h"
#include "profiler/collect/free_space.h"
#include "core/common/error.h"
#include "profiler/store/trace_output.h"
#include "profiler/store/trace_writer.h"

namespace meshwork::profiler {

namespace {

// The profile is written under PATH.partial.PID and renamed over PATH only once closed: an
// existing profile stays until the new one is complete, a killed run leaves the partial file
// (recover-trace reads it back; the next run to PATH removes it), never a damaged PATH.
class TraceRunProfile final : public engine::RunProfile {
public:
    explicit TraceRunProfile(const engine::ProfileSpec& spec)
        : path_(spec.path), partial_(prepare(spec.path)), writer_(TraceWriter::create(partial_, options())) {
        writer_->set_run_info(spec.info);
        if (!spec.gpu) return;
        try {
            CuptiOptions options;
            options.rank_of_device = spec.rank_of_device;
            gpu_ = std::make_unique<CuptiCollector>(*writer_, spec.rank, options);  // CUPTI is process-wide
            gpu_->start();
        } catch (...) {
            writer_.reset();
            remove_partial();
            throw;
        }
    }

    TraceSink& sink() override { return *writer_; }

    // The writer must not take cores from the run it records (TraceWriterOptions::yield_cores).
    static TraceWriterOptions options() {
        TraceWriterOptions o;
        o.yield_cores = true;
        return o;
    }

    std::string close() override {
        std::string warning;
        if (gpu_) {
            try {
                gpu_->stop();
            } catch (const std::exception& e) {
                // The host events are still worth keeping.
                warning = std::string("GPU profile incomplete: ") + e.what();
            }
            gpu_.reset();
        }
        try {
            writer_->close();
        } catch (...) {
            writer_.reset();
            remove_partial();  // a failed close (disk full): the old profile stays
            throw;
        }
        writer_.reset();
        std::error_code ec;
        std::filesystem::rename(partial_, path_, ec);
        if (ec) {
            remove_partial();
            throw RuntimeError("cannot rename " + partial_ + " to " + path_ + ": " + ec.message());
        }
        return warning;
    }

private:
    // Before the first event: leftovers of killed runs to `path` go, the disk has room.
    static std::string prepare(const std::string& path) {
        remove_dead_partials(path);
        check_free_space(path);
        return partial_name(path);
    }

    void remove_partial() const {
        std::error_code ec;
        for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(partial_ + suffix, ec);
    }

    std::string path_;
    std::string partial_;
    std::unique_ptr<TraceWriter> writer_;
    std::unique_ptr<CuptiCollector> gpu_;
};

}  // namespace

std::unique_ptr<engine::RunProfile> open_run_profile(const engine::ProfileSpec& spec) {
    return std::make_unique<TraceRunProfile>(spec);
}

}  // namespace meshwork::profiler
