#include "core/cost/memory_model.h"

#include <algorithm>

#include "core/schedule/pipeline_schedule.h"

namespace meshwork::cost {

ParamStateBytes param_state_bytes(DType dtype, bool grad_reduce_in_bf16) {
    switch (dtype) {
        case DType::Fp16: return {2, 2, 16};
        case DType::Bf16:
        case DType::Fp8:  // fp8 and fp4 training keep bf16 weights (Transformer Engine)
        case DType::Fp4:
            return {2, grad_reduce_in_bf16 ? 2.0 : 4.0, 12};
        case DType::Fp32:
        case DType::Tf32: return {4, 4, 8};
    }
    return {2, 4, 12};
}

ParamMemory param_memory(double params, const ParamStateBytes& b, int zero_stage, double shard_group,
                         bool fp32_shards) {
    const double d = std::max(1.0, shard_group);
    // PyTorch FSDP under mixed precision (torch/distributed/fsdp: FSDP2's FSDPParam keeps the
    // sharded parameter in its original dtype and casts to param_dtype for the all-gather;
    // the reduced gradient is cast back to it): no training-precision shard, an fp32 gradient
    // shard. Low-precision weights only: in fp32 training the weight is the master already.
    const bool master_is_shard = zero_stage >= 3 && fp32_shards && b.weight < 4.0;
    ParamMemory m;
    m.params_bytes = master_is_shard ? 0.0 : params * b.weight / (zero_stage >= 3 ? d : 1.0);
    m.grads_bytes = params * (master_is_shard ? 4.0 : b.grad) / (zero_stage >= 2 ? d : 1.0);
    m.optimizer_bytes = params * b.optimizer / (zero_stage >= 1 ? d : 1.0);
    return m;
}

double loss_bytes_per_logit(CrossEntropy loss, double logit_bytes) {
    const double e = logit_bytes;
    switch (loss) {
        case CrossEntropy::VocabParallel:
            // Megatron-LM d98e8a64: the head's logits stay referenced by the model's forward
            // (models/gpt/gpt_model.py:807, passed on at :839) while the loss
            // (language_module.py:200 unfused, :197-198 fused native; both call
            // tensor_parallel/cross_entropy.py:25) makes its fp32 copy with .float() and
            // works on it in place (:42, :62, :77), saving it as the softmax (:119 of
            // fusions/fused_cross_entropy.py, :181 here). The backward turns that into the
            // gradient in place (:88, :111-114) and casts it back to the logits' dtype
            // beside itself (unfused: the autograd engine casts the function's fp32 gradient
            // to its input's dtype; fused: .to(bfloat16), fused_cross_entropy.py:82). fp32
            // logits: .float() is the tensor itself, 4 bytes unfused (Megatron's default,
            // model_parallel_config.py:320); the native fusion's bf16 cast would make that 6
            // (fp32 training fused: not modelled).
            return e < 4.0 ? e + 4.0 : 4.0;
        case CrossEntropy::Upcast:
            // When the backward starts: the fp32 log-softmax output (saved), the loss gradient
            // and the log-softmax input gradient (the forward's logits, fp32 copy and
            // log-softmax are e + 8).
            return 12.0;
        case CrossEntropy::Te:
            // Transformer Engine d0067d0d, pytorch/triton/cross_entropy.py:58: an fp32
            // gradient beside the logits (pytorch/cross_entropy.py:62 saves it); the
            // backward returns it and autograd casts it to the logits' dtype beside it. Since
            // TE #3193 (01bbe3eea, first released in v2.18).
            return e + 4.0;
        case CrossEntropy::TeInPlace:
            // TE before #3193 (71bbefbf, pinned by Megatron-Bridge v0.4.0 pyproject.toml:122):
            // the kernel stores the gradient over the logits in their dtype
            // (common/triton/cross_entropy.py:190) and returns them (pytorch/triton/
            // cross_entropy.py:111): nothing beside the logits.
            return e;
        case CrossEntropy::FlashAttn:
            // flash-attn's CrossEntropyLoss (flash_attn/losses/cross_entropy.py, the copy of
            // its v1.0.9 kernel llm-foundry vendors): the forward saves the logits and one
            // fp32 log-sum-exp per row; the backward writes the gradient into a new tensor of
            // the logits' dtype (inplace_backward off, the default): two 16-bit copies.
            return 2.0 * e;
    }
    return e + 4.0;
}

double score_activation_bytes(const ActivationShape& a) {
    if (a.flash_attention || a.selective) return 0;
    // Softmax output (2 bytes), dropout mask (1) and dropout output (2): Korthikanti's
    // 5 bytes per element of the a×s×s matrix; each CP rank holds its s/cp queries
    // against all s keys. Without attention dropout the context GEMM reads the softmax
    // output itself.
    const double bytes_per_score = a.attention_dropout ? 5.0 : 2.0;
    return bytes_per_score * a.heads / a.tp * a.tokens * a.seq;
}

BlockActivations block_activations(const ActivationShape& a, bool moe_block) {
    const double e = a.element_bytes;
    const double g = a.gemm_input_bytes;  // = e except with fp8 GEMMs
    const double t = std::max(1.0, a.tp);
    const double T = a.tokens;
    BlockActivations b;
    // Replicated over TP unless sequence parallel: the two norm inputs, the inputs of the
    // QKV and first MLP GEMMs (e·h each) and the two dropout masks (1 byte per element,
    // only with hidden dropout).
    const double sp = a.sequence_parallel ? t : 1.0;
    // Output norms (Gemma) keep their inputs too, the projection's and FC2's outputs; their
    // outputs feed the residual adds and are not kept.
    b.norm_inputs = (a.output_norms ? 4.0 : 2.0) * e * a.hidden / sp * T;
    b.norm_outputs = 2.0 * g * a.hidden / sp * T;
    b.dropout_masks = (a.hidden_dropout ? 2.0 * a.hidden : 0.0) / sp * T;
    // Sharded over TP: Q, K, V, and the input of the output projection (a GEMM input).
    b.qkv = e * (a.q_width + 2.0 * a.kv_width) / t * T;
    b.proj_input = g * a.q_width / t * T;
    b.mla_latent = e * a.mla_latent / t * T;
    // MLP (dense, or the shared experts of an MoE block): GeLU input and FC2 input
    // (2·e·d_ff); gated MLPs keep gate and up outputs and their product (3·e·d_ff). The
    // FC2 input is a GEMM input.
    b.mlp_act = (a.gated ? 2.0 : 1.0) * e * a.ffn / t * T;
    b.mlp_fc2_input = g * a.ffn / t * T;
    if (moe_block && a.top_k > 0) {
        // Each token is dispatched to top-k experts: the permuted input (FC1's GEMM input,
        // h wide, held whole on each etp rank) and the expert intermediates; the router
        // logits in fp32. The expert output is not kept: Megatron-LM multiplies the routing
        // probabilities in the experts' activation (moe/experts.py:943-1017 at d98e8a64), so
        // every dispatcher's combine unpermutes without probabilities (token_dispatcher.py:
        // 346-352, :891-899, :1460-1467; moe_utils.py:544-556), and Transformer Engine's
        // fused unpermute, given no merging probs, saves only its index map
        // (transformer_engine/pytorch/permutation.py:800-808 at d0067d0d; with probs it would
        // save its input, the expert output). Tokens are sequence-sharded over
        // tp before dispatch. A rank handles k·etp/t token copies per token of the
        // micro-batch (balanced routing), each with an h-wide input and d_ff/etp-wide
        // intermediates.
        const double etp = std::max(1.0, a.etp);
        const double padding = a.capacity_factor > 0 ? a.capacity_factor : 1.0;
        const double copies = a.top_k / t * padding * T;
        b.expert_io = copies * g * a.hidden * etp;
        b.expert_act = copies * (a.gated ? 2.0 : 1.0) * e * a.expert_ffn;
        b.expert_fc2_input = copies * g * a.expert_ffn;
        b.router = 4.0 * a.experts / t * T;
    }
    b.scores = score_activation_bytes(a);
    return b;
}

double block_activation_bytes(const ActivationShape& a, bool moe_block) {
    return block_activations(a, moe_block).total();
}

int recomputable_norms(bool moe_block, bool mla) {
    // Megatron-LM recomputes a norm only where it is a module of its own (transformer_layer.py:
    // 475-477, :523-527 at d98e8a64: not an IdentityOp). In the Transformer Engine layer spec
    // the attention's input norm is fused into the QKV projection unless the block has MLA
    // (TELayerNormColumnParallelLinear, gpt_layer_specs.py:319-336; MLA's separate norm
    // :295-316, fused only with mla_down_proj_fusion, default off, transformer_config.py:3338),
    // and the pre-MLP norm is a module only in MoE blocks (:336, :313); a dense block fuses it
    // into FC1. A fused norm's output stays: TE's LayerNormLinear keeps it for its weight
    // gradient.
    return (mla ? 1 : 0) + (moe_block ? 1 : 0);
}

double recomputable_norm_outputs(const BlockActivations& b, bool moe_block) {
    return b.norm_outputs / 2.0 * recomputable_norms(moe_block, b.mla_latent > 0);  // each norm output: half
}

double module_recompute_freed_bytes(const BlockActivations& b, bool moe_block, const RecomputeSet& modules) {
    using M = RecomputeModule;
    double freed = 0;
    if (modules.has(M::Layernorm)) freed += recomputable_norm_outputs(b, moe_block);
    if (modules.has(M::MlaUpProj)) freed += b.qkv;
    if (!moe_block) {
        if (modules.has(M::Mlp)) freed += b.mlp_act + b.mlp_fc2_input;
        return freed;
    }
    if (modules.has(M::Moe)) {
        // The whole MoE half, shared experts and the activation output included.
        return freed + b.expert_io + b.expert_act + b.expert_fc2_input + b.router + b.mlp_act + b.mlp_fc2_input;
    }
    if (modules.has(M::MoeAct)) freed += b.expert_fc2_input;
    if (modules.has(M::SharedExperts)) freed += b.mlp_act + b.mlp_fc2_input;
    return freed;
}

double block_checkpoint_bytes(const ActivationShape& a) {
    const double t = std::max(1.0, a.tp);
    return a.element_bytes * a.hidden * a.tokens / (a.sequence_parallel ? t : 1.0);
}

int in_flight_passes(Schedule schedule, int pp, int vpp, int m, int rank) {
    pp = std::max(1, pp);
    vpp = std::max(1, vpp);
    m = std::max(1, m);
    rank = std::clamp(rank, 0, pp - 1);
    switch (schedule) {
        case Schedule::GPipe: return m * vpp;
        case Schedule::OneFOneB: return std::min(m, pp - rank);
        case Schedule::Interleaved: {
            const int total = m * vpp;
            // Megatron's warm-up with its micro-batch group (schedules.py:964-965).
            const int group = std::max(pp, interleaved_group_size(pp, m));
            const int warmup = std::min(total, (pp - rank - 1) * 2 + (vpp - 1) * group);
            return std::min(total, warmup + 1);
        }
    }
    return m;
}

}  // namespace meshwork::cost
