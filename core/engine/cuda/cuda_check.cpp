#include "core/engine/cuda/cuda_check.h"

#include <string>

#include "core/common/error.h"

namespace meshwork::engine::cuda_detail {

void throw_cuda(cudaError_t status, const char* what, int device) {
    // Clear the sticky "last error" so that a caller that catches can go on.
    (void)cudaGetLastError();
    throw RuntimeError("cuda:" + std::to_string(device) + ": " + what + " failed: " +
                       cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

void throw_cublas(cublasStatus_t status, const char* what, int device) {
    throw RuntimeError("cuda:" + std::to_string(device) + ": " + what + " failed: " +
                       cublasLtGetStatusName(status) + " (" + cublasLtGetStatusString(status) +
                       ")");
}

}  // namespace meshwork::engine::cuda_detail
