// Row-major GEMMs through cuBLASLt for the CUDA backend.
//
// cuBLASLt is column-major: a row-major m×n C is a column-major n×m Cᵀ, and
// Cᵀ = op(B)ᵀ·op(A)ᵀ, so every call passes B first with the dimensions swapped and no copy.
// Descriptors and the heuristic's algorithm are cached per shape (the model repeats a
// handful of shapes every layer), so the hot path is one cublasLtMatmul.
//
// Precisions (fp32 in and out on the Backend interface):
//   Fp32 — CUBLAS_COMPUTE_32F, the reference path (tests against the CPU backend);
//   Tf32 — CUBLAS_COMPUTE_32F_FAST_TF32, fp32 storage, TF32 tensor cores (default);
//   Bf16 — A and B are rounded to bf16 in scratch buffers, fp32 accumulation and output.
// gemm_bf16() is the pure bf16 path (bf16 A, B, C; fp32 accumulation) for benchmarks.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>

namespace meshwork::engine::cuda_detail {

enum class GemmPrecision { Fp32, Tf32, Bf16 };

class LtGemm {
public:
    // `scratch(bytes, slot, stream)` returns device memory for operands of a GEMM on
    // `stream`, valid until the next GEMM on that stream (the backend's allocator behind it).
    using Scratch = std::function<void*(std::size_t bytes, int slot, cudaStream_t stream)>;
    LtGemm(int device, void* workspace, std::size_t workspace_bytes, Scratch scratch);
    ~LtGemm();
    LtGemm(const LtGemm&) = delete;
    LtGemm& operator=(const LtGemm&) = delete;

    // C = alpha·op(A)·op(B) + beta·C, row-major, op(A) m×k, op(B) k×n, fp32 storage.
    void gemm_f32(GemmPrecision precision, bool ta, bool tb, int m, int n, int k, float alpha,
                  const float* a, int lda, const float* b, int ldb, float beta, float* c,
                  int ldc, cudaStream_t stream);
    // The same with bf16 (raw 16-bit) A, B and C; fp32 accumulation and alpha/beta.
    void gemm_bf16(bool ta, bool tb, int m, int n, int k, float alpha, const std::uint16_t* a,
                   int lda, const std::uint16_t* b, int ldb, float beta, std::uint16_t* c,
                   int ldc, cudaStream_t stream);

private:
    // (compute type, A/B type, C type, ta, tb, m, n, k, lda, ldb, ldc, pointer alignment)
    using Key = std::tuple<int, int, int, bool, bool, int, int, int, int, int, int, int>;
    struct Plan {
        cublasLtMatmulDesc_t op = nullptr;
        cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
        cublasLtMatmulAlgo_t algo{};
    };
    const Plan& plan(cublasComputeType_t compute, cudaDataType_t ab, cudaDataType_t cd, bool ta,
                     bool tb, int m, int n, int k, int lda, int ldb, int ldc, int align_bytes);
    void run(const Plan& p, float alpha, const void* a, const void* b, float beta, void* c,
             cudaStream_t stream);

    int device_;
    cublasLtHandle_t handle_ = nullptr;
    void* workspace_;
    std::size_t workspace_bytes_;
    Scratch scratch_;
    std::map<Key, Plan> plans_;
};

}  // namespace meshwork::engine::cuda_detail
