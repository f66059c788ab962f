// Caching device allocator of one GPU: cudaMalloc only when no cached block fits, so the
// training loop (which allocates and frees the same shapes every micro-batch) stops calling
// the driver after its first step.
//
// Stream safety without a stream argument: Backend::deallocate does not say which streams
// still use the buffer, so a freed block is parked with one event per stream of the backend
// and becomes reusable only when all of them completed (the work enqueued before the free
// is done everywhere). Blocks are rounded (512 B below 1 MiB, 2 MiB above) and never split;
// a cached block is reused for requests from half its size up.
//
// Out of memory: wait for parked blocks, release every cached block, retry once, then throw
// RuntimeError with the requested bytes, the bytes in use, the peak and the device's free
// and total memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace meshwork::engine::cuda_detail {

class CachingAllocator {
public:
    // `predicted_peak_bytes` (0: unknown) is quoted in the out-of-memory message.
    CachingAllocator(int device, std::size_t predicted_peak_bytes)
        : device_(device), predicted_peak_(predicted_peak_bytes) {}
    ~CachingAllocator();
    CachingAllocator(const CachingAllocator&) = delete;
    CachingAllocator& operator=(const CachingAllocator&) = delete;

    // `context` names what was running (the innermost range) for the out-of-memory message.
    void* allocate(std::size_t bytes, const std::string& context);
    // `streams`: every stream that may still use the block.
    void deallocate(void* ptr, const std::vector<cudaStream_t>& streams);
    // Returns every cached (free) block to the driver.
    void release_cached();

    [[nodiscard]] std::size_t bytes_in_use() const { return in_use_; }        // as requested
    [[nodiscard]] std::size_t peak_bytes_in_use() const { return peak_; }
    [[nodiscard]] std::size_t bytes_reserved() const { return reserved_; }    // from the driver
    [[nodiscard]] std::size_t driver_allocations() const { return mallocs_; }  // cudaMalloc calls

    static std::size_t rounded(std::size_t bytes);

private:
    struct Parked {
        void* ptr;
        std::size_t size;
        std::vector<cudaEvent_t> events;
    };
    void* take_cached(std::size_t size, std::size_t* block);
    void reap_parked(bool wait);
    cudaEvent_t new_event();

    int device_;
    std::size_t predicted_peak_ = 0;
    std::multimap<std::size_t, void*> free_;                  // rounded size → block
    std::unordered_map<void*, std::pair<std::size_t, std::size_t>> live_;  // → rounded, asked
    std::deque<Parked> parked_;
    std::vector<cudaEvent_t> spare_events_;
    std::size_t in_use_ = 0, peak_ = 0, reserved_ = 0, mallocs_ = 0;
};

}  // namespace meshwork::engine::cuda_detail
