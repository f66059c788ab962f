// The CUPTI collector: GPU activity (concurrent kernels, memcpy, memset, CUDA runtime calls,
// NVTX ranges) through CUPTI's Activity API into a TraceSink. Timestamps are taken from the
// host steady clock (cuptiActivityRegisterTimestampCallback), so GPU records line up with
// CPU spans. NCCL kernels become communication events; kernels get step, micro-batch and
// layer from the NVTX ranges open on the launching thread (analysis/range_context.h).
// Without CUDA in the build, or without a driver/GPU at run time, start() throws
// RuntimeError saying so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "trace/trace_event.h"

namespace meshwork::profiler {

struct CuptiOptions {
    std::size_t buffer_bytes = std::size_t{4} << 20;  // CUPTI recommends 1-10 MB
    bool runtime_api = true;
    bool nvtx = true;
};

class CuptiCollector {
public:
    CuptiCollector(TraceSink& sink, int rank, CuptiOptions options = {});
    ~CuptiCollector();  // stops if running
    CuptiCollector(const CuptiCollector&) = delete;
    CuptiCollector& operator=(const CuptiCollector&) = delete;

    // True when this build has CUPTI and a device is visible; otherwise `why` says why not.
    static bool available(std::string* why);

    void start();
    // Flushes CUPTI's buffers and writes every record to the sink.
    void stop();
    [[nodiscard]] std::int64_t dropped_records() const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace meshwork::profiler
