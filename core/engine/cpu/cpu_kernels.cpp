// CpuBackend kernels: elementwise, normalisation, rotary, softmax, embedding, cross-entropy
// and MoE permutation. Plain loops over fp32: GEMMs dominate a layer step, and these stay
// readable as the reference the CUDA kernels are checked against.
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/engine/cpu/cpu_backend.h"

namespace meshwork::engine {

namespace {
std::size_t at(int row, int cols, int col) {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(col);
}
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
}  // namespace

void CpuBackend::axpy(float* y, const float* x, std::size_t count, float alpha, Stream s) {
    check_stream(s);
    for (std::size_t i = 0; i < count; ++i) y[i] += alpha * x[i];
}

void CpuBackend::scale(float* x, std::size_t count, float alpha, Stream s) {
    check_stream(s);
    for (std::size_t i = 0; i < count; ++i) x[i] *= alpha;
}

void CpuBackend::rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int rows,
                                 int cols, float eps, Stream s) {
    check_stream(s);
    w = operand(w, static_cast<std::size_t>(cols), scratch_w_);
    for (int r = 0; r < rows; ++r) {
        const float* xr = x + at(r, cols, 0);
        double sq = 0;
        for (int c = 0; c < cols; ++c) sq += static_cast<double>(xr[c]) * xr[c];
        const float inv = 1.0f / std::sqrt(static_cast<float>(sq / cols) + eps);
        rstd[r] = inv;
        float* yr = y + at(r, cols, 0);
        for (int c = 0; c < cols; ++c) yr[c] = xr[c] * inv * w[c];
    }
}

void CpuBackend::rmsnorm_backward(const float* dy, const float* x, const float* w,
                                  const float* rstd, float* dx, float* dw, int rows, int cols,
                                  Stream s) {
    check_stream(s);
    w = operand(w, static_cast<std::size_t>(cols), scratch_w_);
    // With x̂ = x·rstd and g = dy·w: dx = rstd·(g − x̂·mean(g·x̂)), dw = Σ_rows dy·x̂.
    for (int r = 0; r < rows; ++r) {
        const float* xr = x + at(r, cols, 0);
        const float* dyr = dy + at(r, cols, 0);
        const float inv = rstd[r];
        double dot = 0;
        for (int c = 0; c < cols; ++c) dot += static_cast<double>(dyr[c]) * w[c] * xr[c] * inv;
        const float mean = static_cast<float>(dot / cols);
        float* dxr = dx + at(r, cols, 0);
        for (int c = 0; c < cols; ++c) {
            const float xhat = xr[c] * inv;
            dw[c] += dyr[c] * xhat;
            dxr[c] = inv * (dyr[c] * w[c] - xhat * mean);
        }
    }
}

void CpuBackend::rope(float* x, const std::int32_t* pos, int rows, int heads, int head_dim,
                      float theta, bool inverse, Stream s) {
    check_stream(s);
    // Llama's rotate-half convention: dimension i pairs with i + head_dim/2 at frequency
    // theta^(−2i/head_dim).
    const int half = head_dim / 2;
    const float sign = inverse ? -1.0f : 1.0f;
    for (int r = 0; r < rows; ++r) {
        const double p = pos[r];
        for (int i = 0; i < half; ++i) {
            const double freq = std::pow(static_cast<double>(theta), -2.0 * i / head_dim);
            const float c = static_cast<float>(std::cos(p * freq));
            const float sn = sign * static_cast<float>(std::sin(p * freq));
            for (int h = 0; h < heads; ++h) {
                float* v = x + (static_cast<std::size_t>(r) * heads + h) * head_dim;
                const float a = v[i], b = v[i + half];
                v[i] = a * c - b * sn;
                v[i + half] = b * c + a * sn;
            }
        }
    }
}

void CpuBackend::swiglu_forward(const float* gate, const float* up, float* out,
                                std::size_t count, Stream s) {
    check_stream(s);
    for (std::size_t i = 0; i < count; ++i) out[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

void CpuBackend::swiglu_backward(const float* dout, const float* gate, const float* up,
                                 float* dgate, float* dup, std::size_t count, Stream s) {
    check_stream(s);
    for (std::size_t i = 0; i < count; ++i) {
        const float g = gate[i];
        const float sg = sigmoid(g);
        const float silu = g * sg;
        dgate[i] = dout[i] * up[i] * sg * (1.0f + g * (1.0f - sg));
        dup[i] = dout[i] * silu;
    }
}

void CpuBackend::masked_softmax_forward(float* scores, const MaskedSoftmaxArgs& a, Stream s) {
    check_stream(s);
    for (int r = 0; r < a.rows; ++r) {
        float* row = scores + at(r, a.cols, 0);
        const std::int32_t qp = a.q_pos[r];
        float mx = -std::numeric_limits<float>::infinity();
        for (int c = 0; c < a.cols; ++c) {
            if (a.k_pos[c] <= qp) mx = std::max(mx, row[c] * a.scale);
        }
        double sum = 0;
        for (int c = 0; c < a.cols; ++c) {
            const float e = a.k_pos[c] <= qp ? std::exp(row[c] * a.scale - mx) : 0.0f;
            row[c] = e;
            sum += e;
        }
        const float inv = sum > 0 ? static_cast<float>(1.0 / sum) : 0.0f;
        for (int c = 0; c < a.cols; ++c) row[c] *= inv;
    }
}

void CpuBackend::softmax_backward(const float* probs, float* dp, int rows, int cols, float scale,
                                  Stream s) {
    check_stream(s);
    for (int r = 0; r < rows; ++r) {
        const float* p = probs + at(r, cols, 0);
        float* d = dp + at(r, cols, 0);
        double dot = 0;
        for (int c = 0; c < cols; ++c) dot += static_cast<double>(p[c]) * d[c];
        const float fd = static_cast<float>(dot);
        for (int c = 0; c < cols; ++c) d[c] = scale * p[c] * (d[c] - fd);
    }
}

void CpuBackend::embedding_forward(const float* table, const std::int32_t* tokens, float* out,
                                   int count, int hidden, int vocab_begin, int vocab_rows,
                                   Stream s) {
    check_stream(s);
    for (int i = 0; i < count; ++i) {
        const int row = tokens[i] - vocab_begin;
        float* o = out + at(i, hidden, 0);
        if (row < 0 || row >= vocab_rows) {
            for (int c = 0; c < hidden; ++c) o[c] = 0.0f;
        } else {
            const float* t = table + at(row, hidden, 0);
            if (precision() == Precision::Bf16) {
                round_to_bf16(t, o, static_cast<std::size_t>(hidden));  // the bf16 table's row
            } else {
                for (int c = 0; c < hidden; ++c) o[c] = t[c];
            }
        }
    }
}

void CpuBackend::embedding_backward(const float* dout, const std::int32_t* tokens, float* dtable,
                                    int count, int hidden, int vocab_begin, int vocab_rows,
                                    Stream s) {
    check_stream(s);
    for (int i = 0; i < count; ++i) {
        const int row = tokens[i] - vocab_begin;
        if (row < 0 || row >= vocab_rows) continue;
        const float* d = dout + at(i, hidden, 0);
        float* t = dtable + at(row, hidden, 0);
        for (int c = 0; c < hidden; ++c) t[c] += d[c];
    }
}

void CpuBackend::row_max(const float* x, float* out, int rows, int cols, Stream s) {
    check_stream(s);
    for (int r = 0; r < rows; ++r) {
        float mx = -std::numeric_limits<float>::infinity();
        for (int c = 0; c < cols; ++c) mx = std::max(mx, x[at(r, cols, c)]);
        out[r] = mx;
    }
}

void CpuBackend::row_sum_exp_and_target(const float* logits, const float* row_max,
                                        const std::int32_t* targets, int vocab_begin,
                                        float* sum_exp, float* target_logit, int rows, int cols,
                                        Stream s) {
    check_stream(s);
    for (int r = 0; r < rows; ++r) {
        const float* l = logits + at(r, cols, 0);
        double sum = 0;
        for (int c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(l[c] - row_max[r]));
        sum_exp[r] = static_cast<float>(sum);
        const int t = targets[r] - vocab_begin;
        target_logit[r] = (t >= 0 && t < cols) ? l[t] : 0.0f;
    }
}

void CpuBackend::cross_entropy_backward(float* logits, const float* row_max, const float* sum_exp,
                                        const std::int32_t* targets, int vocab_begin,
                                        const float* row_weight, int rows, int cols, Stream s) {
    check_stream(s);
    for (int r = 0; r < rows; ++r) {
        float* l = logits + at(r, cols, 0);
        const float inv = 1.0f / sum_exp[r];
        const float w = row_weight[r];
        for (int c = 0; c < cols; ++c) l[c] = std::exp(l[c] - row_max[r]) * inv * w;
        const int t = targets[r] - vocab_begin;
        if (t >= 0 && t < cols) l[t] -= w;
    }
}

void CpuBackend::softmax_rows(float* x, int rows, int cols, Stream s) {
    check_stream(s);
    for (int r = 0; r < rows; ++r) {
        float* row = x + at(r, cols, 0);
        float mx = -std::numeric_limits<float>::infinity();
        for (int c = 0; c < cols; ++c) mx = std::max(mx, row[c]);
        double sum = 0;
        for (int c = 0; c < cols; ++c) {
            row[c] = std::exp(row[c] - mx);
            sum += row[c];
        }
        const float inv = static_cast<float>(1.0 / sum);
        for (int c = 0; c < cols; ++c) row[c] *= inv;
    }
}

void CpuBackend::gather_rows(const float* src, const std::int32_t* index, float* out, int count,
                             int cols, Stream s) {
    check_stream(s);
    for (int i = 0; i < count; ++i) {
        const float* from = src + at(index[i], cols, 0);
        float* to = out + at(i, cols, 0);
        for (int c = 0; c < cols; ++c) to[c] = from[c];
    }
}

void CpuBackend::scatter_add_rows(const float* src, const std::int32_t* index, const float* weight,
                                  float* dst, int count, int cols, Stream s) {
    check_stream(s);
    for (int i = 0; i < count; ++i) {
        const float w = weight ? weight[i] : 1.0f;
        const float* from = src + at(i, cols, 0);
        float* to = dst + at(index[i], cols, 0);
        for (int c = 0; c < cols; ++c) to[c] += w * from[c];
    }
}

void CpuBackend::row_dot(const float* a, const float* b, float* out, int rows, int cols,
                         Stream s) {
    check_stream(s);
    for (int r = 0; r < rows; ++r) {
        double d = 0;
        for (int c = 0; c < cols; ++c) d += static_cast<double>(a[at(r, cols, c)]) * b[at(r, cols, c)];
        out[r] = static_cast<float>(d);
    }
}

}  // namespace meshwork::engine
