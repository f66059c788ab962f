// Layouts for the cost-model tests: presets and GPT models of the Megatron-LM papers.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/cluster/cluster_spec.h"
#include "core/common/resources.h"
#include "core/cost/block_cost.h"
#include "core/cost/estimate.h"
#include "core/cost/model_profile.h"
#include "core/layout/layout.h"
#include "core/layout/layout_json.h"
#include "core/layout/pipeline_split.h"
#include "core/model/hf_config.h"

namespace meshwork::test {

// The GPT models of Narayanan et al. 2021 and Korthikanti et al. 2022: GPT-2 style blocks
// (LayerNorm, GeLU MLP of 4h, biases, learned positions, tied embeddings, dropout 0.1),
// vocabulary 51,200, sequence 2048.
inline ModelSpec megatron_gpt(std::int64_t hidden, int heads, int layers) {
    ModelSpec m;
    m.name = "gpt-" + std::to_string(hidden);
    m.family = "gpt2";
    m.hidden_size = hidden;
    m.num_layers = layers;
    m.num_heads = heads;
    m.num_kv_heads = heads;
    m.head_dim = hidden / heads;
    m.ffn_hidden_size = 4 * hidden;
    m.vocab_size = 51200;
    m.max_position_embeddings = 2048;
    m.tie_embeddings = true;
    m.learned_position_embeddings = true;
    m.linear_bias = true;
    m.norm = NormKind::LayerNorm;
    m.mlp = MlpKind::Dense;
    m.hidden_dropout = 0.1;  // Megatron-LM's defaults, as these runs trained
    m.attention_dropout = 0.1;
    return m;
}

// The GPT model of Megatron-LM's functional tests (tests/functional_tests, gpt3 7B recipes):
// the vocabulary padded to a multiple of 128·tp as Megatron pads it.
inline ModelSpec megatron_functional_7b(int tp) {
    ModelSpec m = megatron_gpt(4096, 32, 32);
    m.name = "megatron-functional-gpt3-7b";
    m.num_kv_heads = 8;
    m.tie_embeddings = false;
    m.max_position_embeddings = 8192;
    const std::int64_t multiple = 128LL * tp;
    m.vocab_size = (131073 + multiple - 1) / multiple * multiple;
    return m;
}

inline Layout make_layout(const ModelSpec& model, const std::string& cluster, int tp, int pp, int dp,
                          int mbs, int gbs, int seq) {
    Layout l;
    l.name = "test";
    l.model = model;
    l.cluster = load_cluster(cluster);
    l.gpus = tp * pp * dp;
    l.parallel.mesh.tp = tp;
    l.parallel.mesh.pp = pp;
    l.parallel.mesh.dp = dp;
    l.training.micro_batch_size = mbs;
    l.training.global_batch_size = gbs;
    l.training.seq_length = seq;
    return l;
}

// What every torchtitan run states whatever its model and parallelism (9dec370): FSDP2 over
// the data-parallel ranks (ZeRO-3), the loss on fp32 logits (train.py:131-134), attention
// through PyTorch's SDPA (models/llama/model.py:209).
inline void run_as_torchtitan(Layout& l) {
    l.training.zero_stage = 3;
    l.training.fsdp_fp32_shards = true;  // FSDP2: the fp32 master is the shard
    l.training.cross_entropy = CrossEntropy::Upcast;
    l.training.attention_kernel = AttentionKernel::Sdpa;
}

inline Layout preset_layout(const std::string& name) {
    return load_layout(resource_dir() + "/layouts/" + name + ".json");
}

inline bool finite_nonneg(double v) { return std::isfinite(v) && v >= 0; }

// Every number of an estimate is finite and non-negative.
inline bool sane(const Estimate& e) {
    bool ok = finite_nonneg(e.step_time_s) && e.step_time_s > 0 && finite_nonneg(e.tokens_per_s) &&
              finite_nonneg(e.model_tflops_per_gpu) && finite_nonneg(e.hardware_tflops_per_gpu) &&
              finite_nonneg(e.mfu) && finite_nonneg(e.bubble_fraction) && e.bubble_fraction <= 1 &&
              finite_nonneg(e.exposed_comm_s) && e.max_overflow_bytes >= 0;
    const auto& t = e.time;
    for (double v : {t.pipeline_s, t.compute_s, t.recompute_s, t.bubble_s, t.tp_comm_s, t.cp_comm_s,
                     t.ep_comm_s, t.pp_comm_s, t.dp_comm_s, t.dp_comm_total_s, t.optimizer_s}) {
        ok = ok && finite_nonneg(v);
    }
    for (const auto& s : e.stages) {
        ok = ok && s.params_bytes >= 0 && s.grads_bytes >= 0 && s.optimizer_bytes >= 0 &&
             s.activations_bytes >= 0 && s.buffers_bytes >= 0 && s.reserved_bytes >= 0 &&
             s.peak_bytes > 0 && s.overflow_bytes >= 0 && finite_nonneg(s.forward_s) &&
             finite_nonneg(s.backward_s) && finite_nonneg(s.dp_reduce_s) &&
             finite_nonneg(s.dp_gather_s) && finite_nonneg(s.optimizer_s);
    }
    return ok;
}

// Megatron-Bridge's Llama 3.1 405B recipe counts the embedding and the loss as a layer each in
// the pipeline split (llama31_405b_pretrain_config, src/megatron/bridge/recipes/llama/
// llama3.py:413-414 at 00b7660b, :1146-1147 at 21d102f5e; its performance configs start from
// it, the 70B and 8B recipes do not): states that split on `l` for its pp and vpp.
inline void use_bridge_405b_split(Layout& l) {
    std::string error;
    l.placement.layers_per_stage =
        accounted_split(l.model.num_layers, l.parallel.mesh.pp, l.parallel.vpp, true, true, error);
    if (!error.empty()) throw std::logic_error(error);
}

// a equals b to `rel` of the larger magnitude (and to 1e-15 absolute, for zeros): the one
// comparison of computed costs the cost tests share.
inline bool near(double a, double b, double rel = 1e-9) {
    return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + 1e-15;
}

// The per-layer-pass costs of a layout, as the estimate prepares them.
inline cost::LayoutCosts costs_of(const Layout& l) {
    cost::LayoutCosts c;
    cost::prepare_layout_costs(cost::build_model_profile(l.model), l.cluster, l.parallel, l.training, c);
    return c;
}

}  // namespace meshwork::test
