// CUDA and cuBLAS status codes → RuntimeError naming the device and the operation. Only for
// the CUDA backend's own sources (this header includes the CUDA runtime's).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

namespace meshwork::engine::cuda_detail {

[[noreturn]] void throw_cuda(cudaError_t status, const char* what, int device);
[[noreturn]] void throw_cublas(cublasStatus_t status, const char* what, int device);

inline void check_cuda(cudaError_t status, const char* what, int device) {
    if (status != cudaSuccess) throw_cuda(status, what, device);
}
inline void check_cublas(cublasStatus_t status, const char* what, int device) {
    if (status != CUBLAS_STATUS_SUCCESS) throw_cublas(status, what, device);
}

}  // namespace meshwork::engine::cuda_detail
