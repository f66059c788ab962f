#include "core/layout/layout_summary.h"

#include <algorithm>

#include "core/model/layer_graph.h"

namespace meshwork {

nlohmann::json model_summary_json(const ModelSpec& m, int seq_length) {
    const LayerGraph g = build_layer_graph(m);
    const double fwd = g.forward_flops_per_token(seq_length, /*causal=*/true);
    nlohmann::json j = {
        {"name", m.name},
        {"family", m.family},
        {"layers", m.num_layers},
        {"hidden_size", m.hidden_size},
        {"num_heads", m.num_heads},
        {"num_kv_heads", m.num_kv_heads},
        {"head_dim", m.head_dim},
        {"attention", m.attention_kind()},
        {"ffn_hidden_size", m.ffn_hidden_size},
        {"vocab_size", m.vocab_size},
        {"tie_embeddings", m.tie_embeddings},
        {"params_total", g.params_total},
        {"params_active", g.params_active},
        {"params_embedding", g.params_embedding},
        {"seq_length", seq_length},
        {"forward_flops_per_token", fwd},
        // Training FLOPs per token: backward costs twice the forward pass.
        {"flops_per_token", 3.0 * fwd},
    };
    // Gemma 4's full-attention blocks, where their geometry differs from the others'.
    if (m.global_attention.head_dim > 0) {
        int full = 0, kv_heads = m.num_kv_heads;
        for (int b = 0; b < m.num_layers; ++b) {
            if (!m.has_global_attention_geometry(b)) continue;
            ++full;
            kv_heads = m.kv_heads_of(b);
        }
        j["full_attention_blocks"] = {{"layers", full},
                                      {"head_dim", m.global_attention.head_dim},
                                      {"num_kv_heads", kv_heads},
                                      {"values_are_keys", m.global_attention.values_are_keys}};
    }
    // Local attention and the other attention details, only where the model has them.
    if (m.sliding_window > 0 || m.attention_chunk > 0) {
        int local = 0;
        for (int b = 0; b < m.num_layers; ++b) local += m.is_local_attention_block(b) ? 1 : 0;
        j["local_attention"] = {{m.attention_chunk > 0 ? "chunk_tokens" : "window_tokens",
                                 m.attention_chunk > 0 ? m.attention_chunk : m.sliding_window},
                                {"global_every", m.global_attention_every},
                                {"local_layers", local}};
    }
    if (m.attention_sinks) j["attention_sinks"] = true;
    if (m.attn_logit_softcap > 0) j["attn_logit_softcap"] = m.attn_logit_softcap;
    if (m.final_logit_softcap > 0) j["final_logit_softcap"] = m.final_logit_softcap;
    if (m.mtp_layers > 0) j["mtp_layers"] = m.mtp_layers;
    if (m.is_moe()) {
        j["moe"] = {{"num_experts", m.moe.num_experts},
                    {"top_k", m.moe.top_k},
                    {"expert_ffn_hidden", m.moe.expert_ffn_hidden},
                    {"num_shared_experts", m.moe.num_shared_experts},
                    {"moe_layers", m.num_moe_blocks()}};
    }
    return j;
}

nlohmann::json mesh_summary_json(const Layout& l, bool with_ranks) {
    const DeviceMesh mesh = l.mesh();
    const auto& s = mesh.shape();
    nlohmann::json j = {
        {"world_size", mesh.world_size()},
        {"order", s.order},
        {"axes", {{"tp", s.tp}, {"pp", s.pp}, {"dp", s.dp}, {"cp", s.cp}, {"ep", s.ep},
                  {"etp", s.etp}, {"edp", mesh.edp()}, {"vpp", l.parallel.vpp}}},
        {"gpus_per_node", mesh.gpus_per_node()},
        {"nodes", mesh.num_nodes()},
        {"cluster", l.cluster.name},
        {"gpu", l.cluster.gpu.kind},
        {"micro_batches", l.num_micro_batches()},
        {"layers_per_stage", l.stage_layers()},
    };
    nlohmann::json groups = nlohmann::json::object();
    for (Axis a : {Axis::Tp, Axis::Cp, Axis::Dp, Axis::Pp, Axis::Ep, Axis::Etp, Axis::Edp}) {
        groups[to_string(a)] = {{"size", mesh.axis_size(a)},
                                {"count", mesh.world_size() / mesh.axis_size(a)},
                                {"crosses_nodes", mesh.axis_crosses_nodes(a)}};
    }
    j["groups"] = groups;
    // Hybrid sharding: rank 0's dense ZeRO shard group, the inner dp / replicas data-parallel ranks
    // with every cp rank (training.zero_replicas; docs/cost-model.md).
    const int replicas = std::max(1, l.training.zero_replicas);
    if (replicas > 1 && s.dp % replicas == 0) {
        const int shard_dp = s.dp / replicas;
        const RankCoords first = mesh.coords(0);
        int size = 0;
        bool crosses = false;
        for (int r = 0; r < mesh.world_size(); ++r) {
            const RankCoords c = mesh.coords(r);
            if (c.tp != first.tp || c.pp != first.pp) continue;
            if (c.dp >= shard_dp) continue;
            ++size;
            crosses = crosses || mesh.node_of(r) != mesh.node_of(0);
        }
        j["zero"] = {{"stage", l.training.zero_stage},
                     {"replicas", replicas},
                     {"shard_group_size", size},
                     {"shard_group_crosses_nodes", crosses}};
    }
    if (with_ranks) {
        nlohmann::json ranks = nlohmann::json::array();
        for (int r = 0; r < mesh.world_size(); ++r) {
            const RankCoords c = mesh.coords(r);
            ranks.push_back({{"rank", r},
                             {"tp", c.tp}, {"cp", c.cp}, {"dp", c.dp}, {"pp", c.pp},
                             {"ep", c.ep}, {"etp", c.etp}, {"edp", c.edp},
                             {"node", mesh.node_of(r)}, {"local_gpu", mesh.local_gpu_of(r)}});
        }
        j["ranks"] = std::move(ranks);
    }
    return j;
}

}  // namespace meshwork
