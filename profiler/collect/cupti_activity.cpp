#include "profiler/collect/cupti_activity.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "profiler/analysis/event_classify.h"
#include "profiler/collect/cpu_collector.h"
#include "profiler/collect/gpu_activity.h"
#include "core/common/error.h"

namespace meshwork::profiler {

namespace {

// CUPTI requires activity buffers aligned to 8 bytes.
constexpr std::size_t kBufferAlign = 8;

std::string cupti_error(CUptiResult rc) {
    const char* s = nullptr;
    cuptiGetResultString(rc, &s);
    return s ? s : "CUPTI error " + std::to_string(static_cast<int>(rc));
}

void check(CUptiResult rc, const char* what) {
    if (rc != CUPTI_SUCCESS) throw RuntimeError(std::string("CUPTI ") + what + " failed: " + cupti_error(rc));
}

std::uint64_t CUPTIAPI host_timestamp() { return static_cast<std::uint64_t>(steady_now_ns()); }

struct MarkerStart {
    std::uint32_t thread;
    std::int64_t start_ns;
    std::string name;
};

bool available_impl(std::string* why) {
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
        (void)cudaGetLastError();
        if (why) *why = std::string("no GPU: ") + cudaGetErrorString(rc);
        return false;
    }
    if (count == 0) {
        if (why) *why = "no GPU: no CUDA device is visible";
        return false;
    }
    return true;
}

// NVTX (header-only, v3) hands its ranges to the library named by NVTX_INJECTION64_PATH,
// read once, at the process's first NVTX call; CUPTI records them as MARKER activity only
// when that library is CUPTI. The collector starts before the run's first range, so
// pointing NVTX at the libcupti this plugin loaded is enough (an existing setting is kept:
// another tool, such as Nsight Systems, may own the ranges).
void route_nvtx_to_cupti() {
    if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) != 0 && info.dli_fname != nullptr) {
        setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
    }
}

class CuptiActivityCollector final : public engine::GpuActivityCollector {
public:
    CuptiActivityCollector(TraceSink& sink, engine::GpuActivityOptions options);
    ~CuptiActivityCollector() override;
    CuptiActivityCollector(const CuptiActivityCollector&) = delete;
    CuptiActivityCollector& operator=(const CuptiActivityCollector&) = delete;
    void start() override;
    void stop() override;
    [[nodiscard]] std::int64_t dropped_records() const override;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace

struct CuptiActivityCollector::Impl {
    TraceSink& sink;
    engine::GpuActivityOptions options;
    bool running = false;
    std::mutex mutex;
    GpuActivity activity;
    std::unordered_map<std::uint64_t, MarkerStart> open_markers;  // by marker id
    std::atomic<std::int64_t> dropped{0};

    Impl(TraceSink& s, engine::GpuActivityOptions o) : sink(s), options(std::move(o)) {}

    // CUPTI's callbacks are global: one collector may be active per process.
    static std::atomic<Impl*> active;

    static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
        Impl* self = active.load();
        const std::size_t bytes = self ? self->options.buffer_bytes : (std::size_t{1} << 20);
        *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlign, bytes));
        *size = *buffer ? bytes : 0;
        *max_records = 0;  // as many as fit
    }

    static void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                                          std::size_t valid) {
        Impl* self = active.load();
        if (self && buffer) self->parse(buffer, valid);
        std::free(buffer);
    }

    void parse(std::uint8_t* buffer, std::size_t valid) {
        std::lock_guard lock(mutex);
        CUpti_Activity* rec = nullptr;
        while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
            switch (rec->kind) {
                case CUPTI_ACTIVITY_KIND_KERNEL:
                case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
                    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
                    const std::string name = k->name ? k->name : "kernel";
                    activity.device.push_back({k->deviceId, k->streamId, event_kind_of_kernel(name), name,
                                               static_cast<std::int64_t>(k->start),
                                               static_cast<std::int64_t>(k->end), 0, k->correlationId});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_MEMCPY: {
                    const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
                    activity.device.push_back({m->deviceId, m->streamId, EventKind::Memcpy,
                                               std::string("Memcpy ") + memcpy_kind(m->copyKind),
                                               static_cast<std::int64_t>(m->start), static_cast<std::int64_t>(m->end),
                                               static_cast<std::int64_t>(m->bytes), m->correlationId});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_MEMSET: {
                    const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
                    activity.device.push_back({m->deviceId, m->streamId, EventKind::Memset, "Memset",
                                               static_cast<std::int64_t>(m->start), static_cast<std::int64_t>(m->end),
                                               static_cast<std::int64_t>(m->bytes), m->correlationId});
                    break;
                }
                // Runtime and driver calls share one record; NCCL launches its kernels
                // through the driver (cuLaunchKernelEx), so a kernel's launch may be either.
                case CUPTI_ACTIVITY_KIND_RUNTIME:
                case CUPTI_ACTIVITY_KIND_DRIVER: {
                    const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
                    activity.launches.push_back({a->threadId, a->correlationId, static_cast<std::int64_t>(a->start),
                                                 static_cast<std::int64_t>(a->end)});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_MARKER: {
                    const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(rec);
                    const auto t = static_cast<std::int64_t>(m->timestamp);
                    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
                        open_markers[m->id] = {m->objectId.pt.threadId, t, m->name ? m->name : "range"};
                    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
                        auto it = open_markers.find(m->id);
                        if (it != open_markers.end()) {
                            activity.ranges.push_back({it->second.thread, it->second.start_ns, t, it->second.name});
                            open_markers.erase(it);
                        }
                    }
                    break;
                }
                default: break;
            }
        }
        std::size_t n = 0;
        if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &n) == CUPTI_SUCCESS) dropped += static_cast<std::int64_t>(n);
    }

    static const char* memcpy_kind(std::uint8_t k) {
        switch (k) {
            case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
            case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
            case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
            case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
            case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
            default: return "other";
        }
    }

    void write_all() {
        std::lock_guard lock(mutex);
        write_gpu_activity(activity, sink, options.rank_of_device, options.rank);
        activity = {};
        open_markers.clear();
    }
};

std::atomic<CuptiActivityCollector::Impl*> CuptiActivityCollector::Impl::active{nullptr};

CuptiActivityCollector::CuptiActivityCollector(TraceSink& sink, engine::GpuActivityOptions options)
    : impl_(std::make_unique<Impl>(sink, std::move(options))) {}

CuptiActivityCollector::~CuptiActivityCollector() {
    try {
        stop();
    } catch (...) {
        // Nothing sensible to do in a destructor; stop() is where errors are reported.
    }
}

void CuptiActivityCollector::start() {
    if (impl_->running) return;
    std::string why;
    if (!available_impl(&why)) throw RuntimeError("GPU profiling unavailable: " + why);
    Impl* expected = nullptr;
    if (!Impl::active.compare_exchange_strong(expected, impl_.get())) {
        throw RuntimeError("another CUPTI collector is already running in this process");
    }
    if (impl_->options.nvtx) route_nvtx_to_cupti();
    try {
        check(cuptiActivityRegisterCallbacks(&Impl::buffer_requested, &Impl::buffer_completed),
              "cuptiActivityRegisterCallbacks");
        check(cuptiActivityRegisterTimestampCallback(&host_timestamp), "cuptiActivityRegisterTimestampCallback");
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enabling kernels");
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enabling memcpy");
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enabling memset");
        if (impl_->options.runtime_api) {
            check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "enabling runtime");
            check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "enabling driver");
        }
        if (impl_->options.nvtx) check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER), "enabling NVTX markers");
    } catch (...) {
        Impl::active.store(nullptr);
        throw;
    }
    impl_->running = true;
}

void CuptiActivityCollector::stop() {
    if (!impl_->running) return;
    impl_->running = false;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                      CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MARKER}) {
        cuptiActivityDisable(kind);
    }
    Impl::active.store(nullptr);
    impl_->write_all();
}

std::int64_t CuptiActivityCollector::dropped_records() const { return impl_->dropped.load(); }

bool cupti_available(std::string* why) { return available_impl(why); }

std::unique_ptr<engine::GpuActivityCollector> make_cupti_collector(TraceSink& sink,
                                                                 const engine::GpuActivityOptions& options) {
    return std::make_unique<CuptiActivityCollector>(sink, options);
}

}  // namespace meshwork::profiler
