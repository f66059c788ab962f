// The per-model constants the cost model needs, computed once per model: the shape, the
// parameters and the forward FLOPs of one dense block and of one MoE block, the embedding
// and the output head. Everything the estimate multiplies by a layout's sizes comes from
// here, so that estimating a layout never walks the layer graph again.
#pragma once

#include <cstdint>

#include "core/model/model_spec.h"

namespace meshwork::cost {

// One transformer block kind (all dense blocks of a model are alike, so are all MoE ones).
struct BlockProfile {
    bool present = false;   // the model has at least one block of this kind
    bool moe = false;
    // Parameters, split by how tensor parallelism shards them.
    double attention_params = 0;  // Q, K, V, O projections (+ biases): sharded over tp
    double norm_params = 0;       // the two norms of the block: replicated
    double mlp_params = 0;        // dense MLP (or MoE shared experts): sharded over tp
    double router_params = 0;     // MoE router: replicated
    double expert_params = 0;     // one routed expert: sharded over etp
    // Forward FLOPs per token (2 per multiply-add).
    double attention_gemm_flops = 0;       // Q, K, V, O projections
    double score_flops_per_context = 0;    // QK^T and AV, per token of attended context
    double mlp_gemm_flops = 0;             // dense MLP or shared experts
    double router_flops = 0;
    double expert_gemm_flops = 0;          // one routed expert
    // Local attention (sliding window or chunks): the share of this kind's blocks that are
    // local, and their window. Score FLOPs scale with the keys attended; stored activations
    // do not (fused attention keeps Q, K, V and the output whatever the mask).
    double local_share = 0;
    std::int64_t local_tokens = 0;
    bool chunked = false;
    // Hybrid models (ModelSpec::block_kinds): every figure above is the mean over this kind's
    // blocks; the share of them with a mixer (Nemotron-H's MoE layers have none), and the
    // mixers' scan FLOPs and extra stored bytes per token (layer_kind_cost.h), also means.
    double mixer_share = 1;
    double scan_flops = 0;
    double mixer_activation_bytes = 0;  // at 2 bytes per element
    // Keys a query attends to on average over this kind's blocks, causal, at `seq` tokens.
    [[nodiscard]] double causal_context(double seq) const;
};

struct ModelProfile {
    // Shape.
    double hidden = 0;          // h
    double q_width = 0;         // query heads × head dim (MLA: heads × (nope + rope))
    double kv_width = 0;        // key (= value) width; MLA: the value width
    double head_dim = 0;        // per head width of the score products
    double heads = 0;
    double ffn = 0;             // dense MLP hidden
    double expert_ffn = 0;
    double shared_ffn = 0;
    double vocab = 0;
    double mla_latent = 0;      // MLA: kv_lora_rank (+ q_lora_rank) stored per token
    // MLA's up-projections (what "mla_up_proj" recomputation reruns): Q from the q latent
    // (q_lora_rank → heads·(nope + rope); 0 when Q is projected directly from h) and K, V
    // from the kv latent (kv_lora_rank → heads·(nope + v)).
    double mla_q_lora = 0, mla_q_up_width = 0;
    double mla_kv_lora = 0, mla_kv_up_width = 0;
    bool gated_mlp = false;
    bool sandwich_norms = false;  // ModelSpec::sandwich_norms: norms on the halves' outputs too
    // The routed experts' eager passes (moe_eager_passes.h): the activation clamps its
    // halves (gpt-oss's swiglu_limit), the experts' linear layers have biases.
    bool glu_clamped = false;
    bool expert_bias = false;
    bool hidden_dropout = false;     // masks of the residual and embedding dropouts are stored
    bool attention_dropout = false;  // unfused attention stores a mask and a dropped copy
    int layers = 0;
    int mtp_layers = 0;  // multi-token prediction layers (the MoE all-to-all overlap allows one)
    int experts = 0;
    int top_k = 0;

    BlockProfile dense;
    BlockProfile moe;

    double embedding_params = 0;     // word embeddings: sharded over tp (vocab-parallel)
    double position_params = 0;      // learned positions: replicated
    double final_norm_params = 0;
    double head_params = 0;          // output head, 0 when tied
    bool tied_embeddings = false;
    double head_gemm_flops = 0;      // per token, forward

    // Whole-model forward FLOPs per token: gemm_flops + score_flops_per_context × context.
    double total_gemm_flops = 0;
    double total_score_flops_per_context = 0;
    double local_score_flops_per_context = 0;  // the part of it in local-attention blocks
    std::int64_t local_tokens = 0;             // their window or chunk
    bool chunked = false;
    double params_total = 0;
    double params_active = 0;
};

ModelProfile build_model_profile(const ModelSpec& spec);

// Model FLOPs per token of one training step (forward + backward = 3 × forward, causal
// attention, no recomputation): the numerator of MFU, the same figure `describe` prints.
double model_flops_per_token(const ModelProfile& m, double seq_length);

}  // namespace meshwork::cost
