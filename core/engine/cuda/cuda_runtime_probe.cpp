// GPU availability and the backend factory (cuda_runtime_probe.h).
#include "core/engine/cuda/cuda_runtime_probe.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string_view>

#include "core/common/error.h"
#include "core/engine/cuda/cuda_backend.h"

namespace meshwork::engine {

namespace {
std::string version_text(int v) {  // 13000 → "13.0"
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
}  // namespace

CudaBackendOptions cuda_options_from_env() {
    CudaBackendOptions o;
    if (const char* mode = std::getenv("MESHWORK_CUDA_GEMM")) {
        const std::string_view m(mode);
        if (m == "fp32") {
            o.gemm = CudaGemmMode::Fp32;
        } else if (m == "tf32") {
            o.gemm = CudaGemmMode::Tf32;
        } else if (m == "bf16") {
            o.gemm = CudaGemmMode::Bf16;
        } else {
            throw InputError("<environment>", "MESHWORK_CUDA_GEMM",
                             "'" + std::string(m) + "' is not one of fp32, tf32, bf16");
        }
    }
    return o;
}

int cuda_device_count(std::string* why) {
    int count = 0;
    const cudaError_t st = cudaGetDeviceCount(&count);
    if (st == cudaSuccess && count > 0) return count;
    (void)cudaGetLastError();
    if (why != nullptr) {
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        if (st == cudaErrorInsufficientDriver && driver == 0) {
            *why = "no GPU: no NVIDIA driver is loaded on this machine (CUDA runtime " +
                   version_text(runtime) + ")";
        } else if (st == cudaErrorInsufficientDriver) {
            *why = "GPU driver too old: it supports CUDA " + version_text(driver) +
                   ", this build needs CUDA " + version_text(runtime);
        } else if (st == cudaErrorNoDevice || (st == cudaSuccess && count == 0)) {
            *why = "no GPU: the NVIDIA driver sees no device (CUDA_VISIBLE_DEVICES='" +
                   std::string(std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "") +
                   "')";
        } else {
            *why = std::string("no usable GPU: cudaGetDeviceCount failed: ") +
                   cudaGetErrorName(st) + " (" + cudaGetErrorString(st) + ")";
        }
    }
    return 0;
}

std::string cuda_unavailable_reason(int gpus_needed) {
    std::string why;
    const int count = cuda_device_count(&why);
    if (count == 0) return why;
    if (count < gpus_needed) {
        return "too few GPUs for the layout: it needs " + std::to_string(gpus_needed) +
               " in this process, " + std::to_string(count) + " are visible";
    }
    return {};
}

std::string cuda_device_summary(int device) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return "cuda:" + std::to_string(device) + " (unavailable)";
    }
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    return std::string(p.name) + " (cc " + std::to_string(p.major) + "." +
           std::to_string(p.minor) + ", " + std::to_string(p.totalGlobalMem >> 30) + " GiB, " +
           std::to_string(p.multiProcessorCount) + " SMs), driver " + version_text(driver) +
           ", runtime " + version_text(runtime);
}

std::unique_ptr<Backend> make_cuda_backend(int device, const CudaBackendOptions& options) {
    std::string why;
    if (cuda_device_count(&why) == 0) throw RuntimeError(why);
    return std::make_unique<CudaBackend>(device, options);
}

}  // namespace meshwork::engine
