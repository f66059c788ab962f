// Device memory of training state and activations.
//
// Parameter state follows Megatron-LM's distributed-optimizer table (bytes per parameter:
// fp16 params 20 = 2 param + 2 grad + 16 optimizer (fp32 main param, main grad, Adam m, v);
// bf16 params 18 = 2 + 4 (fp32 grad) + 12; fp32 16 = 4 + 4 + 8). ZeRO-1 (the distributed
// optimizer) divides the optimizer part over the data-parallel group, ZeRO-2 also the
// gradients, ZeRO-3 also the parameters (Rajbhandari et al. 2020).
//
// Activations follow Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", generalised from d_ff = 4h, MHA and GeLU to any widths, GQA, gated
// MLPs and MoE; docs/cost-model.md derives each term.
#pragma once

#include "core/layout/layout.h"

namespace meshwork::cost {

struct ParamStateBytes {
    double weight = 0;     // bytes per parameter of the model weights
    double grad = 0;       // gradients as kept for the optimizer
    double optimizer = 0;  // master weights, master gradients and Adam moments
};
// `grad_reduce_in_bf16`: bf16/fp8 training that keeps and reduces gradients in bf16 (2 bytes
// instead of 4; the optimizer part is unchanged: the fp32 gradient of the optimizer's
// shard exists only during the step, when the activations are gone).
ParamStateBytes param_state_bytes(DType dtype, bool grad_reduce_in_bf16);

struct ParamMemory {
    double params_bytes = 0;
    double grads_bytes = 0;
    double optimizer_bytes = 0;
};
// Memory of `params` parameters held by a rank, with ZeRO `zero_stage` sharding over a
// group of `shard_group` ranks (dp, or dp×cp for dense parameters with context parallelism,
// edp for experts).
// `fp32_shards` (training.fsdp_fp32_shards, ZeRO-3 only): the shard is the fp32 master, which
// the optimizer bytes already count, and the gradient shard is fp32.
ParamMemory param_memory(double params, const ParamStateBytes& bytes, int zero_stage, double shard_group,
                         bool fp32_shards = false);

// fp8 as Transformer Engine runs it: the GEMM inputs saved for the backward are fp8
// (1 byte). Weights: production fp8 recipes keep fp8 parameters (--fp8-param-gather: the
// distributed optimizer casts its fp32 master into fp8 weights), an fp8 copy and its
// transpose on Hopper, 2 bytes per parameter like bf16, so the weight bytes stay those of
// the bf16 table. Without fp8 parameters TE would keep 2 more bytes per GEMM weight (its
// transpose cache beside the bf16 weight); not modelled. Amax histories are a few floats
// per tensor (not counted).
constexpr double kFp8Bytes = 1;
// NVFP4 (fp4 training): the saved GEMM inputs are NVFP4, half a byte a value and an E4M3
// scale per 16 (Transformer Engine's NVFP4BlockScaling, d0067d0d
// transformer_engine/common/recipe/__init__.py:493-497); weights as with fp8 (Megatron-Bridge's
// NVFP4 recipes gather fp4 parameters, --fp4-param-gather: the weight bytes of the bf16 table).
constexpr double kNvfp4Bytes = 0.5 + 1.0 / 16;
// The saved GEMM input's bytes per value in `dtype` training whose other activations take
// `element_bytes`.
[[nodiscard]] inline double gemm_input_bytes(DType dtype, double element_bytes) {
    return dtype == DType::Fp8 ? kFp8Bytes : dtype == DType::Fp4 ? kNvfp4Bytes : element_bytes;
}

// What one transformer block stores per micro-batch for its backward pass.
struct ActivationShape {
    double tokens = 0;        // s·b/cp: tokens of one micro-batch on one CP rank
    double seq = 0;           // full sequence length s (attended context)
    double cp = 1;
    double hidden = 0;        // h
    double q_width = 0;       // a·d_head (= h for MHA)
    double kv_width = 0;      // key width (= h for MHA, smaller for GQA)
    double heads = 0;         // a
    double ffn = 0;           // MLP hidden (d_ff), or shared-expert hidden in an MoE block
    bool gated = false;       // SwiGLU: three ffn-wide tensors instead of two
    bool output_norms = false;  // norms on the attention's and MLP's outputs (Gemma's sandwich)
    double tp = 1;            // t
    bool sequence_parallel = false;
    bool flash_attention = false;  // fused attention stores no s×s scores
    bool selective = false;        // core_attn recomputation drops the s×s scores
    double element_bytes = 2;      // 16-bit activations (Korthikanti's assumption)
    double gemm_input_bytes = 2;   // saved GEMM inputs: the element size, 1 with fp8 (gemm_input_bytes())
    // Dropout masks (1 byte per element) exist only where the probability is above 0;
    // Korthikanti's accounting assumes both dropouts on.
    bool hidden_dropout = true;    // the two bias-dropout-adds of the block
    bool attention_dropout = true; // unfused attention: mask and dropped copy of the scores
    // MoE block: experts per token and their width; capacity factor 0 = dropless.
    double top_k = 0;
    double expert_ffn = 0;
    double experts = 0;
    double etp = 1;
    double capacity_factor = 0;
    double mla_latent = 0;    // MLA: compressed latent width stored per token
};

// What one block stores for one micro-batch, term by term: the one owner of each term, for
// the total (block_activation_bytes) and for what module-level recomputation frees
// (module_recompute_freed_bytes). Per micro-batch, bytes.
struct BlockActivations {
    double norm_inputs = 0;      // the two norms' inputs, 2·e·h (÷t with SP); four with output norms
    double norm_outputs = 0;     // their outputs, the QKV and first MLP / router GEMM inputs, 2·g·h
    double dropout_masks = 0;    // the two bias-dropout-add masks, 2·h bytes
    double qkv = 0;              // Q, K, V: e·(q + 2·kv) ÷ t
    double proj_input = 0;       // output projection's input, g·q ÷ t
    double mla_latent = 0;       // MLA's compressed latents, e·(kv_lora + q_lora) ÷ t
    double mlp_act = 0;          // dense MLP (or shared experts): FC1 outputs, (1 or 2)·e·d_ff ÷ t
    double mlp_fc2_input = 0;    //   and the activation's output, g·d_ff ÷ t
    double expert_io = 0;        // routed copies: the permuted inputs, g·h (outputs are not kept)
    double expert_act = 0;       //   FC1 outputs, (1 or 2)·e·d_e
    double expert_fc2_input = 0; //   the activation's output, g·d_e
    double router = 0;           // fp32 router logits, 4·E ÷ t
    double scores = 0;           // s×s attention terms (score_activation_bytes)
    [[nodiscard]] double total() const {
        return norm_inputs + norm_outputs + dropout_masks + qkv + proj_input + mla_latent + mlp_act +
               mlp_fc2_input + expert_io + expert_act + expert_fc2_input + router + scores;
    }
};
BlockActivations block_activations(const ActivationShape& a, bool moe_block);

// Bytes one block stores for one micro-batch without full recomputation. With MHA,
// d_ff = 4h, a dense GeLU MLP and 16-bit values this is Korthikanti's Table 2:
// sbh(34 + 5as/h) (t = 1), sbh(10 + 24/t + 5as/(ht)) (TP), sbh/t·(34 + 5as/h) (TP+SP),
// the same without the 5as/h term for selective recomputation or fused attention.
double block_activation_bytes(const ActivationShape& a, bool moe_block);
// What Megatron-LM's module-level recomputation frees of one block's activations
// (recompute_modules, transformer_config.py:560-583 at d98e8a64; docs/cost-model.md,
// "Module-level recomputation"): layernorm the outputs of the norms that are modules of
// their own (recomputable_norm_outputs; transformer_layer.py:470-539, :712-718, :820-825,
// output-discarding checkpoints); mla_up_proj Q, K and V
// (multi_latent_attention.py:983-988, :455-458); moe_act the routed experts' activation
// output (moe/experts.py:269-275, :1020-1030); mlp a dense block's MLP intermediates (its
// input, the norm output, is the checkpoint's argument and stays; transformer_layer.py:
// 992-1010); shared_experts the same of an MoE block's shared experts (moe/
// shared_experts.py:158); moe the whole MoE half: routed copies, router logits and shared
// experts (moe/moe_layer.py:246-251). core_attn's score terms are not counted here: they
// are `selective` in ActivationShape, as Korthikanti et al. count them.
double module_recompute_freed_bytes(const BlockActivations& b, bool moe_block, const RecomputeSet& modules);
// The norms `layernorm` recomputation reruns in a block: those Megatron-LM's Transformer
// Engine layer spec keeps as modules of their own (d98e8a64), the pre-MLP norm of an MoE
// block and the input norm of an MLA block; the others are fused into the next GEMM
// (TE's LayerNormLinear), which keeps their output. 0, 1 or 2.
int recomputable_norms(bool moe_block, bool mla);
// What `layernorm` recomputation frees: the outputs of those norms, each half of
// `norm_outputs`.
double recomputable_norm_outputs(const BlockActivations& b, bool moe_block);

// Full recomputation keeps only the block input: 2sbh (2sbh/t with SP).
double block_checkpoint_bytes(const ActivationShape& a);
// The s×s attention score term alone: 5as²b/t (0 with fused attention; 2as²b/t, the softmax
// output alone, without attention dropout).
double score_activation_bytes(const ActivationShape& a);

// Peak bytes per logit of the loss over the logits of the live micro-batch, `logit_bytes`
// the logits' dtype (the head's output: 2 with bf16, fp16 and fp8 training, 4 with fp32).
// The most of the loss's forward and its backward down to the head's input gradient; the
// saved fp32 tensor is what stays between the two. Upstream, term by term, in
// docs/cost-model.md ("Embedding, head, buffers, reserve"):
//   VocabParallel  e + 4 (4 with fp32 logits, cast to themselves and worked on in place)
//   Upcast         12: saved fp32 log-softmax, loss gradient, log-softmax input gradient
//   Te             e + 4: the logits and TE's fp32 gradient (TE 2.18 on)
//   TeInPlace      e: TE's gradient written over the logits (before TE 2.18)
double loss_bytes_per_logit(CrossEntropy loss, double logit_bytes);

// Forward passes (of model chunks) whose activations pipeline rank `rank` holds at its
// peak: 1F1B min(m, p − r); interleaved min(m·v, 2(p − r − 1) + (v − 1)N + 1) chunks with N
// the micro-batch group (interleaved_group_size: p when p divides m);
// GPipe all m·v. Equal to PipelineSchedule::max_in_flight for the same shape.
int in_flight_passes(Schedule schedule, int pp, int vpp, int micro_batches, int rank);

}  // namespace meshwork::cost
