#include "profiler/collect/run_profile.h"

#include <exception>
#include <filesystem>

#include "profiler/collect/cupti_collector.h"
#include "core/common/error.h"
#include "profiler/store/trace_output.h"
#include "profiler/store/trace_writer.h"

namespace meshwork::profiler {

namespace {

// Free space a profile needs to start: below it the run is refused before any step. A
// short CPU-engine run's profile (tiny model, 20 steps) takes about 1 MiB (docs/RELIABILITY.md,
// "Writers"); 64 MiB leaves room for runs fifty times longer, and a run that still fills the
// disk stops at the next event (TraceWriter throws once its thread failed).
constexpr std::uintmax_t kMinFreeBytes = std::uintmax_t{64} << 20;

void check_free_space(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path target(path);
    const auto folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    const auto space = std::filesystem::space(folder, ec);
    if (ec) return;  // no answer (an unusual file system): the writer reports a full disk itself
    if (space.available < kMinFreeBytes) {
        throw RuntimeError(path + ": only " + std::to_string(space.available >> 20) + " MiB free on its disk; a " +
                           "profile needs at least " + std::to_string(kMinFreeBytes >> 20) +
                           " MiB to start (free some space or write the profile elsewhere)");
    }
}

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
