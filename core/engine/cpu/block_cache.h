// Freed host buffers kept by size and handed back to the next allocation of the same size,
// as PyTorch's CUDA caching allocator keeps device memory (it never returns a freed block to
// the driver during training). Why the CPU backend needs it: a rank's activations are a few
// hundred KiB each and freed every micro-batch; glibc returns such blocks to the kernel
// (mmap above its threshold, heap trimming below it), so every reuse page-faults them back in
// and every free unmaps them (a TLB shootdown across the process's rank threads). That cost
// grows with the buffers' size and appears only above the thresholds, so a CPU run's
// per-op overheads were not the same at two workload sizes and calibration on one size did
// not transfer (issue 28, pattern 6; docs/BENCHMARKS.md, "Calibration across sizes").
#pragma once

#include <cstddef>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace meshwork::engine {

class BlockCache {
public:
    explicit BlockCache(std::size_t alignment) : alignment_(alignment) {}
    ~BlockCache() {
        for (auto& [bytes, blocks] : free_)
            for (void* p : blocks) ::operator delete(p, std::align_val_t(alignment_));
    }
    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;

    // A block of exactly `bytes`: a cached one, else a new one (nullptr when out of memory).
    void* take(std::size_t bytes) {
        {
            const std::lock_guard lock(mutex_);
            auto it = free_.find(bytes);
            if (it != free_.end() && !it->second.empty()) {
                void* p = it->second.back();
                it->second.pop_back();
                cached_bytes_ -= bytes;
                return p;
            }
        }
        return ::operator new(bytes, std::align_val_t(alignment_), std::nothrow);
    }
    // Keeps `p` (a block of `bytes` from take) for the next take of that size.
    void give(void* p, std::size_t bytes) {
        const std::lock_guard lock(mutex_);
        free_[bytes].push_back(p);
        cached_bytes_ += bytes;
    }
    [[nodiscard]] std::size_t cached_bytes() const {
        const std::lock_guard lock(mutex_);
        return cached_bytes_;
    }

private:
    std::size_t alignment_;
    mutable std::mutex mutex_;
    std::unordered_map<std::size_t, std::vector<void*>> free_;
    std::size_t cached_bytes_ = 0;
};

}  // namespace meshwork::engine
