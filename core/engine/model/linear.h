// The three GEMM shapes of a linear layer y = x·W (W stored in × out, row-major):
// forward x·W, input gradient dy·Wᵀ, weight gradient xᵀ·dy (accumulated).
#pragma once

#include "core/engine/backend.h"

namespace meshwork::engine {

// c[m×n] = a[m×k]·b[k×n] + beta·c
inline void matmul(Backend& be, Stream s, const float* a, const float* b, float* c, int m, int n,
                   int k, float beta = 0.0f) {
    be.gemm(Transpose::No, Transpose::No, m, n, k, 1.0f, a, k, b, n, beta, c, n, s);
}
// c[m×n] = a[m×k]·b[n×k]ᵀ + beta·c
inline void matmul_nt(Backend& be, Stream s, const float* a, const float* b, float* c, int m,
                      int n, int k, float beta = 0.0f) {
    be.gemm(Transpose::No, Transpose::Yes, m, n, k, 1.0f, a, k, b, k, beta, c, n, s);
}
// c[m×n] = a[k×m]ᵀ·b[k×n] + beta·c
inline void matmul_tn(Backend& be, Stream s, const float* a, const float* b, float* c, int m,
                      int n, int k, float beta = 1.0f) {
    be.gemm(Transpose::Yes, Transpose::No, m, n, k, 1.0f, a, m, b, n, beta, c, n, s);
}

inline double gemm_flops(int m, int n, int k) { return 2.0 * m * n * k; }

}  // namespace meshwork::engine
