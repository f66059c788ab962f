#include "core/cost/block_cost.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/common/error.h"
#include "core/cost/comm_overlap.h"
#include "core/cost/ep_comm_sms.h"
#include "core/schedule/pipeline_schedule.h"
#include "core/cost/fp8_cast.h"
#include "core/cost/gemm_shapes.h"
#include "core/cost/launch_cost.h"
#include "core/cost/moe_dispatch.h"
#include "core/cost/moe_eager_passes.h"
#include "core/cost/moe_host_ops.h"
#include "core/layout/layout_rules.h"

namespace meshwork::cost {

namespace {

// Bytes moved per score element by the unfused softmax path (Megatron's fused
// scale-mask-softmax reads and writes 2 bytes each, dropout reads 2, writes 2 and a 1-byte
// mask); the backward reads the incoming gradient, the softmax output and the mask and
// writes two gradients.
constexpr double kSoftmaxFwdBytesPerScore = 9;
constexpr double kSoftmaxBwdBytesPerScore = 11;
// Of these, the dropout's share (forward: read 2, write 2 and the mask; backward: read the
// mask and the gradient, write one), absent without attention dropout.
constexpr double kDropoutFwdBytesPerScore = 5;
constexpr double kDropoutBwdBytesPerScore = 5;
// The backward of fused attention recomputes the scores: five matrix products against the
// forward's two (FlashAttention-2), i.e. 2.5× the forward FLOPs.
constexpr double kFusedAttentionBwdFactor = 2.5;

struct Ctx {
    const ModelProfile& m;
    const LayoutCosts& c;
    const TrainingConfig& tr;
    bool sp;
    bool flash;
    double capacity;  // MoE capacity factor; 1 when dropless
};

// Core attention (scores, softmax, context) of one block, forward, and its FLOPs.
struct CoreAttention {
    double fwd_s = 0, bwd_s = 0, model_flops_fwd = 0, executed_flops_fwd = 0;
};

CoreAttention core_attention(const Ctx& x, const BlockProfile& b, const BlockGemms& g, double seq) {
    const auto& c = x.c;
    const double t = c.tp;
    CoreAttention a;
    a.model_flops_fwd = b.score_flops_per_context * b.causal_context(seq) * c.tokens / t;
    // Mamba-2 / Gated DeltaNet scans (layer_kind_cost.h): fused chunked kernels, priced as
    // fused attention is, in both paths.
    const double scan = b.scan_flops * c.tokens / t;
    a.model_flops_fwd += scan;
    if (x.flash) {
        // Fused kernels skip the masked half of the causal score matrix, and the tiles
        // outside a sliding window or chunk; their rate depends on head dim, length and mask
        // (attention_rate.h): the full-causal and the local blocks are timed apart.
        a.executed_flops_fwd = a.model_flops_fwd;
        const double per_context = b.score_flops_per_context * c.tokens / t;
        const double local = b.local_share * per_context * causal_context_tokens(seq, b.local_tokens, b.chunked);
        const double full = (1.0 - b.local_share) * per_context * seq / 2.0;
        const AttentionTimes f = fused_attention_times(c.kernel, full, x.m.head_dim, {seq, 0, false});
        const AttentionTimes l = fused_attention_times(c.kernel, local, x.m.head_dim, {seq, b.local_tokens, b.chunked});
        a.fwd_s = f.fwd_s + l.fwd_s + fused_attention_s(c.kernel, scan);
        a.bwd_s = f.bwd_s + l.bwd_s + kFusedAttentionBwdFactor * fused_attention_s(c.kernel, scan);
        return a;
    }
    // Unfused: batched GEMMs over (micro-batch × local heads), full s×s, plus the softmax
    // and dropout traffic over the score matrix.
    const double local_heads = x.m.heads / t;
    const double qk = gemm_s(c.kernel, g.core_qk);
    const double av = gemm_s(c.kernel, g.core_av);
    const double scores = local_heads * c.tokens * seq;
    a.executed_flops_fwd = b.score_flops_per_context * seq * c.tokens / t + scan;
    const double drop_fwd = x.m.attention_dropout ? 0.0 : kDropoutFwdBytesPerScore;
    const double drop_bwd = x.m.attention_dropout ? 0.0 : kDropoutBwdBytesPerScore;
    a.fwd_s = qk + av + memory_s(c.kernel, (kSoftmaxFwdBytesPerScore - drop_fwd) * scores) +
              fused_attention_s(c.kernel, scan);
    a.bwd_s = 2.0 * (qk + av) + memory_s(c.kernel, (kSoftmaxBwdBytesPerScore - drop_bwd) * scores);
    return a;
}

// TP collectives of one "half" (attention or MLP): an all-reduce without SP, an
// all-gather and a reduce-scatter with SP; the same volume runs in the backward.
double tp_half_s(const Ctx& x) {
    const auto& c = x.c;
    if (c.tp <= 1) return 0;
    const double bytes = c.tokens * x.m.hidden * c.element_bytes;
    const double gathered = c.tokens * x.m.hidden * c.tp_gather_bytes;
    return x.sp ? all_gather_s(c.link, c.tp_span, gathered) + reduce_scatter_s(c.link, c.tp_span, bytes)
                : all_reduce_s(c.link, c.tp_span, bytes);
}

// Per-token memory traffic of a norm (read + write h) and a fused bias-dropout-add (read two
// h-wide inputs, write one, write a 1-byte mask with hidden dropout), sharded over tp only
// with SP.
double one_norm_bytes(const Ctx& x) {
    const double share = x.sp ? x.c.tp : 1.0;
    return 2.0 * x.c.element_bytes * x.m.hidden * x.c.tokens / share;
}
// The norms of one half: its input norm, and with Gemma's sandwich norms one on its output.
double norm_bytes(const Ctx& x) { return (x.m.sandwich_norms ? 2.0 : 1.0) * one_norm_bytes(x); }
double residual_bytes(const Ctx& x) {
    const double share = x.sp ? x.c.tp : 1.0;
    const double mask = x.m.hidden_dropout ? 1.0 : 0.0;
    return (3.0 * x.c.element_bytes + mask) * x.m.hidden * x.c.tokens / share;
}

// What PyTorch eager (no torch.compile, no fused kernels) moves beyond the fused kernels the
// model otherwise assumes, per micro-batch, forward (the backward, one autograd kernel per
// op, twice that), in the ops of torchtitan's Llama block at 9dec370
// (torchtitan/models/norms.py:96-101, torchtitan/models/llama/model.py:107-125, 189-214,
// 253), each kernel reading its inputs and writing its output:
// - RMSNorm: cast to fp32 (read e, write 4), pow (4, 4), mean (read 4), multiply by the
//   reciprocal (4, 4), cast back (4, e), multiply by the weight (e, e): 4e + 28 bytes per
//   element against a fused norm's 2e;
// - rotary embedding of Q and K in complex fp32: cast (e, 4), complex multiply (4, 4),
//   cast back (4, e): 2e + 16 per element (fused kernels: not counted);
// - GQA's repeat_kv copies K and V to every query head (read e·kv, write e·q each);
// - attention's output transposed back to contiguous (e·q, e·q);
// - SwiGLU as silu (e, e) then multiply (2e, e): 5e per width against a fused 3e.
struct EagerBytes {
    double attention = 0, mlp = 0;
};
EagerBytes eager_bytes(const Ctx& x, const BlockProfile& blk) {
    const auto& c = x.c;
    const auto& m = x.m;
    const double t = c.tp;
    const double e = c.element_bytes;
    const double sp_share = x.sp ? t : 1.0;
    const double norm = (2.0 * e + 28.0) * m.hidden / sp_share;
    EagerBytes b;
    b.attention = norm + 2.0 * e * m.q_width / t;
    // Rotary position embeddings: models without learned absolute positions.
    if (m.position_params == 0) b.attention += (2.0 * e + 16.0) * (m.q_width + m.kv_width) / t;
    if (m.q_width > m.kv_width) b.attention += 2.0 * e * (m.q_width + m.kv_width) / t;
    const double ffn = blk.moe ? m.shared_ffn : m.ffn;  // routed experts: grouped kernels
    b.mlp = norm + (m.gated_mlp ? 2.0 * e * ffn / t : 0.0);
    b.attention *= c.tokens;
    b.mlp *= c.tokens;
    return b;
}

// torchtitan's op-level selective activation checkpointing (activation_checkpoint mode
// "selective", selective_ac_option "op"): the policy counts the block's matmuls in forward
// order and saves the output of the 1st, 3rd, 5th, …; the other matmuls, the norms,
// rotary embedding, activation function, residual adds and the TP all-gathers are rerun
// in the backward (torchtitan 9dec370 torchtitan/parallelisms/parallelize_llama.py:214-276;
// unchanged at b5bcd76c, torchtitan/distributed/activation_checkpoint.py:257-274, which
// saves the reduce-scatter outputs and attention as well). torchtitan's blocks run their
// linears in this order (torchtitan 9dec370 torchtitan/models/llama/model.py:189, 214, 253):
// wq, wk, wv, wo, then w1, w3, w2 (gated MLP) or fc1, fc2.
struct OpCheckpoint {
    double saved_bytes = 0;   // per micro-batch
    double recompute_s = 0;   // forward work rerun before the block's backward
    double recompute_flops = 0;
};

OpCheckpoint op_checkpoint(const Ctx& x, const BlockProfile& b, double fwd_memory_bytes, double fwd_tp_s) {
    const auto& c = x.c;
    const auto& m = x.m;
    const double t = c.tp;
    const double T = c.tokens;
    const double h = m.hidden;
    const double e = c.element_bytes;
    const double sp_share = x.sp ? t : 1.0;
    struct Mm {
        double n, k, out_width;  // GEMM output columns and depth per rank; saved width
    };
    // At most 7 (no allocation: the search prices blocks in its inner loop).
    std::array<Mm, 7> mms{};
    std::size_t n = 0;
    mms[n++] = {m.q_width / t, h, m.q_width / t};
    mms[n++] = {m.kv_width / t, h, m.kv_width / t};
    mms[n++] = {m.kv_width / t, h, m.kv_width / t};
    mms[n++] = {h, m.q_width / t, h / sp_share};  // row-parallel: reduce-scattered with SP
    const double ffn = b.moe ? m.shared_ffn : m.ffn;
    if (ffn > 0) {
        mms[n++] = {ffn / t, h, ffn / t};
        if (m.gated_mlp) mms[n++] = {ffn / t, h, ffn / t};
        mms[n++] = {h, ffn / t, h / sp_share};
    }
    OpCheckpoint o;
    // The block's input (the checkpoint's argument) and attention's output with its fp32
    // log-sum-exp per head (FlashAttention's saved statistics).
    double per_token = e * h / sp_share + e * m.q_width / t + 4.0 * m.heads / t;
    for (std::size_t i = 0; i < n; ++i) {
        const Mm& g = mms[i];
        if (i % 2 == 0) {
            per_token += e * g.out_width;  // 1st, 3rd, …: saved
        } else {
            o.recompute_s += gemm_s(c.kernel, T, g.n, g.k);
            o.recompute_flops += 2.0 * T * g.n * g.k;
        }
    }
    o.saved_bytes = per_token * T;
    o.recompute_s += memory_s(c.kernel, fwd_memory_bytes) + fwd_tp_s;
    return o;
}

BlockCost block_cost(const Ctx& x, const BlockProfile& b, const TrainingConfig& tr) {
    const auto& c = x.c;
    const auto& m = x.m;
    const auto& k = c.kernel;
    const double t = c.tp;
    const double T = c.tokens;
    const double h = m.hidden;
    const double e = c.element_bytes;
    const double seq = static_cast<double>(tr.seq_length);
    BlockCost out;

    const BlockGemms g = block_gemms(m, b, c, x.tr);

    // --- attention half -------------------------------------------------------------
    const double qkv_s = gemm_s(k, g.qkv);
    const double proj_s = gemm_s(k, g.proj);
    const CoreAttention core = core_attention(x, b, g, seq);
    const EagerBytes eager = tr.fused_elementwise ? EagerBytes{} : eager_bytes(x, b);
    const double attn_mem_fwd = norm_bytes(x) + residual_bytes(x) + eager.attention;
    out.fwd.attention_s = qkv_s + proj_s + core.fwd_s + memory_s(k, attn_mem_fwd);
    // The backward's GEMMs at their own shapes (kernel_time.h: input and weight gradient).
    out.bwd.attention_s = gemm_bwd_s(k, g.qkv) + gemm_bwd_s(k, g.proj) + core.bwd_s + memory_s(k, 2.0 * attn_mem_fwd);
    // Weight-gradient GEMMs the backward TP comm can hide behind.
    double wgrad_s = gemm_wgrad_s(k, g.qkv) + gemm_wgrad_s(k, g.proj);

    // --- MLP or MoE half --------------------------------------------------------------
    const double act_rw = m.gated_mlp ? 3.0 : 2.0;   // activation kernel traffic per width
    // Forward memory traffic of the half (also what op-level checkpointing reruns).
    double mlp_mem_bytes = norm_bytes(x) + residual_bytes(x) + eager.mlp;
    double mlp_fwd = memory_s(k, mlp_mem_bytes);
    double mlp_gemm = 0;
    double mlp_gemm_bwd = 0, mlp_wgrad = 0;  // their backward, and its weight gradients
    double fc1_s = 0, fc2_s = 0;  // the dense (or shared-expert) MLP's two GEMMs
    const double shared_ffn = b.moe ? m.shared_ffn : m.ffn;
    if (shared_ffn > 0) {
        fc1_s = gemm_s(k, g.fc1);
        fc2_s = gemm_s(k, g.fc2);
        mlp_gemm += fc1_s + fc2_s;
        mlp_gemm_bwd += gemm_bwd_s(k, g.fc1) + gemm_bwd_s(k, g.fc2);
        mlp_wgrad += gemm_wgrad_s(k, g.fc1) + gemm_wgrad_s(k, g.fc2);
        mlp_fwd += memory_s(k, act_rw * e * shared_ffn / t * T);
        mlp_mem_bytes += act_rw * e * shared_ffn / t * T;
    }
    double ep_fwd = 0;
    double ep_bytes = 0;
    double expert_model_flops = 0;
    MoeEagerBytes eager_moe;                       // the experts' eager passes, per token copy
    double moe_copies = 0;                         // token copies per rank
    bool moe_quant_padding = false;                // fp8 padding copies outside the dispatcher
    if (b.moe) {
        mlp_gemm += gemm_s(k, g.router) + gemm_s(k, g.expert_fc1) + gemm_s(k, g.expert_fc2);
        for (const GemmShape* gs : {&g.router, &g.expert_fc1, &g.expert_fc2}) {
            mlp_gemm_bwd += gemm_bwd_s(k, *gs);
            mlp_wgrad += gemm_wgrad_s(k, *gs);
        }
        const double copies = T * m.top_k * c.etp / t * x.capacity;  // token copies per rank
        moe_copies = copies;
        // Bias, clamp and fp8 padding passes outside the fused kernels (moe_eager_passes.h); FC1's output
        // width on this rank is g.expert_fc1.n.
        MoeEagerPasses passes;
        passes.clamped_glu = m.glu_clamped;
        passes.expert_bias = m.expert_bias;
        passes.quant_padding = quantized_gemms(tr.dtype) &&
                               !(c.moe_dispatcher == MoeDispatcher::Flex && c.moe_flex_backend == MoeFlexBackend::HybridEP);
        moe_quant_padding = passes.quant_padding;
        eager_moe = moe_eager_bytes_per_copy(passes, g.expert_fc1.n, h, e);
        // Permute and unpermute (read + write h-wide copies, twice), expert activations.
        mlp_fwd += memory_s(k, 4.0 * e * h * copies + act_rw * e * m.expert_ffn / c.etp * copies);
        // With several local experts the all-to-all dispatcher sorts the copies it received
        // by local expert and unsorts them before the combine (Megatron-LM d98e8a64,
        // moe/token_dispatcher.py:756-793 "Permutation 2", :802-822): two more h-wide
        // read + write passes.
        // The flex dispatcher (DeepEP, HybridEP) receives tokens laid out per rank and sorts
        // them once (token_dispatcher.py:1809 MoEFlexTokenDispatcher); allgather permutes the
        // gathered tokens once.
        if (c.moe_dispatcher == MoeDispatcher::AllToAll && c.ep > 1 && g.expert_fc1.count > 1) {
            mlp_fwd += memory_s(k, 4.0 * e * h * copies);  // count: local experts
        }
        const MoeDispatchCost d = moe_dispatch_cost(c.link, c.ep_span, c.moe_dispatcher, c.moe_flex_backend, m.experts, m.top_k,
                                                    T / t * x.capacity, h * e);
        ep_fwd = d.dispatch_s + d.combine_s;
        ep_bytes = d.bytes;
        if (c.etp > 1) {
            const double gathered = copies * h * e;
            ep_fwd += all_gather_s(c.link, c.etp_span, gathered) +
                      reduce_scatter_s(c.link, c.etp_span, gathered);
        }
        expert_model_flops = (b.router_flops + m.top_k * b.expert_gemm_flops) * T / t;
    }
    // The router's score passes and, in the backward, its gating casts (moe_host_ops.h), on
    // the rank's tokens (its sequence shard with SP).
    const RouterBytes router =
        b.moe ? router_bytes_per_token(h, m.experts, /*aux_loss=*/true) : RouterBytes{};
    const double router_tokens = T / (x.sp ? t : 1.0);
    out.fwd.mlp_s = mlp_gemm + mlp_fwd + memory_s(k, eager_moe.fwd * moe_copies) +
                    memory_s(k, router.fwd * router_tokens);
    out.bwd.mlp_s = mlp_gemm_bwd + 2.0 * mlp_fwd + memory_s(k, eager_moe.bwd * moe_copies) +
                    memory_s(k, router.bwd * router_tokens);
    // The fp8 casts of every fp8 GEMM's operands (fp8_cast.h): inputs in the forward (rerun
    // with it), output gradients in the backward, weights once a step.
    if (quantized_gemms(tr.dtype)) {
        Fp8CastContext cast;
        cast.recipe = tr.fp8_recipe;
        cast.nvfp4 = tr.dtype == DType::Fp4;
        cast.transposed_copy = k.fp8_transposed_copy;
        cast.sp_shards = x.sp ? t : 1.0;
        cast.norm_feeds_fc1 = !b.moe;
        cast.micro_batches = c.micro_batches;
        const Fp8CastBytes bytes = fp8_cast_bytes(g, cast);
        out.fwd.attention_s += memory_s(k, bytes.attention_fwd);
        out.bwd.attention_s += memory_s(k, bytes.attention_bwd);
        out.fwd.mlp_s += memory_s(k, bytes.mlp_fwd);
        out.bwd.mlp_s += memory_s(k, bytes.mlp_bwd);
    }
    wgrad_s += mlp_wgrad;

    // --- collectives --------------------------------------------------------------------
    // Attention half: one TP collective each way. MLP half: one more for a dense MLP or
    // without SP; an MoE layer with SP dispatches its sequence shard directly.
    const double half = tp_half_s(x);
    const bool mlp_tp = !(b.moe && x.sp);
    const double tp = half * (mlp_tp ? 2.0 : 1.0);
    out.fwd.tp_total_s = tp;
    out.bwd.tp_total_s = tp;
    if (x.sp && c.tp > 1 && c.tp_tiling != TpOverlap::None) {
        // Userbuffers TP overlap (Transformer Engine's default methods,
        // transformer_engine/pytorch/module/base.py:350-359 at d0067d0d): forward, the
        // all-gather tiled against the QKV and FC1 GEMMs (ring exchange), the reduce-scatter
        // against the output projection and FC2 (pipeline); backward, the all-gather of the
        // output gradient against the projection and FC2 input-gradient GEMMs, the
        // reduce-scatter of the input gradient against the QKV and FC1 ones (bulk overlap
        // with their weight-gradient GEMMs, the same size). tp tiles (TE's ring exchange
        // splits into tp_size chunks, :387). The GEMMs are the same size both ways.
        const double bytes = c.tokens * m.hidden * c.element_bytes;
        const double ag = all_gather_s(c.link, c.tp_span, c.tokens * m.hidden * c.tp_gather_bytes);
        const double rs = reduce_scatter_s(c.link, c.tp_span, bytes);
        const TpOverlap mode = c.tp_tiling;
        const double u = c.tp_interference;
        auto extra = [&](double gemm, double comm) {
            return tiled_collective_extra_s(gemm, comm, c.tp, mode, u);
        };
        // A tiled GEMM runs as tp GEMMs of a tp-th of its rows each, up to three at once on
        // the overlap's compute streams (TE d0067d0d, transformer_engine/common/
        // comm_gemm_overlap/comm_gemm_overlap.cpp:1044 split_overlap_ag, :611 and :1295
        // split_overlap_rs; streams min(NVTE_COMM_OVERLAP_MAX_STREAMS, splits), :130 and
        // include/transformer_engine/comm_gemm_overlap.h:20), at the chunks' own shape: what
        // that costs beyond the whole GEMM. The backward's bulk reduce-scatters (:444) leave
        // their GEMMs whole.
        constexpr double kOverlapComputeStreams = 3;
        auto chunked = [&](const GemmShape& whole) {
            if (!whole.present()) return 0.0;
            GemmShape tiles = whole;
            tiles.m = whole.m / c.tp;
            tiles.count = whole.count * c.tp;
            tiles.together = std::min<double>(kOverlapComputeStreams, c.tp);
            return std::max(0.0, gemm_s(k, tiles) - gemm_s(k, whole));
        };
        double fwd = extra(qkv_s, ag) + extra(proj_s, rs) + chunked(g.qkv) + chunked(g.proj);
        double bwd = extra(proj_s, ag) + extra(qkv_s, rs) + chunked(g.proj);
        if (mlp_tp) {
            fwd += extra(fc1_s, ag) + extra(fc2_s, rs) + chunked(g.fc1) + chunked(g.fc2);
            bwd += extra(fc2_s, ag) + extra(fc1_s, rs) + chunked(g.fc2);
        }
        out.fwd.tp_s = fwd;
        out.bwd.tp_s = bwd;
    } else {
        // Megatron's asynchronous input-gradient all-reduce runs beside the weight-gradient
        // GEMMs, which it slows by its share of the GPU while it runs.
        const double hidden = std::min(tp * c.tp_overlap, wgrad_s);
        out.fwd.tp_s = tp;
        out.bwd.tp_s = tp - hidden + c.tp_interference * hidden;
    }
    out.fwd.ep_s = ep_fwd;
    out.bwd.ep_s = ep_fwd;
    if (b.moe && c.a2a_paired_share > 0 && ep_fwd > 0) {
        // Megatron's MoE all-to-all overlap (docs/cost-model.md, "Expert dispatch"): in the
        // passes the combined 1F1B schedule pairs, each of the four all-to-alls of a layer runs
        // beside the other micro-batch's compute and shows only where it outlasts it; what it
        // hides slows that compute by the link tier's interference (its kernels take SMs).
        const double pair_comm = 2.0 * ep_fwd;
        const double exposed = a2a_overlap_exposed_s(ep_fwd / 2.0, out.fwd.attention_s, out.fwd.mlp_s,
                                                     out.bwd.attention_s, out.bwd.mlp_s);
        const double pair_ep = exposed + c.ep_interference * (pair_comm - exposed);
        const double share = c.a2a_paired_share;
        out.fwd.ep_s = out.bwd.ep_s = share * pair_ep / 2.0 + (1.0 - share) * ep_fwd;
    }
    if (c.cp > 1) {
        // Ring attention: cp − 1 exchanges of this rank's K and V (heads sharded over tp),
        // overlapped with the attention of the chunk already held; gradients go back too.
        const double kv_bytes = T * 2.0 * m.kv_width / t * e;
        const double step = send_recv_s(c.link, c.cp_span.crosses_nodes(), kv_bytes);
        const double ring = (c.cp - 1) * step;
        out.fwd.cp_total_s = ring;
        out.bwd.cp_total_s = 2.0 * ring;
        // What attention does not hide, and what the exchange takes of the GPU beside it.
        out.fwd.cp_s = overlapped_s(core.fwd_s, ring, c.cp_interference) - core.fwd_s;
        out.bwd.cp_s = overlapped_s(core.bwd_s, 2.0 * ring, c.cp_interference) - core.bwd_s;
    }

    // --- host and launch cost (launch_cost.h) --------------------------------------------
    // Per half and direction, the GPU time the host's launches leave idle; the half's GPU
    // time includes its exposed collectives (NCCL kernels keep the GPU busy as well). A
    // dropless MoE layer synchronises with the host once in its forward for the token counts
    // (Megatron-LM d98e8a64 moe/token_dispatcher.py:594-605) and cannot be captured. The
    // recomputed forward (full recomputation copies fwd below) pays the same again.
    if (c.host_launches) {
        // Dynamic shapes: neither a capacity nor HybridEP's per-rank budget (layout_rules.h).
        const bool dropless = !rules::moe_static_shapes(tr.moe_capacity_factor, tr.moe_rank_capacity_factor);
        const bool attn_captured = graphs_capture(c.cuda_graphs, c.cuda_graph_modules, GraphModule::Attn);
        const bool mlp_captured = b.moe ? graphs_capture_moe(c.cuda_graphs, dropless, c.cuda_graph_modules)
                                        : graphs_capture(c.cuda_graphs, c.cuda_graph_modules, GraphModule::Mlp);
        const int syncs = b.moe && dropless ? 1 : 0;
        const int attn_bwd = static_cast<int>(kAttentionKernelsFwd * kBackwardKernelsPerForward);
        const int mlp_bwd = static_cast<int>(kMlpKernelsFwd * kBackwardKernelsPerForward);
        if (b.moe) {
            // An MoE layer: Megatron-LM's own op counts and the host time per op of a
            // production MoE trace (moe_host_ops.h), over the whole layer: the host runs ahead
            // of the GPU from one synchronisation to the next, so what it lost in one half the
            // other half's long kernels win back, but for what it launches after the forward's
            // synchronisation (dispatch, experts, combine), which only the MoE half's own
            // kernels can hide: the queue is empty when the host returns from it.
            MoeHostShape hs;
            hs.dispatcher = c.moe_dispatcher;
            hs.backend = c.moe_flex_backend;
            hs.ep = c.ep > 1;
            hs.local_experts = g.expert_fc1.count;
            hs.fp8 = quantized_gemms(tr.dtype);
            hs.quant_padding = moe_quant_padding;
            hs.expert_bias = m.expert_bias;
            hs.clamped_glu = m.glu_clamped;
            const MoeHostOps ops = moe_host_ops(hs);
            const MoeLayerHost fwd_host{attn_captured ? 1 : 0, attn_captured ? 0 : kAttentionKernelsFwd,
                                        mlp_captured, ops.framework_ops_fwd, ops.expert_launches_fwd,
                                        kAttentionKernelsFwd + ops.framework_ops_fwd + ops.expert_launches_fwd,
                                        ops.framework_ops_after_sync_fwd};
            const MoeLayerHost bwd_host{attn_captured ? 1 : 0, attn_captured ? 0 : attn_bwd, mlp_captured,
                                        ops.framework_ops_bwd, ops.expert_launches_bwd,
                                        attn_bwd + ops.framework_ops_bwd + ops.expert_launches_bwd};
            const double moe_half_gpu_s = out.fwd.mlp_s + out.fwd.ep_s + (mlp_tp ? out.fwd.tp_s / 2 : 0.0);
            out.fwd.host_s = moe_layer_exposed_host_s(fwd_host, out.fwd.total_s(), syncs, moe_half_gpu_s);
            out.bwd.host_s = moe_layer_exposed_host_s(bwd_host, out.bwd.total_s(), 0);
        } else {
            out.fwd.host_s = exposed_layer_launch_s(
                {out.fwd.attention_s + out.fwd.cp_s + out.fwd.tp_s / 2, kAttentionKernelsFwd, attn_captured, 0},
                {out.fwd.mlp_s + out.fwd.ep_s + out.fwd.tp_s / 2, kMlpKernelsFwd, mlp_captured, syncs});
            out.bwd.host_s = exposed_layer_launch_s(
                {out.bwd.attention_s + out.bwd.cp_s + out.bwd.tp_s / 2, attn_bwd, attn_captured, 0},
                {out.bwd.mlp_s + out.bwd.ep_s + out.bwd.tp_s / 2, mlp_bwd, mlp_captured, 0});
        }
    }

    // --- recomputation ------------------------------------------------------------------
    out.full_recompute = out.fwd;
    out.full_recompute.recompute_s = out.fwd.attention_s + out.fwd.mlp_s;
    out.full_recompute.attention_s = 0;
    out.full_recompute.mlp_s = 0;
    // Selective recomputation reruns the forwards of its modules before the block's backward
    // (core/layout/recompute_modules.h; by default core attention alone, Korthikanti et al.
    // 2022, §5). Each from the forward terms above; the MoE layer's FLOPs come below.
    const RecomputeSet& modules = c.recompute_modules;
    using M = RecomputeModule;
    double module_flops = 0;
    out.selective_recompute_s = 0;
    if (modules.has(M::CoreAttn)) {
        out.selective_recompute_s += core.fwd_s;
        module_flops += core.executed_flops_fwd;
    }
    if (modules.has(M::Layernorm)) {
        // Only the norms that are modules of their own rerun (recomputable_norms); the fused
        // ones are kept.
        out.selective_recompute_s += memory_s(k, recomputable_norms(b.moe, m.mla_latent > 0) * one_norm_bytes(x));
    }
    if (modules.has(M::MlaUpProj)) {
        // The two up-projection GEMMs; RoPE's element-wise pass on the rope dims is not counted.
        for (const GemmShape& up : {g.mla_q_up, g.mla_kv_up}) {
            if (!up.present()) continue;
            out.selective_recompute_s += gemm_s(k, up);
            module_flops += up.flops();
        }
    }
    // The dense MLP or the shared experts rerun whole: both GEMMs and the activation, and
    // for a dense MLP its exposed forward TP collectives (half of the block's).
    const double mlp_rerun_s = fc1_s + fc2_s + memory_s(k, act_rw * e * shared_ffn / t * T);
    const double mlp_rerun_flops = g.fc1.flops() + g.fc2.flops();
    const bool rerun_moe = b.moe && modules.has(M::Moe);
    if (!b.moe && modules.has(M::Mlp)) {
        out.selective_recompute_s += mlp_rerun_s + (mlp_tp ? out.fwd.tp_s / 2.0 : 0.0);
        module_flops += mlp_rerun_flops;
    }
    if (rerun_moe) {
        // The whole MoE half again, dispatch and combine included.
        out.selective_recompute_s += out.fwd.mlp_s + out.fwd.ep_s + (mlp_tp ? out.fwd.tp_s / 2.0 : 0.0);
    } else if (b.moe) {
        if (modules.has(M::MoeAct)) {
            out.selective_recompute_s +=
                memory_s(k, (act_rw * e * m.expert_ffn / c.etp + eager_moe.moe_act_recompute) * moe_copies);
        }
        if (modules.has(M::SharedExperts) && shared_ffn > 0) {
            out.selective_recompute_s += mlp_rerun_s;
            module_flops += mlp_rerun_flops;
        }
    }
    // Op-level checkpointing reruns what its policy did not save (op_checkpoint); of the
    // forward TP collectives the all-gathers (with SP; the reduce-scatter outputs are saved)
    // or the all-reduces.
    const bool op_level = tr.recompute == Recompute::SelectiveOp;
    OpCheckpoint op;
    if (op_level) {
        const double tp_rerun = x.sp ? out.fwd.tp_total_s / 2.0 : out.fwd.tp_total_s;
        op = op_checkpoint(x, b, attn_mem_fwd + mlp_mem_bytes, tp_rerun);
        out.selective_recompute_s = op.recompute_s;
    }

    // --- FLOPs ----------------------------------------------------------------------------
    const double dense_gemm_flops = (b.attention_gemm_flops + b.mlp_gemm_flops) * T / t;
    const double fwd_model = dense_gemm_flops + core.model_flops_fwd + expert_model_flops;
    const double fwd_exec = dense_gemm_flops + core.executed_flops_fwd + expert_model_flops * x.capacity;
    out.attention_flops_fwd = b.attention_gemm_flops * T / t + core.executed_flops_fwd;
    out.mlp_flops_fwd = fwd_exec - out.attention_flops_fwd;
    out.tp_bytes = c.tp > 1 ? T * h * e : 0.0;
    out.ep_bytes = ep_bytes;
    out.model_flops = 3.0 * fwd_model;
    out.hardware_flops = 3.0 * fwd_exec;
    out.recompute_flops_full = fwd_exec;
    out.recompute_flops_selective = op_level ? op.recompute_flops : module_flops + (rerun_moe ? out.mlp_flops_fwd : 0.0);

    // --- memory ---------------------------------------------------------------------------
    ActivationShape a;
    a.tokens = T;
    a.seq = seq;
    a.cp = c.cp;
    a.hidden = h;
    a.q_width = m.q_width * b.mixer_share;
    a.kv_width = m.kv_width * b.mixer_share;
    a.heads = m.heads;
    a.ffn = shared_ffn;
    a.gated = m.gated_mlp;
    a.output_norms = m.sandwich_norms;
    a.tp = t;
    a.sequence_parallel = x.sp;
    a.flash_attention = x.flash;
    a.selective = modules.has(M::CoreAttn);
    a.element_bytes = e;
    a.gemm_input_bytes = gemm_input_bytes(tr.dtype, e);
    a.hidden_dropout = m.hidden_dropout;
    a.attention_dropout = m.attention_dropout;
    a.top_k = b.moe ? m.top_k : 0;
    a.expert_ffn = m.expert_ffn;
    a.experts = m.experts;
    a.etp = c.etp;
    a.capacity_factor = tr.moe_capacity_factor;
    a.mla_latent = m.mla_latent;
    const BlockActivations parts = block_activations(a, b.moe);
    out.activation_bytes = parts.total() + b.mixer_activation_bytes * (e / 2.0) * T / t;
    if (!modules.empty()) {
        // What the modules' checkpoints discard; rebuilt for one block at a time during its
        // backward (the scores of core_attn excepted: Korthikanti et al.'s selective
        // accounting, which the tests check, leaves that transient out).
        const double freed = module_recompute_freed_bytes(parts, b.moe, modules);
        out.activation_bytes -= freed;
        out.recompute_working_bytes = freed;
    }
    if (op_level) {
        // The routed experts (grouped GEMMs) are kept as without recomputation: what the
        // MoE terms add to a dense block's activations.
        const double routed = block_activation_bytes(a, b.moe) - block_activation_bytes(a, false);
        const double saved = op.saved_bytes + routed;
        out.recompute_working_bytes = std::max(0.0, out.activation_bytes - saved);
        out.activation_bytes = saved;
    }
    out.checkpoint_bytes = block_checkpoint_bytes(a);
    out.dense_params = (b.attention_params + b.mlp_params) / t + b.norm_params + b.router_params;
    if (b.moe) {
        const double local_experts = static_cast<double>(m.experts) / c.ep;
        out.expert_params = local_experts * b.expert_params / c.etp;
    }
    return out;
}

EdgeCost embedding_cost(const Ctx& x) {
    const auto& c = x.c;
    EdgeCost out;
    const double share = x.sp ? c.tp : 1.0;
    const double bytes = c.tokens * x.m.hidden * c.element_bytes;
    // Lookup writes h per token; the vocabulary-parallel partial sums are all-reduced
    // (reduce-scattered with SP) in the forward; the backward of the all-reduce is free,
    // that of the reduce-scatter an all-gather.
    out.fwd.attention_s = memory_s(c.kernel, 2.0 * bytes / share);
    out.bwd.attention_s = memory_s(c.kernel, 2.0 * bytes / share);
    if (c.tp > 1) {
        out.fwd.tp_s = out.fwd.tp_total_s = x.sp ? reduce_scatter_s(c.link, c.tp_span, bytes)
                                                 : all_reduce_s(c.link, c.tp_span, bytes);
        out.bwd.tp_s = out.bwd.tp_total_s = x.sp ? all_gather_s(c.link, c.tp_span, bytes) : 0.0;
    }
    // Embedding dropout mask (Megatron applies hidden_dropout to the embedding output).
    out.activation_bytes = x.m.hidden_dropout ? x.m.hidden * c.tokens / share : 0.0;
    out.dense_params = x.m.embedding_params / c.tp + x.m.position_params;
    return out;
}

// Bytes each loss implementation moves per logit of `e` bytes, forward and backward.
// PyTorch's cross_entropy(logits.float()) runs one kernel per op, each reading its input and
// writing its output: the cast (read e, write 4), log-softmax (read 4 for the max, 4 for the
// sum, 4 again to write 4) and, backward, the loss gradient (write 4), the log-softmax
// backward (read the gradient and the output, 4 each, for the sum and the result, write 4)
// and the cast back (read 4, write e). flash-attn's fused kernel reads the 16-bit logits once
// forward (max, sum and loss in one pass per row) and once backward, writing the 16-bit
// gradient. Megatron-LM's and Transformer Engine's: write the logits, read them for max and
// sum, write the softmax; the backward reads and writes them again.
struct LossPassBytes {
    double fwd = 0, bwd = 0;
};
LossPassBytes loss_pass_bytes(CrossEntropy loss, double e) {
    switch (loss) {
        case CrossEntropy::Upcast: return {2.0 * e + 20.0, 24.0 + e};
        case CrossEntropy::FlashAttn: return {e, 2.0 * e};
        case CrossEntropy::VocabParallel:
        case CrossEntropy::Te:
        case CrossEntropy::TeInPlace: break;
    }
    return {e + 12.0, 8.0 + e};
}

EdgeCost head_cost(const Ctx& x, int pp, CrossEntropy loss) {
    const auto& c = x.c;
    const auto& m = x.m;
    EdgeCost out;
    const double t = c.tp;
    const double share = x.sp ? t : 1.0;
    const double T = c.tokens;
    const double bytes = T * m.hidden * c.element_bytes;
    const double head = gemm_s(c.kernel, head_gemm(m, c));
    // Final norm, then the loss over the logits (loss_pass_bytes).
    const double logits = T * m.vocab / t;
    out.fwd.attention_s = memory_s(c.kernel, 2.0 * c.element_bytes * m.hidden * T / share);
    const LossPassBytes loss_bytes = loss_pass_bytes(loss, c.element_bytes);
    out.fwd.mlp_s = head + memory_s(c.kernel, logits * loss_bytes.fwd);
    out.bwd.attention_s = 2.0 * out.fwd.attention_s;
    out.bwd.mlp_s = gemm_bwd_s(c.kernel, head_gemm(m, c)) + memory_s(c.kernel, logits * loss_bytes.bwd);
    if (t > 1) {
        // SP: all-gather before the head, reduce-scatter of its input gradient. Without SP
        // the input gradient is all-reduced. Three tiny all-reduces (max, sum, target).
        const double small = 3.0 * all_reduce_s(c.link, c.tp_span, 4.0 * T);
        out.fwd.tp_s = out.fwd.tp_total_s = (x.sp ? all_gather_s(c.link, c.tp_span, bytes) : 0.0) + small;
        out.bwd.tp_s = out.bwd.tp_total_s = x.sp ? reduce_scatter_s(c.link, c.tp_span, bytes)
                                                 : all_reduce_s(c.link, c.tp_span, bytes);
    }
    out.model_flops = 3.0 * m.head_gemm_flops * T / t;
    // Korthikanti et al. 2022 §4.3: final-norm and head inputs (2sbh/t each with SP) per
    // micro-batch in flight; the loss's peak over the logits (sbv/t) for the live one,
    // bytes per logit by implementation (loss_bytes_per_logit; 6 with Megatron-LM's own
    // cross entropy over bf16 logits). Time: Transformer Engine's loss is charged the
    // traffic of Megatron's (not modelled apart).
    out.activation_bytes = 2.0 * c.element_bytes * m.hidden * T / share;
    out.transient_bytes = loss_bytes_per_logit(loss, c.element_bytes) * logits;
    // The head (or, with tied embeddings on more than one stage, its copy of the embedding).
    const double head_params = m.tied_embeddings ? (pp > 1 ? m.embedding_params : 0.0) : m.head_params;
    out.dense_params = head_params / t + m.final_norm_params;
    return out;
}

int checked(int v, const char* field) {
    if (v < 1) {
        throw InputError("<layout>", field, std::string("must be at least 1, found ") + std::to_string(v));
    }
    return v;
}

}  // namespace

void prepare_layout_costs(const ModelProfile& m, const ClusterSpec& cl, const ParallelConfig& p,
                          const TrainingConfig& tr, LayoutCosts& c) {
    const auto& s = p.mesh;
    c.tp = checked(s.tp, "parallel.tp");
    c.cp = checked(s.cp, "parallel.cp");
    c.dp = checked(s.dp, "parallel.dp");
    c.pp = checked(s.pp, "parallel.pp");
    c.ep = checked(s.ep, "parallel.ep");
    c.etp = checked(s.etp, "parallel.etp");
    c.vpp = checked(p.vpp, "parallel.vpp");
    checked(tr.micro_batch_size, "training.micro_batch_size");
    checked(tr.seq_length, "training.seq_length");
    checked(m.layers, "model.num_layers");
    const long long per_step = static_cast<long long>(c.dp) * tr.micro_batch_size;
    c.micro_batches = checked(static_cast<int>(tr.global_batch_size / per_step), "training.global_batch_size");
    if (!s.experts_fold()) {
        throw InputError("<layout>", "parallel.ep", "etp×ep must divide tp×cp×dp");
    }
    c.edp = s.expert_data_parallel();
    c.gpus_per_node = std::max(1, cl.gpus_per_node);
    c.schedule = tr.schedule;
    c.recompute = tr.recompute;
    c.recompute_num_layers = tr.recompute_num_layers;
    c.recompute_modules = RecomputeSet(tr.recompute == Recompute::Selective, tr.recompute_modules);
    c.zero_stage = std::clamp(tr.zero_stage, 0, 3);
    c.fsdp_fp32_shards = tr.fsdp_fp32_shards;
    c.offload_optimizer = tr.offload_optimizer != Offload::None;
    c.offload_params = tr.offload_params != Offload::None;
    c.host_bytes_per_s = cl.host_link.bandwidth_bytes_per_s;
    c.host_latency_s = cl.host_link.latency_s;
    c.offload_activation_layers = std::max(0, tr.offload_activation_layers);
    c.dtype = tr.dtype;
    c.state_bytes = param_state_bytes(tr.dtype, tr.grad_reduce_in_bf16);
    c.kernel = kernel_model(cl, tr.dtype, tr.fp8_recipe, tr.attention_kernel);
    // Ranks that compute on the host (the CPU engine) have their own host model
    // (host_sharing.h); GPU ranks lose time to their host's launches.
    c.host_launches = cl.gpu.kind != "cpu" && cl.host_cores <= 0;
    c.cuda_graphs = tr.cuda_graphs;
    c.cuda_graph_modules = tr.cuda_graph_modules;
    c.link = link_model(cl);
    c.element_bytes = c.kernel.element_bytes;
    // Under fp8 and fp4 training the sequence-parallel all-gathers of a linear layer's input
    // move the quantized tensor, the reduce-scatters of its output the 16-bit one: Transformer
    // Engine quantizes the norm output before the forward all-gather and the output gradient
    // before the backward one (d0067d0d transformer_engine/pytorch/module/layernorm_linear.py:
    // 296-314, gather_along_first_dim(..., quantizer=input_quantizer); module/linear.py:1156,
    // quantizer=grad_output_quantizer; the userbuffers all-gather likewise, :303), as torchao's
    // Float8ColwiseParallel casts before its all-gather. torchtitan runs row-wise Float8 with
    // plain TP, 16-bit gathers (2887250b torchtitan/models/llama3/infra/parallelize.py:57-65).
    const bool rowwise = tr.dtype == DType::Fp8 && tr.fp8_recipe == Fp8Recipe::Rowwise;
    c.tp_gather_bytes = rowwise ? c.element_bytes : gemm_input_bytes(tr.dtype, c.element_bytes);
    c.tokens = static_cast<double>(tr.micro_batch_size) * tr.seq_length / c.cp;
    c.tp_overlap = std::clamp(cl.efficiency.tp_comm_overlap, 0.0, 1.0);
    c.tp_tiling = p.sequence_parallel && c.tp > 1 ? p.tp_comm_overlap : TpOverlap::None;
    c.dp_overlap = std::clamp(cl.efficiency.dp_comm_overlap, 0.0, 1.0);
    c.hbm_bytes = static_cast<double>(cl.gpu.hbm_bytes);
    c.reserved_fixed_bytes = static_cast<double>(std::max<std::int64_t>(0, cl.memory_reserve.fixed_bytes));
    c.fragmentation = std::clamp(cl.memory_reserve.fragmentation, 0.0, 1.0);
    c.peak_flops_per_s = c.kernel.peak_flops_per_s;

    const auto strides = mesh_strides(s);
    if (!strides) throw InputError("<layout>", "parallel.order", axis_order_error(s.order));
    const MeshStrides& st = *strides;
    const int gpn = c.gpus_per_node;
    c.tp_span = group_span(c.tp, st.tp, gpn);
    c.cp_span = group_span(c.cp, st.cp, gpn);
    c.dp_span = group_span(c.dp, st.dp, gpn);
    c.dpcp_span = group_span2(c.dp, st.dp, c.cp, st.cp, gpn);
    c.ep_span = group_span(c.ep, st.ep, gpn);
    c.etp_span = group_span(c.etp, st.etp, gpn);
    c.edp_span = group_span(c.edp, st.edp, gpn);
    c.zero_replicas = c.zero_stage >= 1 ? std::max(1, tr.zero_replicas) : 1;
    {
        const int r = c.zero_replicas;
        const int dp_shard = std::max(1, c.dp / r), edp_shard = std::max(1, c.edp / r);
        c.dense_shard_span = c.cp > 1 ? group_span2(dp_shard, st.dp, c.cp, st.cp, gpn) : group_span(dp_shard, st.dp, gpn);
        c.dense_replica_span = group_span(r, st.dp * dp_shard, gpn);
        c.expert_shard_span = group_span(edp_shard, st.edp, gpn);
        c.expert_replica_span = group_span(r, st.edp * edp_shard, gpn);
    }
    c.pp_crosses_nodes = c.pp > 1 && group_span(2, st.pp, gpn).crosses_nodes();
    auto interference = [&](const GroupSpan& g) {
        return std::clamp(g.crosses_nodes() ? cl.efficiency.inter_node_interference
                                            : cl.efficiency.intra_node_interference,
                          0.0, 0.9);
    };
    c.tp_interference = interference(c.tp_span);
    c.cp_interference = interference(c.cp_span);
    c.dp_interference = interference(c.cp > 1 ? c.dpcp_span : c.dp_span);
    c.overlap_grad_reduce = p.overlap_grad_reduce;
    c.overlap_param_gather = p.overlap_grad_reduce && p.overlap_param_gather;
    c.interleaved_group = std::max(c.pp, interleaved_group_size(c.pp, c.micro_batches));
    c.moe_dispatcher = p.moe_dispatcher;
    c.moe_flex_backend = p.moe_flex_backend;
    // The MoE all-to-all overlap's compute runs beside the dispatcher's kernels, which hold a
    // fixed number of SMs (core/cost/ep_comm_sms.h); the tier's figure where the GPU states
    // no SM count.
    c.ep_interference = ep_sm_interference(p.moe_dispatcher, p.moe_flex_backend,
                                           c.ep_span.crosses_nodes(), cl.gpu.sm_count,
                                           interference(c.ep_span));
    // The MoE all-to-all overlap where Megatron runs it (ParallelConfig::moe_a2a_overlap; the
    // validation refuses the rest, the search may not have checked).
    const bool a2a_overlap = p.moe_a2a_overlap && rules::moe_a2a_overlap_runs(c.ep, p.moe_dispatcher, c.pp, c.vpp,
                                                                          tr.recompute, tr.dtype, m.mtp_layers);
    c.a2a_paired_share = a2a_overlap ? a2a_overlap_paired_share(c.pp, c.vpp, c.micro_batches, c.interleaved_group) : 0.0;

    const bool sp = p.sequence_parallel && c.tp > 1;
    c.sequence_parallel = sp;
    const Ctx x{m, c, tr, sp, tr.flash_attention,
                tr.moe_capacity_factor > 0 ? tr.moe_capacity_factor : 1.0};
    c.dense = m.dense.present ? block_cost(x, m.dense, tr) : BlockCost{};
    c.moe = m.moe.present ? block_cost(x, m.moe, tr) : BlockCost{};
    c.embedding = embedding_cost(x);
    c.head = head_cost(x, c.pp, tr.cross_entropy);

    // Between stages travels one activation; with SP it is sequence-sharded, without SP
    // Megatron sends 1/tp of it and all-gathers inside the node (scatter-gather).
    const double act_bytes = c.tokens * m.hidden * c.element_bytes;
    c.p2p_bytes = act_bytes / c.tp;
    c.p2p_s = 0;
    if (c.pp > 1) {
        c.p2p_s = send_recv_s(c.link, c.pp_crosses_nodes, c.p2p_bytes);
        if (!sp && c.tp > 1) c.p2p_s += all_gather_s(c.link, c.tp_span, act_bytes);
    }
    c.tied_embedding_sync_s = 0;
    if (m.tied_embeddings && c.pp > 1) {
        const GroupSpan pair = group_span(2, st.pp * (c.pp - 1), gpn);
        const double bytes = m.embedding_params / c.tp * c.state_bytes.grad;
        c.tied_embedding_sync_s = all_reduce_s(c.link, pair, bytes);
    }
    c.tokens_per_step = static_cast<double>(tr.global_batch_size) * tr.seq_length;
    c.model_flops_per_step = c.tokens_per_step * model_flops_per_token(m, tr.seq_length);
}

ZeroExposure zero_exposure(double gather_per_pass_s, double reduce_per_micro_batch_s,
                           double fwd_compute_s, double bwd_compute_s, double dp_overlap,
                           bool forward_follows_backward) {
    ZeroExposure z;
    z.fwd_s = std::max(0.0, gather_per_pass_s - fwd_compute_s);
    const double reduce_window_s = bwd_compute_s + (forward_follows_backward ? fwd_compute_s : 0.0);
    z.bwd_s = std::max(0.0, gather_per_pass_s - bwd_compute_s) +
              std::max(0.0, reduce_per_micro_batch_s - dp_overlap * reduce_window_s);
    return z;
}

bool forward_follows_backward(const LayoutCosts& c) { return c.pp > 1 && c.schedule != Schedule::GPipe; }

GradSyncCost grad_sync_cost(const LayoutCosts& c, double dense_params, double expert_params) {
    const ParamStateBytes& b = c.state_bytes;
    GradSyncCost g;
    // Dense gradients are reduced over dp×cp (context-parallel ranks hold the same weights),
    // expert gradients over the expert-data-parallel group.
    const GroupSpan& dense = c.cp > 1 ? c.dpcp_span : c.dp_span;
    if (c.zero_stage == 0) {
        g.reduce_s = all_reduce_s(c.link, dense, dense_params * b.grad) +
                     all_reduce_s(c.link, c.edp_span, expert_params * b.grad);
        return g;
    }
    // ZeRO: reduce-scatter inside each shard group; with replicas (hybrid sharding) each
    // rank's shard is then all-reduced across them (Megatron-LM d98e8a64,
    // param_and_grad_buffer.py:700-760: reduce-scatter in the intra-instance group, all-reduce
    // of the local shard in the inter-instance group; FSDP2's HSDP likewise). The gathers stay
    // inside the shard group.
    const GroupSpan& dshard = c.dense_shard_span;
    const GroupSpan& eshard = c.expert_shard_span;
    double reduce = reduce_scatter_s(c.link, dshard, dense_params * b.grad) +
                    reduce_scatter_s(c.link, eshard, expert_params * b.grad);
    if (c.zero_replicas > 1) {
        reduce += all_reduce_s(c.link, c.dense_replica_span, dense_params * b.grad / dshard.size) +
                  all_reduce_s(c.link, c.expert_replica_span, expert_params * b.grad / eshard.size);
    }
    const double gather = all_gather_s(c.link, dshard, dense_params * b.weight) +
                          all_gather_s(c.link, eshard, expert_params * b.weight);
    if (c.zero_stage == 1) {
        g.reduce_s = reduce;
        g.gather_s = gather;
    } else if (c.zero_stage == 2) {
        g.per_micro_batch_reduce_s = reduce;
        g.gather_s = gather;
    } else {
        g.per_micro_batch_reduce_s = reduce;
        g.per_pass_gather_s = gather;
    }
    return g;
}

double optimizer_step_s(const LayoutCosts& c, double dense_params, double expert_params) {
    const ParamStateBytes& b = c.state_bytes;
    const double dense_shard = c.zero_stage >= 1 ? c.dense_shard_span.size : 1;
    const double expert_shard = c.zero_stage >= 1 ? c.expert_shard_span.size : 1;
    const double params = dense_params / dense_shard + expert_params / expert_shard;
    // Adam reads and writes every optimizer byte, reads the gradient, reads and writes the
    // weight.
    return memory_s(c.kernel, params * (2.0 * b.optimizer + b.grad + 2.0 * b.weight));
}

namespace {
double rank_shard_params(const LayoutCosts& c, double dense_params, double expert_params) {
    const double dense_shard = c.zero_stage >= 1 ? c.dense_shard_span.size : 1;
    const double expert_shard = c.zero_stage >= 1 ? c.expert_shard_span.size : 1;
    return dense_params / dense_shard + expert_params / expert_shard;
}
}  // namespace

double offload_step_s(const LayoutCosts& c, double dense_params, double expert_params) {
    if (!c.offload_optimizer || c.host_bytes_per_s <= 0) return 0;
    const ParamStateBytes& b = c.state_bytes;
    const double params = rank_shard_params(c, dense_params, expert_params);
    return c.host_latency_s + params * std::max(b.grad, b.weight) / c.host_bytes_per_s;
}

double offload_pass_s(const LayoutCosts& c, double dense_params, double expert_params) {
    if (!c.offload_params || c.host_bytes_per_s <= 0) return 0;
    const ParamStateBytes& b = c.state_bytes;
    return c.host_latency_s + rank_shard_params(c, dense_params, expert_params) * b.weight / c.host_bytes_per_s;
}

}  // namespace meshwork::cost
