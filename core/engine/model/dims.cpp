#include "core/engine/model/dims.h"

#include "core/common/error.h"

namespace meshwork::engine {

namespace {
void refuse(bool bad, const std::string& field, const std::string& message) {
    if (bad) throw InputError("<engine>", field, message);
}
}  // namespace

ModelDims make_dims(const Layout& l, const EngineOptions& o) {
    const ModelSpec& m = l.model;
    const auto& mesh = l.parallel.mesh;
    // Per-block kinds of hybrid models: each kind the engine has no kernels for, by name.
    for (int b = 0; b < m.num_layers; ++b) {
        const MixerKind k = m.mixer_kind(b);
        refuse(k != MixerKind::Attention, "model.layers[" + std::to_string(b) + "]",
               "the engine runs softmax attention in every block, not " + to_string(k) +
                   (k == MixerKind::None ? " (a block without a mixer)" : ""));
        refuse(!m.has_mlp(b), "model.layers[" + std::to_string(b) + "]",
               "the engine runs an MLP or MoE layer in every block; this block has none");
    }
    refuse(m.attention_output_gate, "model.attention", "the engine runs attention without an output gate");
    refuse(m.uses_mla, "model.attention", "the engine runs MHA/GQA attention, not MLA");
    refuse(m.global_attention.head_dim > 0, "model.global_head_dim",
           "the engine runs one attention geometry in every block, not Gemma 4's wider full-attention blocks");
    refuse(m.per_layer_input.width > 0, "model.hidden_size_per_layer_input",
           "the engine has no per-layer input embeddings (Gemma 4 E2B/E4B)");
    refuse(m.kv_shared_layers > 0, "model.num_kv_shared_layers",
           "the engine gives every block its own keys and values");
    refuse(m.norm != NormKind::RmsNorm, "model.norm", "the engine runs RMSNorm models");
    refuse(m.mlp != MlpKind::Gated, "model.mlp", "the engine runs gated (SwiGLU) MLPs");
    refuse(m.learned_position_embeddings, "model.position_embeddings",
           "the engine uses rotary positions");
    refuse(m.qkv_bias || m.linear_bias, "model.bias", "the engine runs bias-free linear layers");
    refuse(m.tie_embeddings, "model.tie_word_embeddings", "the engine runs untied embeddings");
    refuse(m.moe.num_shared_experts > 0, "model.moe.num_shared_experts",
           "the engine runs routed experts only");
    refuse(!m.glu_activation.empty() || m.glu_clamp > 0 || m.glu_linear_offset != 0, "model.hidden_act",
           "the engine runs SwiGLU MLPs");
    refuse(m.sliding_window > 0 || m.attention_chunk > 0, "model.sliding_window",
           "the engine runs full causal attention (no window or chunks)");
    refuse(m.attention_sinks || m.attn_logit_softcap > 0 || m.final_logit_softcap > 0, "model.attention",
           "the engine runs plain softmax attention (no sinks, no soft-caps)");
    refuse(m.qk_norm || m.mtp_layers > 0, "model", "the engine runs no QK norm and no MTP modules");
    refuse(m.sandwich_norms, "model.norm",
           "the engine runs two norms a block, not Gemma's four (no norms on the attention's and MLP's outputs)");
    refuse(m.head_dim % 2 != 0, "model.head_dim", "rotary embeddings need an even head_dim");
    refuse(mesh.etp != 1, "parallel.etp", "the engine runs experts without expert tensor parallelism (etp 1)");
    refuse(m.num_kv_heads % mesh.tp != 0, "parallel.tp",
           "the engine splits KV heads over tp: tp must divide the " +
               std::to_string(m.num_kv_heads) + " KV heads");
    refuse(m.vocab_size % mesh.tp != 0, "parallel.tp",
           "the vocabulary-parallel embedding needs tp to divide the vocabulary (" +
               std::to_string(m.vocab_size) + ")");
    refuse(l.training.zero_stage > 2, "training.zero_stage",
           "the engine shards optimizer states and gradients (ZeRO 1 and 2), not parameters");
    refuse(l.training.zero_replicas > 1, "training.zero_replicas",
           "the engine shards over all data-parallel ranks: hybrid sharding is estimated, not run");

    ModelDims d;
    d.hidden = static_cast<int>(m.hidden_size);
    d.heads = m.num_heads;
    d.kv_heads = m.num_kv_heads;
    d.head_dim = static_cast<int>(m.head_dim);
    d.ffn = static_cast<int>(m.ffn_hidden_size);
    d.vocab = static_cast<int>(m.vocab_size);
    d.layers = m.num_layers;
    d.experts = m.moe.num_experts;
    d.top_k = m.moe.top_k;
    d.expert_ffn = static_cast<int>(m.moe.expert_ffn_hidden);
    d.rms_eps = o.rms_eps;
    d.rope_theta = o.rope_theta;
    d.aux_coef = o.moe_aux_loss_coef;
    d.capacity_factor = static_cast<float>(l.training.moe_capacity_factor);
    d.tp = mesh.tp;
    d.cp = mesh.cp;
    d.ep = mesh.ep;
    d.sp = l.parallel.sequence_parallel && mesh.tp > 1;
    d.heads_local = d.heads / d.tp;
    d.kv_heads_local = d.kv_heads / d.tp;
    d.ffn_local = d.ffn / d.tp;
    d.vocab_local = d.vocab / d.tp;
    d.mbs = l.training.micro_batch_size;
    d.seq = l.training.seq_length;
    d.seq_local = d.seq / d.cp;
    d.rows = d.mbs * d.seq_local;
    d.region_rows = d.sp ? d.rows / d.tp : d.rows;
    d.global_batch = l.training.global_batch_size;
    refuse(d.experts > 0 && d.rows % d.tp != 0, "training.seq_length",
           "MoE under tp splits the micro-batch's tokens over tp ranks: tp must divide mbs×seq/cp");
    return d;
}

std::vector<int> cp_positions(int seq, int cp, int cp_rank) {
    const int chunk = seq / (2 * cp);
    std::vector<int> pos;
    pos.reserve(static_cast<std::size_t>(2 * chunk));
    for (int c : {cp_rank, 2 * cp - 1 - cp_rank}) {
        for (int i = 0; i < chunk; ++i) pos.push_back(c * chunk + i);
    }
    return pos;
}

}  // namespace meshwork::engine
