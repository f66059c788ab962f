// The architecture of a transformer model, independent of how it is parallelised.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
    bool shared_expert_gate = false;       // Qwen2-MoE scales the shared expert by a gate (h params)
    bool router_bias = false;              // DeepSeek-V3's e_score_correction_bias (E params)
    std::string router_score = "softmax";  // router score function: softmax or sigmoid (V3, Llama 4)
    int first_k_dense = 0;                 // the first k blocks use a dense MLP
    int layer_freq = 1;                    // every layer_freq-th block (after first_k_dense) is MoE
    bool operator==(const MoeSpec&) const = default;
};

// What mixes tokens in a block. Attention is softmax attention (full, or local by the
// sliding-window/chunk fields below); LinearAttention is Gated DeltaNet (Yang et al., "Gated
// Delta Networks", ICLR 2025; Qwen3-Next); Mamba2 is Mamba-2's SSD mixer (Dao & Gu, "Transformers
// are SSMs", ICML 2024; Nemotron-H); SparseAttention is DeepSeek sparse attention, MLA whose
// queries attend only the top-k keys a lightning indexer picks (DeepSeek-V3.2-Exp, 2025);
// None: the block has no mixer (Nemotron-H's MLP-only and MoE-only layers).
enum class MixerKind { Attention, LinearAttention, Mamba2, SparseAttention, None };
// What follows the mixer: Auto = ModelSpec::moe's first_k_dense / layer_freq rule decides
// dense MLP or MoE; None: the block has no MLP (Nemotron-H's Mamba and attention layers).
enum class FfnKind { Auto, Dense, Moe, None };
struct BlockKind {
    MixerKind mixer = MixerKind::Attention;
    FfnKind ffn = FfnKind::Auto;
    bool operator==(const BlockKind&) const = default;
};
std::string to_string(MixerKind kind);

// Gated DeltaNet (transformers configuration_qwen3_next.py: linear_*): key heads are shared
// by groups of value heads as GQA shares K and V.
struct LinearAttentionDims {
    int num_key_heads = 0;
    int num_value_heads = 0;
    std::int64_t key_head_dim = 0;
    std::int64_t value_head_dim = 0;
    int conv_kernel = 4;
    bool operator==(const LinearAttentionDims&) const = default;
};

// Mamba-2 (transformers configuration_nemotron_h.py: mamba_*, ssm_state_size, n_groups).
struct Mamba2Dims {
    int num_heads = 0;
    std::int64_t head_dim = 0;
    std::int64_t state_dim = 0;   // N
    int num_groups = 1;           // B and C are shared by the heads of a group
    int conv_kernel = 4;
    int chunk_size = 128;         // the SSD kernel's chunk (Q)
    [[nodiscard]] std::int64_t inner() const { return num_heads * head_dim; }
    // The causal convolution runs over x, B and C together.
    [[nodiscard]] std::int64_t conv_dim() const { return inner() + 2 * num_groups * state_dim; }
    bool operator==(const Mamba2Dims&) const = default;
};

// DeepSeek sparse attention's lightning indexer (config.json index_n_heads, index_head_dim,
// index_topk): per query, the top `topk` keys by Σ_h w_h·ReLU(q_h·k) are attended.
struct SparseAttentionDims {
    int index_heads = 0;
    std::int64_t index_head_dim = 0;
    std::int64_t topk = 0;
    // GLM-5's IndexShare (indexer_types "shared"): the block reuses the previous block's
    // top-k and scores no keys itself; it keeps its indexer weights. Empty = none shared.
    std::vector<bool> shared_index;
    bool operator==(const SparseAttentionDims&) const = default;
};

// Gemma 4's full-attention blocks (transformers configuration_gemma4.py / modeling_gemma4.py,
// Gemma4TextAttention): their own head width (global_head_dim), and with attention_k_eq_v
// their own KV heads (num_global_key_value_heads) and keys reused as values (no v_proj: V is
// the K projection, normed without a scale). head_dim 0: every block has the model's geometry.
struct GlobalAttentionDims {
    std::int64_t head_dim = 0;
    int num_kv_heads = 0;       // 0: the model's num_kv_heads
    bool values_are_keys = false;
    bool operator==(const GlobalAttentionDims&) const = default;
};

// Gemma 4's small models (E2B, E4B; transformers Gemma4TextModel / Gemma4TextDecoderLayer with
// hidden_size_per_layer_input > 0): per-layer inputs. A second embedding table of
// `vocab` × (num_layers · width) is read per token and added to a projection of the input
// embedding (h → num_layers · width, normed over width); each block gates its slice
// (h → width), projects it back (width → h) and norms it into the residual. width 0: none.
struct PerLayerInputDims {
    std::int64_t width = 0;
    std::int64_t vocab = 0;
    bool operator==(const PerLayerInputDims&) const = default;
};

// Rotary position embeddings (not used with learned positions).
struct RopeSpec {
    double theta = 10000;      // base (rope_theta; Megatron-LM --rotary-base)
    double percent = 1.0;      // share of each head's dims that rotate (NeoX: 0.25)
    std::string scaling;       // "" none, "linear", "llama3" (Llama 3.1) or "yarn" (DeepSeek)
    double factor = 1.0;       // the scaling factor
    bool operator==(const RopeSpec&) const = default;
};

// Keys a query attends to on average in causal attention over `seq` tokens, for a local
// window or chunk of `local_tokens` (0 = the whole context).
double causal_context_tokens(double seq, std::int64_t local_tokens, bool chunked);

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
    // A gated MLP's activation: "" = SiLU (SwiGLU), "gelu_tanh" (Gemma's GeGLU),
    // "quick_gelu" (x·σ(1.702x); gpt-oss). gpt-oss also clamps the gate to at most
    // `glu_clamp` and the linear half to ±glu_clamp, and adds `glu_linear_offset` to it.
    std::string glu_activation;
    double glu_clamp = 0;          // 0 = no clamp
    double glu_linear_offset = 0;
    bool uses_mla = false;
    MlaDims mla;
    MoeSpec moe;
    RopeSpec rope;
    double norm_eps = 1e-5;                    // epsilon of every norm
    bool qk_norm = false;                      // RMSNorm of Q and K per head (Qwen3, Gemma 3)
    // Gemma 2, 3 and 4: RMSNorms on the attention's and the MLP's outputs too, before their
    // residual adds (transformers Gemma2DecoderLayer: post_attention_layernorm and
    // post_feedforward_layernorm beside input_layernorm and pre_feedforward_layernorm): four
    // norms a block instead of two.
    bool sandwich_norms = false;
    bool qk_norm_full_width = false;           // ... over all heads' width at once (MiniMax-M2)
    // Local attention. A windowed block attends to the last `sliding_window` tokens (itself
    // included, as transformers' masks count it); a chunked block (Llama 4) attends within
    // fixed chunks of `attention_chunk` tokens. With either, every `global_attention_every`-th
    // block (1-based: blocks N-1, 2N-1, ...; Megatron-LM's --window-attn-skip-freq) attends
    // to the whole context; 0 = every block is local.
    std::int64_t sliding_window = 0;           // tokens; 0 = none
    std::int64_t attention_chunk = 0;          // tokens; 0 = none
    int global_attention_every = 0;
    bool attention_sinks = false;              // gpt-oss: a learned sink logit per head
    double attn_logit_softcap = 0;             // Gemma 2: cap·tanh(score/cap); 0 = none
    double final_logit_softcap = 0;            // Gemma 2: the same on the output logits
    int mtp_layers = 0;                        // DeepSeek-V3 multi-token prediction layers
    // Per-block kinds of hybrid families; empty = every block is attention followed by the
    // MLP or MoE that `moe` decides. Otherwise one entry per block.
    std::vector<BlockKind> block_kinds;
    LinearAttentionDims linear_attention;
    Mamba2Dims mamba;
    SparseAttentionDims sparse_attention;
    bool attention_output_gate = false;        // Qwen3-Next: sigmoid(gate)·attention, q_proj twice as wide
    GlobalAttentionDims global_attention;      // Gemma 4: the full-attention blocks' own geometry
    PerLayerInputDims per_layer_input;         // Gemma 4 E2B/E4B: per-layer input embeddings
    // Gemma 4 E2B/E4B: the last `kv_shared_layers` blocks attend with the keys and values of
    // the last earlier block of their attention type (no k_proj, v_proj, k_norm of their own);
    // with `double_wide_shared_mlp` their MLP is twice ffn_hidden_size wide.
    int kv_shared_layers = 0;
    bool double_wide_shared_mlp = false;
    // A dense (ungated) MLP's activation: "" = GELU, "relu2" (squared ReLU; Nemotron-H).
    std::string mlp_activation;
    // Dropout probabilities in training. A mask is stored for the backward only when the
    // probability is above 0 (PyTorch's dropout returns its input at p = 0): Llama-family
    // configs say 0, GPT-2/GPT-3 and Megatron-LM's defaults 0.1.
    double hidden_dropout = 0;                 // after attention and MLP, and on the embedding
    double attention_dropout = 0;              // on the attention probabilities

    [[nodiscard]] bool is_moe() const { return moe.num_experts > 0; }
    // Whether transformer block `block` (0-based) has an MoE layer instead of a dense MLP.
    [[nodiscard]] bool is_moe_block(int block) const;
    [[nodiscard]] int num_moe_blocks() const;
    // Whether block `block` (0-based) attends to a window or chunk rather than the whole context.
    [[nodiscard]] bool is_local_attention_block(int block) const;
    // Keys a query of block `block` attends to on average, causal, over `seq` tokens.
    [[nodiscard]] double causal_context(int block, double seq) const;
    [[nodiscard]] MixerKind mixer_kind(int block) const;
    [[nodiscard]] bool has_mlp(int block) const;  // a dense MLP or an MoE layer
    [[nodiscard]] bool is_hybrid() const { return !block_kinds.empty(); }
    // Whether any block has this mixer.
    [[nodiscard]] bool has_mixer(MixerKind kind) const;
    // One letter per block as Megatron-LM's hybrid pattern spells layers: M Mamba-2, * attention,
    // - dense MLP, E MoE; and, for the kinds Megatron's pattern has no letter for, G Gated
    // DeltaNet and S sparse attention. A block with both a mixer and an MLP gives its mixer's
    // letter then the MLP's ("*-", "GE").
    [[nodiscard]] std::string block_letters(int block) const;
    // Attention geometry of block `block`: Gemma 4's full-attention blocks take
    // global_attention's where it is set, every other block the model's.
    [[nodiscard]] bool has_global_attention_geometry(int block) const;
    [[nodiscard]] std::int64_t head_dim_of(int block) const;
    [[nodiscard]] int kv_heads_of(int block) const;
    [[nodiscard]] bool values_are_keys(int block) const;
    // Whether block `block` reuses an earlier block's keys and values (kv_shared_layers).
    [[nodiscard]] bool shares_kv(int block) const;
    // The dense MLP width of block `block` (doubled in the KV-sharing blocks where asked).
    [[nodiscard]] std::int64_t ffn_of(int block) const;
    // Attention variant in words: "MHA", "GQA", "MQA" or "MLA".
    [[nodiscard]] std::string attention_kind() const;

    bool operator==(const ModelSpec&) const = default;
};

}  // namespace meshwork
