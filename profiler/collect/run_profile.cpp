#include "profiler/collect/run_profile.h"

#include <exception>
#include <filesystem>

#include "profiler/collect/cupti_collector.h"
#include "profiler/store/trace_writer.h"

namespace meshwork::profiler {

namespace {

class TraceRunProfile final : public engine::RunProfile {
public:
    explicit TraceRunProfile(const engine::ProfileSpec& spec) : writer_(TraceWriter::create(spec.path, options())) {
        writer_->set_run_info(spec.info);
        if (!spec.gpu) return;
        try {
            CuptiOptions options;
            options.rank_of_device = spec.rank_of_device;
            gpu_ = std::make_unique<CuptiCollector>(*writer_, spec.rank, options);  // CUPTI is process-wide
            gpu_->start();
        } catch (...) {
            writer_->close();
            std::error_code ec;
            std::filesystem::remove(spec.path, ec);
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
        writer_->close();
        return warning;
    }

private:
    std::unique_ptr<TraceWriter> writer_;
    std::unique_ptr<CuptiCollector> gpu_;
};

}  // namespace

std::unique_ptr<engine::RunProfile> open_run_profile(const engine::ProfileSpec& spec) {
    return std::make_unique<TraceRunProfile>(spec);
}

}  // namespace meshwork::profiler
