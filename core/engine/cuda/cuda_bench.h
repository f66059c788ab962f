// GEMM timing on one GPU for bench/bench_gpu_gemm.cpp and bench/gpu-check.sh: what the
// engine's GEMMs reach against the GPU's dense peak. C++20-safe, no CUDA headers.
#pragma once

#include "core/engine/cuda/cuda_runtime_probe.h"

namespace meshwork::engine {

struct GemmTiming {
    double seconds_per_gemm = 0;
    double tflops = 0;  // 2·m·n·k / time
};

// bf16 A, B and C, fp32 accumulation (the training precision's GEMM), row-major, no
// transposes, normal random data; `iterations` timed after as many warm-up runs.
GemmTiming cuda_time_bf16_gemm(int device, int m, int n, int k, int iterations);

// Backend::gemm as the model calls it (fp32 storage) in the given mode.
GemmTiming cuda_time_f32_gemm(int device, CudaGemmMode mode, int m, int n, int k, int iterations);

}  // namespace meshwork::engine
