// What non-CUDA code (the CLI, the GUI, benchmarks) may know of the CUDA backend: whether
// GPUs are usable, and a factory. C++20-safe and free of CUDA headers. Compiled only when the
// build has CUDA (MESHWORK_HAVE_CUDA is then defined on meshwork_core), so callers guard
// their use with `#if MESHWORK_HAVE_CUDA`.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "engine/backend.h"

namespace meshwork::engine {

// How Backend::gemm (fp32 in and out) computes on the GPU.
enum class CudaGemmMode {
    Fp32,  // exact fp32 (CUBLAS_COMPUTE_32F): the mode the GPU tests compare with the CPU in
    Tf32,  // fp32 storage, TF32 tensor cores (default)
    Bf16,  // inputs rounded to bf16, fp32 accumulation and output: bf16 tensor-core rates
};

struct CudaBackendOptions {
    CudaGemmMode gemm = CudaGemmMode::Tf32;
    std::size_t gemm_workspace_bytes = std::size_t{32} << 20;  // cuBLASLt's split-K scratch
    // This rank's peak memory as the engine predicts it (engine/memory_estimate.h), quoted
    // beside the measured figures in an out-of-memory message; 0 when not known.
    std::size_t predicted_peak_bytes = 0;
};

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
