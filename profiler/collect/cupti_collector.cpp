#include "collect/cupti_collector.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "analysis/event_classify.h"
#include "analysis/range_context.h"
#include "collect/cpu_collector.h"
#include "common/error.h"

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

struct DeviceRecord {
    std::uint32_t device, stream;
    EventKind kind;
    std::string name;
    std::int64_t start_ns, end_ns, bytes;
    std::uint32_t correlation;
};

struct ApiRecord {
    std::uint32_t thread, correlation;
    std::int64_t start_ns, end_ns;
};

struct MarkerStart {
    std::uint32_t thread;
    std::int64_t start_ns;
    std::string name;
};

struct MarkerRange {
    std::uint32_t thread;
    std::int64_t start_ns, end_ns;
    std::string name;
};

}  // namespace

struct CuptiCollector::Impl {
    TraceSink& sink;
    int rank;
    CuptiOptions options;
    bool running = false;
    std::mutex mutex;
    std::vector<DeviceRecord> device;
    std::vector<ApiRecord> api;
    std::unordered_map<std::uint32_t, MarkerStart> open_markers;
    std::vector<MarkerRange> markers;
    std::atomic<std::int64_t> dropped{0};

    Impl(TraceSink& s, int r, CuptiOptions o) : sink(s), rank(r), options(o) {}

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
                    device.push_back({k->deviceId, k->streamId, event_kind_of_kernel(name), name,
                                      static_cast<std::int64_t>(k->start), static_cast<std::int64_t>(k->end), 0,
                                      k->correlationId});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_MEMCPY: {
                    const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
                    device.push_back({m->deviceId, m->streamId, EventKind::Memcpy,
                                      std::string("Memcpy ") + memcpy_kind(m->copyKind),
                                      static_cast<std::int64_t>(m->start), static_cast<std::int64_t>(m->end),
                                      static_cast<std::int64_t>(m->bytes), m->correlationId});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_MEMSET: {
                    const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
                    device.push_back({m->deviceId, m->streamId, EventKind::Memset, "Memset",
                                      static_cast<std::int64_t>(m->start), static_cast<std::int64_t>(m->end),
                                      static_cast<std::int64_t>(m->bytes), m->correlationId});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_RUNTIME: {
                    const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
                    api.push_back({a->threadId, a->correlationId, static_cast<std::int64_t>(a->start),
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
                            markers.push_back({it->second.thread, it->second.start_ns, t, it->second.name});
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
        RangeContextMap ctx;
        for (const auto& m : markers) ctx.add_range(m.thread, m.start_ns, m.end_ns, m.name);
        ctx.finalize();
        std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::int64_t>> launch;
        for (const auto& a : api) launch[a.correlation] = {a.thread, a.start_ns};
        std::map<std::pair<std::uint32_t, std::uint32_t>, bool> streams;
        for (const auto& d : device) {
            bool& comm = streams[{d.device, d.stream}];
            comm = comm || d.kind == EventKind::Communication;
        }
        std::map<std::pair<std::uint32_t, std::uint32_t>, int> track;
        int comm_index = 0, compute_index = 0;
        for (const auto& [key, comm] : streams) {
            track[key] = sink.add_track({rank, comm ? TrackKind::CommStream : TrackKind::ComputeStream,
                                         comm ? comm_index++ : compute_index++,
                                         "gpu " + std::to_string(key.first) + " stream " + std::to_string(key.second)});
        }
        for (const auto& d : device) sink.add_event(device_event(d, rank, track[{d.device, d.stream}], launch, ctx));
        std::map<std::uint32_t, int> host;
        for (const auto& m : markers) {
            auto it = host.find(m.thread);
            if (it == host.end()) {
                it = host.emplace(m.thread, sink.add_track({rank, TrackKind::Host, static_cast<int>(host.size()),
                                                            "host thread " + std::to_string(m.thread)}))
                         .first;
            }
            TraceEvent e;
            e.rank = rank;
            e.track = it->second;
            e.kind = EventKind::Marker;
            e.name = m.name;
            e.start_ns = m.start_ns;
            e.end_ns = m.end_ns;
            const RangeContext c = ctx.lookup(m.thread, m.start_ns);
            e.step = c.step;
            e.micro_batch = c.micro_batch;
            e.layer = c.layer;
            sink.add_event(e);
        }
        device.clear();
        api.clear();
        markers.clear();
    }
};

std::atomic<CuptiCollector::Impl*> CuptiCollector::Impl::active{nullptr};

CuptiCollector::CuptiCollector(TraceSink& sink, int rank, CuptiOptions options)
    : impl_(std::make_unique<Impl>(sink, rank, options)) {}

CuptiCollector::~CuptiCollector() {
    try {
        stop();
    } catch (...) {
        // Nothing sensible to do in a destructor; stop() is where errors are reported.
    }
}

bool CuptiCollector::available(std::string* why) {
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
        if (why) *why = std::string("no GPU: ") + cudaGetErrorString(rc);
        return false;
    }
    if (count == 0) {
        if (why) *why = "no GPU: no CUDA device is visible";
        return false;
    }
    return true;
}

void CuptiCollector::start() {
    if (impl_->running) return;
    std::string why;
    if (!available(&why)) throw RuntimeError("GPU profiling unavailable: " + why);
    Impl* expected = nullptr;
    if (!Impl::active.compare_exchange_strong(expected, impl_.get())) {
        throw RuntimeError("another CUPTI collector is already running in this process");
    }
    try {
        check(cuptiActivityRegisterCallbacks(&Impl::buffer_requested, &Impl::buffer_completed),
              "cuptiActivityRegisterCallbacks");
        check(cuptiActivityRegisterTimestampCallback(&host_timestamp), "cuptiActivityRegisterTimestampCallback");
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enabling kernels");
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enabling memcpy");
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enabling memset");
        if (impl_->options.runtime_api) check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "enabling runtime");
        if (impl_->options.nvtx) check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER), "enabling NVTX markers");
    } catch (...) {
        Impl::active.store(nullptr);
        throw;
    }
    impl_->running = true;
}

void CuptiCollector::stop() {
    if (!impl_->running) return;
    impl_->running = false;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                      CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_MARKER}) {
        cuptiActivityDisable(kind);
    }
    Impl::active.store(nullptr);
    impl_->write_all();
}

std::int64_t CuptiCollector::dropped_records() const { return impl_->dropped.load(); }

}  // namespace meshwork::profiler
