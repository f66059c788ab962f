#include "core/engine/cuda/cuda_allocator.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/engine/cuda/cuda_check.h"

namespace meshwork::engine::cuda_detail {

namespace {
constexpr std::size_t kSmallLimitBytes = 1u << 20;
constexpr std::size_t kSmallRoundBytes = 512;
constexpr std::size_t kLargeRoundBytes = 2u << 20;

std::string mib(std::size_t bytes) {
    return std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) + " MiB)";
}
}  // namespace

std::size_t CachingAllocator::rounded(std::size_t bytes) {
    const std::size_t unit = bytes < kSmallLimitBytes ? kSmallRoundBytes : kLargeRoundBytes;
    return (bytes + unit - 1) / unit * unit;
}

CachingAllocator::~CachingAllocator() {
    // Teardown: the device is synchronised by the backend first, so every event is complete.
    for (auto& p : parked_) {
        for (cudaEvent_t e : p.events) cudaEventDestroy(e);
        cudaFree(p.ptr);
    }
    for (auto& [size, ptr] : free_) cudaFree(ptr);
    for (auto& [ptr, sizes] : live_) cudaFree(ptr);
    for (cudaEvent_t e : spare_events_) cudaEventDestroy(e);
}

cudaEvent_t CachingAllocator::new_event() {
    if (!spare_events_.empty()) {
        cudaEvent_t e = spare_events_.back();
        spare_events_.pop_back();
        return e;
    }
    cudaEvent_t e = nullptr;
    check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate (allocator)",
               device_);
    return e;
}

void CachingAllocator::reap_parked(bool wait) {
    for (auto it = parked_.begin(); it != parked_.end();) {
        bool done = true;
        for (cudaEvent_t e : it->events) {
            const cudaError_t st = wait ? cudaEventSynchronize(e) : cudaEventQuery(e);
            if (st == cudaErrorNotReady) {
                done = false;
                break;
            }
            if (st != cudaSuccess) check_cuda(st, "cudaEventQuery (allocator)", device_);
        }
        if (!done) {
            // Blocks are parked in order on the same streams: later ones are not done either.
            if (!wait) break;
            ++it;
            continue;
        }
        for (cudaEvent_t e : it->events) spare_events_.push_back(e);
        free_.emplace(it->size, it->ptr);
        it = parked_.erase(it);
    }
}

void* CachingAllocator::take_cached(std::size_t size, std::size_t* block) {
    auto it = free_.lower_bound(size);
    // Do not spend a block more than twice the request on it: large blocks stay for large
    // requests.
    if (it == free_.end() || it->first > 2 * size) return nullptr;
    void* p = it->second;
    *block = it->first;
    free_.erase(it);
    return p;
}

void* CachingAllocator::allocate(std::size_t bytes, const std::string& context) {
    if (bytes == 0) return nullptr;
    const std::size_t size = rounded(bytes);
    reap_parked(false);
    std::size_t block = size;
    void* p = take_cached(size, &block);
    if (p == nullptr) {
        cudaError_t st = cudaMalloc(&p, size);
        if (st == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            reap_parked(true);
            release_cached();
            st = cudaMalloc(&p, size);
        }
        if (st == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            std::size_t free_b = 0, total_b = 0;
            cudaMemGetInfo(&free_b, &total_b);
            throw RuntimeError("cuda:" + std::to_string(device_) + ": out of device memory in " +
                               (context.empty() ? std::string("allocate") : context) +
                               ": requested " + mib(bytes) + ", in use " + mib(in_use_) +
                               ", peak " + mib(peak_) +
                               (predicted_peak_ > 0 ? " (predicted peak " + mib(predicted_peak_) + ")" : std::string()) +
                               ", device free " + mib(free_b) + " of " + mib(total_b));
        }
        check_cuda(st, "cudaMalloc", device_);
        reserved_ += size;
        ++mallocs_;
    }
    live_[p] = {block, bytes};
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
    return p;
}

void CachingAllocator::deallocate(void* ptr, const std::vector<cudaStream_t>& streams) {
    if (ptr == nullptr) return;
    const auto it = live_.find(ptr);
    if (it == live_.end()) {
        throw RuntimeError("cuda:" + std::to_string(device_) +
                           ": deallocate of an address this backend did not allocate");
    }
    const auto [block, asked] = it->second;
    live_.erase(it);
    in_use_ -= asked;
    Parked parked{ptr, block, {}};
    parked.events.reserve(streams.size());
    for (cudaStream_t s : streams) {
        cudaEvent_t e = new_event();
        check_cuda(cudaEventRecord(e, s), "cudaEventRecord (allocator)", device_);
        parked.events.push_back(e);
    }
    parked_.push_back(std::move(parked));
}

void CachingAllocator::release_cached() {
    for (auto& [size, ptr] : free_) {
        cudaFree(ptr);
        reserved_ -= size;
    }
    free_.clear();
}

}  // namespace meshwork::engine::cuda_detail
