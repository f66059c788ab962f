// NVTX ranges in Meshwork's own domain ("meshwork"), for the CUDA side only: Nsight Systems
// and the CUPTI collector see them around the kernels they enclose. Names follow
// scoped_range.h ("step 3", "mb 2", "layer 5 fwd") so the profiler maps kernels to
// (step, micro-batch, layer). Header-only NVTX3 behind these two calls: no NVTX header
// reaches non-CUDA code.
#pragma once

#include <string>

namespace meshwork::engine::nvtx {

void push(const std::string& name);
void pop();

}  // namespace meshwork::engine::nvtx
