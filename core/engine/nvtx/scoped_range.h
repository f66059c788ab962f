// A named range for the length of a scope, on any backend (Backend::push_range): NVTX on
// the CUDA backend, nothing on the CPU one. The names are a contract with the profiler,
// which maps kernels to (step, micro-batch, layer) by them: use the helpers.
#pragma once

#include <string>

#include "core/engine/backend.h"

namespace meshwork::engine {

class ScopedRange {
public:
    ScopedRange(Backend& backend, const std::string& name) : backend_(backend) {
        backend_.push_range(name);
    }
    ~ScopedRange() { backend_.pop_range(); }
    ScopedRange(const ScopedRange&) = delete;
    ScopedRange& operator=(const ScopedRange&) = delete;

private:
    Backend& backend_;
};

namespace range_name {
inline std::string step(int step) { return "step " + std::to_string(step); }
inline std::string micro_batch(int mb) { return "mb " + std::to_string(mb); }
// pass: "fwd", "bwd", "recompute"
inline std::string layer(int layer, const char* pass) {
    return "layer " + std::to_string(layer) + " " + pass;
}
inline std::string optimizer() { return "optimizer"; }
// Around one collective or point-to-point op, e.g. "all_reduce(tp) bytes=4096 group=4": the
// communication kernels launched inside take the payload and the group size from it.
inline std::string collective(const std::string& op, std::size_t bytes, int group_size) {
    return op + " bytes=" + std::to_string(bytes) + " group=" + std::to_string(group_size);
}
}  // namespace range_name

}  // namespace meshwork::engine
