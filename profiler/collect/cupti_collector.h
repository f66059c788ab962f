// GPU profiling for the rest of the program: the CUPTI collector of the CUDA plugin
// (cupti_activity.h inside libmeshwork_cuda.so), loaded on first use. Records kernels (NCCL
// kernels as communication, with bytes and group from the engine's collective ranges),
// memcpy, memset and NVTX ranges into a TraceSink, on the host steady clock like the
// engine's own events, with step, micro-batch and layer from the ranges open at each launch
// (collect/gpu_activity.h). Without the plugin, its libraries, a driver or a GPU,
// available() says which and start() throws RuntimeError saying so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/engine/cuda_plugin.h"
#include "core/trace/trace_event.h"

namespace meshwork::profiler {

using CuptiOptions = engine::GpuActivityOptions;

class CuptiCollector {
public:
    // `rank` is the rank of every device unless options.rank_of_device says otherwise.
    CuptiCollector(TraceSink& sink, int rank, CuptiOptions options = {});
    ~CuptiCollector();  // stops if running
    CuptiCollector(const CuptiCollector&) = delete;
    CuptiCollector& operator=(const CuptiCollector&) = delete;

    // True when the CUDA plugin loads and a device is visible; otherwise `why` says why not.
    // Loads the plugin.
    static bool available(std::string* why);

    void start();
    // Flushes CUPTI's buffers and writes every record to the sink.
    void stop();
    [[nodiscard]] std::int64_t dropped_records() const;

private:
    TraceSink& sink_;
    CuptiOptions options_;
    std::unique_ptr<engine::GpuActivityCollector> impl_;  // made by the plugin at start()
    bool running_ = false;
};

}  // namespace meshwork::profiler
