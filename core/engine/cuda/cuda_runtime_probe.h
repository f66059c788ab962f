// Inside the CUDA plugin (libmeshwork_cuda.so) and the GPU tests and benchmarks that link
// its code directly: whether GPUs are usable, and the backend factory. C++20-safe and free
// of CUDA headers. The rest of the program reaches these through engine/cuda_plugin.h.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/engine/backend.h"
#include "core/engine/cuda_plugin.h"

namespace meshwork::engine {

// The defaults, with MESHWORK_CUDA_GEMM=fp32|tf32|bf16 from the environment applied.
[[nodiscard]] CudaBackendOptions cuda_options_from_env();

// Usable GPUs of this process; 0 with `why` set to one clear line when there are none
// (no driver, a driver older than the runtime, no device).
[[nodiscard]] int cuda_device_count(std::string* why);

// Empty when this process can use `gpus_needed` GPUs, else the line to print before exiting
// with code 2 (nothing has been allocated on any GPU).
[[nodiscard]] std::string cuda_unavailable_reason(int gpus_needed);

// "NVIDIA H200 (cc 9.0, 140 GiB, 132 SMs), driver 13.0, runtime 13.0".
[[nodiscard]] std::string cuda_device_summary(int device);

// The CUDA backend on GPU `device`; throws RuntimeError when it cannot be used.
[[nodiscard]] std::unique_ptr<Backend> make_cuda_backend(
    int device, const CudaBackendOptions& options = cuda_options_from_env());

}  // namespace meshwork::engine
