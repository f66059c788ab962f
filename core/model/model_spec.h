// The architecture of a transformer model, independent of how it is parallelised.
#pragma once

#include <cstdint>
#include <string>

namespace meshwork {

enum class NormKind { RmsNorm, LayerNorm };
enum class MlpKind { Dense, Gated };  // Dense: up + down (GELU); Gated: gate + up + down (SwiGLU)

// Multi-head latent attention (DeepSeek-V2/V3). q_lora_rank 0 means Q is projected directly.
struct MlaDims {
    std::int64_t q_lora_rank = 0;
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_nope_head_dim = 0;
    std::int64_t qk_rope_head_dim = 0;
    std::int64_t v_head_dim = 0;
    bool operator==(const MlaDims&) const = default;
};

// Mixture of experts: routed experts with top-k routing, optional shared experts.
struct MoeSpec {
    int num_experts = 0;                   // routed experts; 0 = dense model
    int top_k = 0;                         // experts per token
    std::int64_t expert_ffn_hidden = 0;    // hidden size of one routed expert
    int num_shared_experts = 0;            // always-active experts
    std::int64_t shared_ffn_hidden = 0;    // hidden size of all shared experts together
    bool shared_expert_gate = false;       // Qwen2-MoE scales the shared expert by a gate
    bool router_bias = false;              // DeepSeek-V3's e_score_correction_bias
    std::string router_score = "softmax";  // router score function: softmax or sigmoid (V3)
    int first_k_dense = 0;                 // the first k blocks use a dense MLP
    int layer_freq = 1;                    // every layer_freq-th block (after first_k_dense) is MoE
    bool operator==(const MoeSpec&) const = default;
};

// Rotary position embeddings (not used with learned positions).
struct RopeSpec {
    double theta = 10000;      // base (rope_theta; Megatron-LM --rotary-base)
    double percent = 1.0;      // share of each head's dims that rotate (NeoX: 0.25)
    std::string scaling;       // "" none, "linear", "llama3" (Llama 3.1) or "yarn" (DeepSeek)
    double factor = 1.0;       // the scaling factor
    bool operator==(const RopeSpec&) const = default;
};

struct ModelSpec {
    std::string name;        // preset name or file stem
    std::string family;      // Hugging Face model_type: llama, mixtral, gpt2, deepseek_v3, ...
    std::int64_t hidden_size = 0;
    int num_layers = 0;
    int num_heads = 0;
    int num_kv_heads = 0;
    std::int64_t head_dim = 0;
    std::int64_t ffn_hidden_size = 0;  // dense MLP hidden size
    std::int64_t vocab_size = 0;
    std::int64_t max_position_embeddings = 0;
    bool tie_embeddings = false;
    bool learned_position_embeddings = false;  // GPT-2/GPT-3
    bool qkv_bias = false;                     // biases on Q, K, V (Qwen2, GPT-2)
    bool linear_bias = false;                  // biases on every linear layer (GPT-2, NeoX)
    NormKind norm = NormKind::RmsNorm;
    MlpKind mlp = MlpKind::Gated;
    bool uses_mla = false;
    MlaDims mla;
    MoeSpec moe;
    RopeSpec rope;
    double norm_eps = 1e-5;                    // epsilon of every norm
    bool qk_norm = false;                      // RMSNorm of Q and K per head (Qwen3, Gemma 3)
    std::int64_t sliding_window = 0;           // attention window in tokens; 0 = full context
    int mtp_layers = 0;                        // DeepSeek-V3 multi-token prediction layers
    // Dropout probabilities in training. A mask is stored for the backward only when the
    // probability is above 0 (PyTorch's dropout returns its input at p = 0): Llama-family
    // configs say 0, GPT-2/GPT-3 and Megatron-LM's defaults 0.1.
    double hidden_dropout = 0;                 // after attention and MLP, and on the embedding
    double attention_dropout = 0;              // on the attention probabilities

    [[nodiscard]] bool is_moe() const { return moe.num_experts > 0; }
    // Whether transformer block `block` (0-based) has an MoE layer instead of a dense MLP.
    [[nodiscard]] bool is_moe_block(int block) const;
    [[nodiscard]] int num_moe_blocks() const;
    // Attention variant in words: "MHA", "GQA", "MQA" or "MLA".
    [[nodiscard]] std::string attention_kind() const;

    bool operator==(const ModelSpec&) const = default;
};

}  // namespace meshwork
