#include "core/engine/cuda/cuda_gemm.h"

#include <cstdint>
#include <string>

#include "core/common/error.h"
#include "core/engine/cuda/cuda_check.h"
#include "core/engine/cuda/kernels/kernels.h"

namespace meshwork::engine::cuda_detail {

namespace {

// The largest power of two (≤ 256, cuBLASLt's default assumption) that divides every address:
// the model passes slices (one head, one expert) whose starts are only float-aligned.
int common_alignment(const void* a, const void* b, const void* c) {
    const auto bits = reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) |
                      reinterpret_cast<std::uintptr_t>(c);
    int align = 256;
    while (align > 1 && (bits % static_cast<std::uintptr_t>(align)) != 0) align /= 2;
    return align;
}

// Elements a row-major R×C matrix with leading dimension ld spans.
std::size_t span(int rows, int cols, int ld) {
    return rows == 0 ? 0 : static_cast<std::size_t>(rows - 1) * static_cast<std::size_t>(ld) +
                               static_cast<std::size_t>(cols);
}

}  // namespace

LtGemm::LtGemm(int device, void* workspace, std::size_t workspace_bytes, Scratch scratch)
    : device_(device), workspace_(workspace), workspace_bytes_(workspace_bytes),
      scratch_(std::move(scratch)) {
    check_cublas(cublasLtCreate(&handle_), "cublasLtCreate", device_);
}

LtGemm::~LtGemm() {
    for (auto& [key, p] : plans_) {
        cublasLtMatrixLayoutDestroy(p.a);
        cublasLtMatrixLayoutDestroy(p.b);
        cublasLtMatrixLayoutDestroy(p.c);
        cublasLtMatmulDescDestroy(p.op);
    }
    if (handle_) cublasLtDestroy(handle_);
}

const LtGemm::Plan& LtGemm::plan(cublasComputeType_t compute, cudaDataType_t ab,
                                 cudaDataType_t cd, bool ta, bool tb, int m, int n, int k,
                                 int lda, int ldb, int ldc, int align_bytes) {
    const Key key{static_cast<int>(compute), static_cast<int>(ab), static_cast<int>(cd), ta, tb,
                  m, n, k, lda, ldb, ldc, align_bytes};
    if (const auto it = plans_.find(key); it != plans_.end()) return it->second;

    Plan p;
    const std::string shape = " for m=" + std::to_string(m) + " n=" + std::to_string(n) +
                              " k=" + std::to_string(k);
    check_cublas(cublasLtMatmulDescCreate(&p.op, compute, CUDA_R_32F), "cublasLtMatmulDescCreate",
                 device_);
    // cuBLASLt's A is our B and its B is our A (the row-major ↔ column-major swap).
    const cublasOperation_t op_a = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a),
                 "cublasLtMatmulDescSetAttribute", device_);
    check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b),
                 "cublasLtMatmulDescSetAttribute", device_);
    check_cublas(cublasLtMatrixLayoutCreate(&p.a, ab, tb ? k : n, tb ? n : k, ldb),
                 "cublasLtMatrixLayoutCreate", device_);
    check_cublas(cublasLtMatrixLayoutCreate(&p.b, ab, ta ? m : k, ta ? k : m, lda),
                 "cublasLtMatrixLayoutCreate", device_);
    check_cublas(cublasLtMatrixLayoutCreate(&p.c, cd, n, m, ldc), "cublasLtMatrixLayoutCreate",
                 device_);

    cublasLtMatmulPreference_t pref = nullptr;
    check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", device_);
    check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace_bytes_, sizeof workspace_bytes_),
                 "cublasLtMatmulPreferenceSetAttribute", device_);
    const auto align = static_cast<std::uint32_t>(align_bytes);
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
        check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof align),
                     "cublasLtMatmulPreferenceSetAttribute", device_);
    }
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle_, p.op, p.a, p.b, p.c, p.c,
                                                             pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
        cublasLtMatrixLayoutDestroy(p.a);
        cublasLtMatrixLayoutDestroy(p.b);
        cublasLtMatrixLayoutDestroy(p.c);
        cublasLtMatmulDescDestroy(p.op);
        if (st != CUBLAS_STATUS_SUCCESS) throw_cublas(st, ("cublasLtMatmulAlgoGetHeuristic" + shape).c_str(), device_);
        throw RuntimeError("cuda:" + std::to_string(device_) + ": cuBLASLt has no algorithm" +
                           shape + " lda=" + std::to_string(lda) + " ldb=" + std::to_string(ldb) +
                           " ldc=" + std::to_string(ldc));
    }
    p.algo = result.algo;
    return plans_.emplace(key, p).first->second;
}

void LtGemm::run(const Plan& p, float alpha, const void* a, const void* b, float beta, void* c,
                 cudaStream_t stream) {
    // cuBLASLt's A is our B: pass b first.
    check_cublas(cublasLtMatmul(handle_, p.op, &alpha, b, p.a, a, p.b, &beta, c, p.c, c, p.c,
                                &p.algo, workspace_, workspace_bytes_, stream),
                 "cublasLtMatmul", device_);
}

void LtGemm::gemm_f32(GemmPrecision precision, bool ta, bool tb, int m, int n, int k,
                      float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                      float* c, int ldc, cudaStream_t stream) {
    if (precision == GemmPrecision::Bf16) {
        // Round the stored spans of A and B to bf16; C stays fp32.
        const std::size_t na = span(ta ? k : m, ta ? m : k, lda);
        const std::size_t nb = span(tb ? n : k, tb ? k : n, ldb);
        auto* a16 = static_cast<std::uint16_t*>(scratch_(na * 2, 0, stream));
        auto* b16 = static_cast<std::uint16_t*>(scratch_(nb * 2, 1, stream));
        check_cuda(cuda_kernels::to_bf16(a, a16, na, stream), "to_bf16", device_);
        check_cuda(cuda_kernels::to_bf16(b, b16, nb, stream), "to_bf16", device_);
        const Plan& p = plan(CUBLAS_COMPUTE_32F, CUDA_R_16BF, CUDA_R_32F, ta, tb, m, n, k, lda, ldb,
                             ldc, common_alignment(a16, b16, c));
        run(p, alpha, a16, b16, beta, c, stream);
        return;
    }
    const cublasComputeType_t compute =
        precision == GemmPrecision::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const Plan& p = plan(compute, CUDA_R_32F, CUDA_R_32F, ta, tb, m, n, k, lda, ldb, ldc,
                         common_alignment(a, b, c));
    run(p, alpha, a, b, beta, c, stream);
}

void LtGemm::gemm_bf16(bool ta, bool tb, int m, int n, int k, float alpha,
                       const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb,
                       float beta, std::uint16_t* c, int ldc, cudaStream_t stream) {
    const Plan& p = plan(CUBLAS_COMPUTE_32F, CUDA_R_16BF, CUDA_R_16BF, ta, tb, m, n, k, lda, ldb,
                         ldc, common_alignment(a, b, c));
    run(p, alpha, a, b, beta, c, stream);
}

}  // namespace meshwork::engine::cuda_detail
