#include "core/cost/layer_kind_cost.h"

namespace meshwork::cost {

namespace {

// Mamba-2's SSD in chunks of Q (Dao & Gu 2024, "Transformers are SSMs", §6, the four steps
// of ssd_minimal_discrete in mamba_ssm/modules/ssd_minimal.py), per token, heads H of dim P,
// state N, G groups sharing B and C:
//   1. intra-chunk C·Bᵀ per group (Q·N multiply-adds per token) and its product with X
//      per head (Q·P): 2·G·Q·N + 2·H·Q·P (full Q×Q tiles, as the kernel runs them);
//   2. chunk states Bᵀ·X: 2·H·N·P;  3. the inter-chunk recurrence: H·N·P per chunk, / Q;
//   4. state to output C·state: 2·H·N·P.
// Plus the depthwise causal convolution over x, B, C: 2·kernel per channel.
MixerKindCost mamba2_cost(const Mamba2Dims& d, double e) {
    const double H = d.num_heads, P = static_cast<double>(d.head_dim), N = static_cast<double>(d.state_dim);
    const double G = d.num_groups, Q = d.chunk_size;
    const double conv = static_cast<double>(d.conv_dim());
    MixerKindCost c;
    c.scan_flops = 2.0 * G * Q * N + 2.0 * H * Q * P + 4.0 * H * N * P + H * N * P / Q + 2.0 * d.conv_kernel * conv;
    // Kept for the backward (mamba_ssm's MambaChunkScanCombinedFn saves its inputs and
    // recomputes the chunk states): the in-projection's output (z, xBC, dt), the
    // convolution's output, the scan's output, the gated norm's output (out-proj input).
    const double inner = static_cast<double>(d.inner());
    c.activation_bytes = e * (inner + conv + H) + e * conv + e * inner + e * inner;
    c.state_bytes = 4.0 * H * P * N + e * (d.conv_kernel - 1) * conv;
    return c;
}

// Gated DeltaNet in chunks of C (Yang, Kautz, Hatamizadeh, "Gated Delta Networks", ICLR 2025,
// §3.3, with the WY/UT chunkwise form of Yang et al., "Parallelizing Linear Transformers with
// the Delta Rule", NeurIPS 2024, §3.2), per token and value head (key dim dk, value dv):
// K·Kᵀ and Q·Kᵀ within the chunk (2·C·dk each), the UT transform's triangular solve
// (C²/3), W = T·K and U = T·V (2·C·dk + 2·C·dv), the intra-chunk output (2·C·dv), and the
// state terms W·S, Q·S and the state update Kᵀ·(U − W·S) (2·dk·dv each). Key heads are
// repeated to the value heads. Plus the causal convolution over q, k, v.
MixerKindCost gated_deltanet_cost(const LinearAttentionDims& d, double e) {
    const double C = kGatedDeltaNetChunk;
    const double dk = static_cast<double>(d.key_head_dim), dv = static_cast<double>(d.value_head_dim);
    const double hv = d.num_value_heads;
    const double qk = d.num_key_heads * dk, v = hv * dv;
    const double conv = 2.0 * qk + v;
    MixerKindCost c;
    const double per_head = 2.0 * C * dk * 3.0 + C * C / 3.0 + 2.0 * C * dv * 2.0 + 6.0 * dk * dv;
    c.scan_flops = hv * per_head + 2.0 * d.conv_kernel * conv;
    // Kept: the in-projections' outputs, the convolution's output, the chunk kernel's
    // saved T matrix (fp32, C per token and head), the core output and the gated norm's.
    c.activation_bytes = e * (2.0 * qk + 2.0 * v + 2.0 * hv) + e * conv + 4.0 * hv * C + 2.0 * e * v;
    c.state_bytes = 4.0 * hv * dk * dv + e * (d.conv_kernel - 1) * conv;
    return c;
}

}  // namespace

MixerKindCost mixer_kind_cost(const ModelSpec& m, int block, double element_bytes) {
    switch (m.mixer_kind(block)) {
        case MixerKind::Mamba2: return mamba2_cost(m.mamba, element_bytes);
        case MixerKind::LinearAttention: return gated_deltanet_cost(m.linear_attention, element_bytes);
        case MixerKind::SparseAttention: {
            // The indexer's query (heads × dim) and key, its head weights, and the top-k
            // indices (int32) the sparse attention and its backward read.
            const auto& d = m.sparse_attention;
            MixerKindCost c;
            c.activation_bytes = element_bytes * static_cast<double>(d.index_heads * d.index_head_dim +
                                                                     d.index_head_dim + d.index_heads) +
                                 4.0 * static_cast<double>(d.topk);
            return c;
        }
        default: return {};
    }
}

}  // namespace meshwork::cost
