// What fused (flash) attention delivers on a GPU, by head dim, sequence length, causal mask
// and sliding window, from published kernel tables (one owner: the tables in
// attention_rate.cpp, each with its source; docs/cost-model.md, "Attention rate by head dim,
// length and mask"). GPUs with no published table keep the cluster's `efficiency.attention`.
#pragma once

#include <cstdint>
#include <string>

#include "core/layout/layout.h"

namespace meshwork::cost {

// The mask of one attention call: causal over `seq` tokens, optionally restricted to a
// sliding window of `window` keys (min(i + 1, window) keys for query i) or restarted every
// `window` tokens (chunked, Llama 4). window 0: full causal attention.
struct AttentionMask {
    double seq = 0;
    std::int64_t window = 0;
    bool chunked = false;
};

// Rates in the FLOPs the cost model counts (4·d·keys attended per query and head, the causal
// convention of FlashAttention's benchmarks), per second: the forward and the backward (whose
// FLOPs are 2.5× the forward's), so that time = counted FLOPs / rate.
struct AttentionRate {
    double fwd_flops_per_s = 0;
    double bwd_flops_per_s = 0;
};

// The published-table kernel family a GPU kind uses with `kernel` ("hopper": FlashAttention-3
// on H100; "hopper-fa2": FlashAttention-2 on H100, PyTorch's SDPA; "ampere": FlashAttention-2
// on A100; "blackwell": cuDNN on GB200; "blackwell-ultra": cuDNN on GB300, for B300 and
// GB300); empty when no table covers it.
std::string attention_architecture(const std::string& gpu_kind, AttentionKernel kernel = AttentionKernel::Fused);

// The dense bf16 peak of the GPU the `arch` table was measured on (H100 SXM5, A100 SXM4, GB200,
// GB300):
// another GPU of the family scales the table by its own bf16 peak over this one.
double attention_table_peak_flops(const std::string& arch);

// The tile (query rows × key columns) the forward kernel runs for `head_dim` on `arch`, with
// a causal or local mask (the kernel's own choice, cited in attention_rate.cpp).
struct AttentionTile {
    int block_m = 128;
    int block_n = 128;
};
AttentionTile attention_tile(const std::string& arch, double head_dim, bool local);

// Score pairs (query, key) the tiled kernel computes for `mask` with `tile`: whole tiles
// from the first key block a query block's rows need to the last (masked tiles are computed
// in full), summed over query blocks. The counted pairs are seq·context with
// context = causal_context_tokens (seq/2 for full causal attention).
double executed_score_pairs(const AttentionMask& mask, const AttentionTile& tile);
double counted_score_pairs(const AttentionMask& mask);

// The published rate for `arch` at `head_dim` (linear between the tabled head dims, clamped
// to the tabled range) and sequence length `seq` (linear in log2(seq) between the table's
// lengths, 512 … 16k or 2k … 32k, held at the ends), causal or not. {0, 0} without a table.
AttentionRate tabled_attention_rate(const std::string& arch, double head_dim, double seq, bool causal);

// The rate for one mask: full causal attention is the causal table at `seq`; chunks are the
// causal table at the chunk; a sliding window runs its executed tiles at the per-executed-pair
// rate of the causal kernel whose query blocks iterate as many key blocks as the window's
// do, and loses the masked part of those tiles; where a window was measured (Blackwell), a
// fixed cost per query block set by that measurement plus the causal rate per key instead.
// {0, 0} without a table.
AttentionRate attention_rate(const std::string& arch, double head_dim, const AttentionMask& mask);

}  // namespace meshwork::cost
