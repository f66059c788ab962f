// GEMM rate on one GPU against its dense peak (bench/gpu-check.sh runs it; results in
// docs/BENCHMARKS.md, "GPU"). Plain main, one line per case:
//   gemm bf16 8192x8192x8192 time_s 0.00135 tflops 812.3 peak_tflops 989.4 fraction 0.821
// Usage: bench_gpu_gemm [--gpu KIND] [--size N]... [--info]   (KIND: a resources/gpus
// preset; by default picked from the device name; --info prints the device and stops).
// Without a GPU it prints why and exits 0 ("skipped: ...").
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/cluster/cluster_spec.h"

#include "core/engine/cuda/cuda_bench.h"

namespace {

// The resources/gpus preset for a device name, empty when unknown.
std::string kind_for(const std::string& device) {
    if (device.find("H200") != std::string::npos) return "h200";
    if (device.find("H100") != std::string::npos) return "h100-sxm";
    if (device.find("B200") != std::string::npos) return "b200";
    if (device.find("A100") != std::string::npos) {
        return device.find("40GB") != std::string::npos ? "a100-40gb" : "a100-80gb";
    }
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    using namespace meshwork;
    using namespace meshwork::engine;
    std::string kind;
    std::vector<int> sizes;
    bool info_only = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--info") == 0) {
            info_only = true;
            continue;
        }
        if (std::strcmp(argv[i], "--gpu") == 0 && i + 1 < argc) {
            kind = argv[++i];
        } else if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            sizes.push_back(std::stoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: bench_gpu_gemm [--gpu KIND] [--size N]... [--info]\n");
            return 2;
        }
    }
    if (sizes.empty()) sizes = {4096, 8192};
    std::string why;
    if (cuda_device_count(&why) == 0) {
        std::printf("skipped: %s\n", why.c_str());
        return 0;
    }
    const std::string device = cuda_device_summary(0);
    if (kind.empty()) kind = kind_for(device);
    double peak_bf16 = 0, peak_tf32 = 0, peak_fp32 = 0;
    if (!kind.empty()) {
        const GpuKind gpu = load_gpu(kind, "<flags>", "--gpu");
        peak_bf16 = gpu.peak_flops(DType::Bf16) * 1e-12;
        peak_tf32 = gpu.peak_flops(DType::Tf32) * 1e-12;
        peak_fp32 = gpu.peak_flops(DType::Fp32) * 1e-12;
    }
    std::printf("device %s\ngpu_kind %s\n", device.c_str(), kind.empty() ? "unknown" : kind.c_str());
    if (info_only) return 0;
    auto line = [](const char* what, int n, const GemmTiming& t, double peak) {
        std::printf("gemm %s %dx%dx%d time_s %.6f tflops %.1f peak_tflops %.1f fraction %.3f\n",
                    what, n, n, n, t.seconds_per_gemm, t.tflops, peak,
                    peak > 0 ? t.tflops / peak : 0.0);
    };
    for (int n : sizes) {
        const int iterations = n >= 8192 ? 20 : 50;
        line("bf16", n, cuda_time_bf16_gemm(0, n, n, n, iterations), peak_bf16);
        // What Backend::gemm gives the fp32 model in each mode.
        line("f32-as-bf16", n, cuda_time_f32_gemm(0, CudaGemmMode::Bf16, n, n, n, iterations / 2),
             peak_bf16);
        line("tf32", n, cuda_time_f32_gemm(0, CudaGemmMode::Tf32, n, n, n, iterations / 2), peak_tf32);
        if (n <= 4096) line("fp32", n, cuda_time_f32_gemm(0, CudaGemmMode::Fp32, n, n, n, 5), peak_fp32);
    }
    return 0;
}
