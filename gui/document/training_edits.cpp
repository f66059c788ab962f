#include "gui/document/training_edits.h"

#include <cstdio>

#include "core/layout/layout_rules.h"
#include "core/layout/pipeline_split.h"

namespace meshwork::gui {

ProposedEdit set_setting(const Layout& layout, const std::string& setting, const std::string& value,
                         const std::function<void(Layout&)>& change) {
    ProposedEdit edit{layout, "Set " + setting + " to " + value, "", setting};
    change(edit.layout);  // unchanged: LayoutDocument::apply says "nothing changes"
    return edit;
}

namespace {
std::string on_off(bool on) { return on ? "on" : "off"; }
}  // namespace

ProposedEdit set_micro_batch_size(const Layout& layout, int sequences) {
    return set_setting(layout, "micro-batch size", std::to_string(sequences),
                       [&](Layout& l) { l.training.micro_batch_size = sequences; });
}

ProposedEdit set_global_batch_size(const Layout& layout, int sequences) {
    return set_setting(layout, "global batch", std::to_string(sequences),
                       [&](Layout& l) { l.training.global_batch_size = sequences; });
}

ProposedEdit set_seq_length(const Layout& layout, int tokens) {
    return set_setting(layout, "sequence length", std::to_string(tokens),
                       [&](Layout& l) { l.training.seq_length = tokens; });
}

ProposedEdit set_zero_stage(const Layout& layout, int stage) {
    // ZeRO-0 shards nothing, so it has no shard group to replicate.
    auto edit = set_setting(layout, "ZeRO stage", std::to_string(stage), [&](Layout& l) {
        l.training.zero_stage = stage;
        if (stage == 0) l.training.zero_replicas = 1;
        // Only ZeRO-3 has parameter shards to keep in fp32.
        if (!rules::fsdp_fp32_shards_need_zero3(true, stage)) l.training.fsdp_fp32_shards = false;
    });
    if (stage < 0 || stage > 3) edit.refused = "ZeRO stage " + std::to_string(stage) + " is not 0, 1, 2 or 3";
    return edit;
}

ProposedEdit set_zero_replicas(const Layout& layout, int replicas) {
    return set_setting(layout, "ZeRO replicas", std::to_string(replicas),
                       [&](Layout& l) { l.training.zero_replicas = replicas; });
}

ProposedEdit set_fsdp_fp32_shards(const Layout& layout, bool on) {
    auto edit = set_setting(layout, "FSDP shards", on ? "fp32 masters" : "bf16 beside the fp32 masters",
                            [&](Layout& l) { l.training.fsdp_fp32_shards = on; });
    if (!rules::fsdp_fp32_shards_need_zero3(on, layout.training.zero_stage)) {
        edit.refused = "fp32 parameter shards need ZeRO-3";
    }
    return edit;
}

ProposedEdit set_recompute(const Layout& layout, Recompute recompute) {
    return set_setting(layout, "recompute", to_string(recompute), [&](Layout& l) {
        l.training.recompute = recompute;
        if (recompute != Recompute::Full) l.training.recompute_num_layers = 0;
        if (recompute != Recompute::Selective) l.training.recompute_modules.clear();
    });
}

ProposedEdit set_recompute_modules(const Layout& layout, const std::vector<RecomputeModule>& modules) {
    return set_setting(layout, "recompute modules", modules.empty() ? "core_attn" : join_recompute_modules(modules),
                       [&](Layout& l) { l.training.recompute_modules = modules; });
}

ProposedEdit set_recompute_num_layers(const Layout& layout, int layers) {
    return set_setting(layout, "recomputed layers per chunk", layers > 0 ? std::to_string(layers) : "all",
                       [&](Layout& l) { l.training.recompute_num_layers = layers; });
}

ProposedEdit set_offload_optimizer(const Layout& layout, Offload where) {
    return set_setting(layout, "optimizer offload", to_string(where),
                       [&](Layout& l) { l.training.offload_optimizer = where; });
}

ProposedEdit set_offload_params(const Layout& layout, Offload where) {
    return set_setting(layout, "weight offload", to_string(where),
                       [&](Layout& l) { l.training.offload_params = where; });
}

ProposedEdit set_dtype(const Layout& layout, DType dtype) {
    return set_setting(layout, "precision", to_string(dtype), [&](Layout& l) { l.training.dtype = dtype; });
}

ProposedEdit set_grad_reduce_in_bf16(const Layout& layout, bool on) {
    return set_setting(layout, "gradient reduction", on ? "bf16" : "fp32",
                       [&](Layout& l) { l.training.grad_reduce_in_bf16 = on; });
}

ProposedEdit set_cross_entropy(const Layout& layout, CrossEntropy loss) {
    return set_setting(layout, "loss", to_string(loss), [&](Layout& l) { l.training.cross_entropy = loss; });
}

ProposedEdit set_attention_kernel(const Layout& layout, AttentionKernel kernel) {
    return set_setting(layout, "attention kernel", to_string(kernel),
                       [&](Layout& l) { l.training.attention_kernel = kernel; });
}

ProposedEdit set_flash_attention(const Layout& layout, bool on) {
    return set_setting(layout, "flash attention", on_off(on), [&](Layout& l) { l.training.flash_attention = on; });
}

ProposedEdit set_fused_elementwise(const Layout& layout, bool on) {
    return set_setting(layout, "fused element-wise kernels", on_off(on),
                       [&](Layout& l) { l.training.fused_elementwise = on; });
}

ProposedEdit set_fp8_recipe(const Layout& layout, Fp8Recipe recipe) {
    return set_setting(layout, "fp8 recipe", to_string(recipe), [&](Layout& l) { l.training.fp8_recipe = recipe; });
}

ProposedEdit set_offload_activation_layers(const Layout& layout, int layers) {
    return set_setting(layout, "activation offload", std::to_string(layers) + " layers",
                       [&](Layout& l) { l.training.offload_activation_layers = layers; });
}

ProposedEdit set_cuda_graphs(const Layout& layout, CudaGraphs graphs) {
    return set_setting(layout, "CUDA graphs", to_string(graphs), [&](Layout& l) { l.training.cuda_graphs = graphs; });
}

ProposedEdit set_cuda_graph_modules(const Layout& layout, GraphModules modules) {
    const std::string names = join_graph_modules(modules, ", ");
    return set_setting(layout, "CUDA-graph modules", names.empty() ? "whole layer" : names,
                       [&](Layout& l) { l.training.cuda_graph_modules = modules; });
}

ProposedEdit set_schedule(const Layout& layout, Schedule schedule) {
    return set_setting(layout, "pipeline schedule", to_string(schedule),
                       [&](Layout& l) { l.training.schedule = schedule; });
}

ProposedEdit set_moe_rank_capacity_factor(const Layout& layout, double factor) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", factor);
    return set_setting(layout, "expert rank budget", factor > 0 ? text : "none",
                       [&](Layout& l) { l.training.moe_rank_capacity_factor = factor; });
}

ProposedEdit set_moe_capacity_factor(const Layout& layout, double factor) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", factor);
    return set_setting(layout, "expert capacity factor", factor > 0 ? text : "dropless",
                       [&](Layout& l) { l.training.moe_capacity_factor = factor; });
}

namespace {
std::string split_text(const PipelineSplitRule& rule) {
    using K = PipelineSplitRule::Kind;
    if (rule.kind == K::Even) return "even";
    if (rule.kind == K::Accounted) {
        return rule.embedding && rule.loss ? "embedding and loss counted"
               : rule.embedding            ? "embedding counted"
                                           : "loss counted";
    }
    auto count = [](const std::optional<int>& n) { return n ? std::to_string(*n) : std::string("middle"); };
    return "first " + count(rule.first) + ", last " + count(rule.last) + " layers";
}
}  // namespace

ProposedEdit set_pipeline_split(const Layout& layout, const PipelineSplitRule& rule) {
    const int pp = layout.parallel.mesh.pp;
    const int vpp = layout.parallel.vpp;
    const int layers = layout.model.num_layers;
    std::string error;
    std::vector<int> split;
    switch (rule.kind) {
        case PipelineSplitRule::Kind::Even: break;  // empty: balanced_stage_split
        case PipelineSplitRule::Kind::Accounted:
            split = accounted_split(layers, pp, vpp, rule.embedding, rule.loss, error);
            break;
        case PipelineSplitRule::Kind::Uneven:
            split = uneven_split(layers, pp, vpp, rule.first, rule.last, error);
            break;
    }
    auto edit = set_setting(layout, "pipeline split", split_text(rule),
                            [&](Layout& l) { l.placement.layers_per_stage = split; });
    if (!error.empty()) {
        edit.refused = error;
    } else if (layout.stage_layers() == edit.layout.stage_layers()) {
        edit.layout = layout;  // the same split written another way (even, spelt out): no change
    }
    return edit;
}

std::optional<PipelineSplitRule> pipeline_split_rule(const Layout& layout) {
    const auto& split = layout.placement.layers_per_stage;
    const int pp = layout.parallel.mesh.pp;
    const int vpp = layout.parallel.vpp;
    if (split.empty() || split == balanced_stage_split(layout.model.num_layers, pp * vpp)) return PipelineSplitRule{};
    const auto form = megatron_split_form(split, layout.model.num_layers, pp, vpp);
    switch (form.kind) {
        case MegatronSplitForm::Kind::Accounted:
            return PipelineSplitRule{PipelineSplitRule::Kind::Accounted, form.embedding, form.loss, {}, {}};
        case MegatronSplitForm::Kind::Uneven:
            return PipelineSplitRule{PipelineSplitRule::Kind::Uneven, false, false, form.first, form.last};
        case MegatronSplitForm::Kind::None: break;
    }
    return std::nullopt;
}

std::vector<int> layers_per_pipeline_rank(const Layout& layout) {
    const auto pp = static_cast<std::size_t>(layout.parallel.mesh.pp);
    std::vector<int> out(pp, 0);
    const auto split = layout.stage_layers();
    for (std::size_t c = 0; c < split.size(); ++c) out[c % pp] += split[c];
    return out;
}

}  // namespace meshwork::gui
