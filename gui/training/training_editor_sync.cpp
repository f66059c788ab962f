// The Training dock kept in step with the layout: values, and which choices the layout rules
// leave open (core/layout/layout_rules.h, pipeline_split.h), each closed one with its reason.
#include "gui/training/training_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QMenu>
#include <QToolButton>
#include <QSpinBox>

#include <algorithm>
#include <tuple>

#include "core/layout/layout_rules.h"
#include "core/layout/pipeline_split.h"
#include "gui/document/layout_document.h"
#include "gui/document/training_edits.h"
#include "gui/training/choice_box.h"
#include "gui/training/recompute_controls.h"

namespace meshwork::gui {

void TrainingEditor::sync_from_document() {
    setEnabled(document_->has_layout());  // a trace alone has no layout to edit
    if (!document_->has_layout()) return;
    const Layout& l = document_->layout();
    const auto& t = l.training;
    const auto& m = l.parallel.mesh;
    syncing_ = true;
    micro_batch_->setValue(t.micro_batch_size);
    global_batch_->setSingleStep(std::max(1, m.dp * t.micro_batch_size));
    global_batch_->setValue(t.global_batch_size);
    const int micro_batches = l.num_micro_batches();
    micro_batches_->setText(micro_batches == 1 ? tr("1 micro-batch") : tr("%1 micro-batches").arg(micro_batches));
    seq_length_->setValue(t.seq_length);
    capacity_->setValue(t.moe_capacity_factor);
    const bool experts = rules::capacity_factor_needs_experts(1.0, l.model.is_moe());
    capacity_->setEnabled(experts || t.moe_capacity_factor > 0);
    capacity_->setToolTip(experts ? tr("Tokens an expert takes, as a multiple of its even share; tokens over it are "
                                       "dropped (training.moe_capacity_factor; Megatron-LM's "
                                       "--moe-expert-capacity-factor). Default: dropless")
                                  : tr("%1 has no experts").arg(spelt(l.model.name)));
    rank_capacity_->setValue(t.moe_rank_capacity_factor);
    const bool hybridep = rules::rank_capacity_needs_hybridep(1.0, l.parallel.moe_dispatcher, l.parallel.moe_flex_backend);
    rank_capacity_->setEnabled((experts && hybridep) || t.moe_rank_capacity_factor > 0);
    rank_capacity_->setToolTip(
        !experts   ? tr("%1 has no experts").arg(spelt(l.model.name))
        : !hybridep ? tr("A per-rank token budget needs the flex dispatcher with HybridEP (MoE dispatch, Parallelism dock)")
                    : tr("HybridEP's token budget per expert rank, as a multiple of its average routed tokens: the "
                         "experts run without the dispatcher's host synchronisation and with static shapes, which "
                         "CUDA graphs capture; tokens over it are dropped (training.moe_rank_capacity_factor; "
                         "--moe-rank-capacity-factor; Megatron-LM's --moe-expert-rank-capacity-factor). Default: none"));
    flash_->setChecked(t.flash_attention);
    fused_->setChecked(t.fused_elementwise);
    sync_memory();
    sync_numerics();
    sync_pipeline();
    syncing_ = false;
}

void TrainingEditor::sync_memory() {
    const Layout& l = document_->layout();
    const auto& t = l.training;
    const int pp = l.parallel.mesh.pp;
    select_choice(zero_, QString::number(t.zero_stage));
    for (int stage = 0; stage < zero_->count(); ++stage) {
        const bool keeps_optimizer_offload = rules::offload_optimizer_needs_zero(t.offload_optimizer, stage);
        const bool keeps_param_offload = rules::offload_params_needs_zero3(t.offload_params, stage);
        set_choice_allowed(zero_, stage, keeps_optimizer_offload && keeps_param_offload,
                           !keeps_param_offload ? tr("Weight offload moves ZeRO-3's weight shards: set it to GPU first")
                                                : tr("Optimizer offload works on ZeRO's optimizer partitions: set it "
                                                     "to GPU first"));
        if (choice_allowed(zero_, stage) && !rules::zero_allows_pipeline(stage, pp)) {
            zero_->setItemData(stage,
                               zero_->itemData(stage, Qt::ToolTipRole).toString() +
                                   tr(". With pp > 1 a warning: DeepSpeed refuses it, Megatron-LM runs it only as "
                                      "Megatron-FSDP"),
                               Qt::ToolTipRole);
        }
    }
    refresh_box(zero_);

    // The replica counts a layout accepts: divisors of dp (and of the expert-data-parallel
    // size), with ZeRO on (layout_rules.h zero_replicas_*).
    zero_replicas_->clear();
    const int dp = l.parallel.mesh.dp;
    const int edp = l.model.is_moe() ? l.parallel.mesh.expert_data_parallel() : 0;
    for (int n = 1; n <= std::max(1, dp); ++n) {
        if (!rules::zero_replicas_divide(n, dp, edp) && n != t.zero_replicas) continue;
        const QString label = n == 1 ? tr("1 replica") : tr("%1 replicas").arg(n);
        add_choice(zero_replicas_, label, QString::number(n),
                   n == 1 ? tr("The ZeRO state sharded over all %1 data-parallel ranks").arg(dp)
                          : tr("Sharded over %1 ranks, replicated %2 times").arg(dp / n).arg(n));
        set_choice_allowed(zero_replicas_, zero_replicas_->count() - 1,
                           rules::zero_replicas_need_zero(n, t.zero_stage) && rules::zero_replicas_divide(n, dp, edp),
                           t.zero_stage == 0 ? tr("ZeRO-0 shards nothing: choose a ZeRO stage first")
                                             : tr("Does not divide the data-parallel ranks into equal groups"));
    }
    select_choice(zero_replicas_, QString::number(t.zero_replicas));
    refresh_box(zero_replicas_);
    set_choice_allowed(fsdp_shards_, 1, rules::fsdp_fp32_shards_need_zero3(true, t.zero_stage) || t.fsdp_fp32_shards,
                       tr("Only ZeRO-3 shards the parameters: choose stage 3 first"));
    select_choice(fsdp_shards_, t.fsdp_fp32_shards ? "on" : "off");
    refresh_box(fsdp_shards_);
    recompute_->sync(l);

    const double host_bw = l.cluster.host_link.bandwidth_bytes_per_s;
    const QString no_link = tr("The cluster %1 describes no host link (GPU to host memory) to offload over")
                                .arg(spelt(l.cluster.name));
    for (auto [box, current, optimizer] : {std::tuple{offload_optimizer_, t.offload_optimizer, true},
                                           std::tuple{offload_params_, t.offload_params, false}}) {
        select_choice(box, spelt(to_string(current)));
        for (int i = 1; i < box->count(); ++i) {
            Offload where = Offload::None;
            parse_offload(box->itemData(i).toString().toStdString(), where);
            const bool zero_ok = optimizer ? rules::offload_optimizer_needs_zero(where, t.zero_stage)
                                           : rules::offload_params_needs_zero3(where, t.zero_stage);
            const bool link_ok = rules::offload_needs_host_link(where, host_bw);
            set_choice_allowed(box, i, zero_ok && link_ok,
                               !link_ok    ? no_link
                               : optimizer ? tr("Optimizer offload works on ZeRO's optimizer partitions: choose "
                                                "ZeRO stage 1 or more first")
                                           : tr("Weight offload moves ZeRO-3's weight shards: choose ZeRO stage 3 "
                                                "first"));
        }
        refresh_box(box);
    }
    // Megatron-LM offloads fewer layers than the model has (layout_rules.h); validation
    // refuses the other rules with their reasons.
    offload_activations_->setRange(0, std::max(0, l.model.num_layers - 1));
    offload_activations_->setValue(t.offload_activation_layers);
    // Offered where Megatron-LM would run it (a host link, pp 1, no recomputation, no per-layer
    // graphs), and always to clear a value set.
    const bool offload_runs = host_bw > 0 && rules::activation_offload_without_pp(1, l.parallel.mesh.pp) &&
                              rules::activation_offload_without_recompute(1, t.recompute) &&
                              rules::activation_offload_graphs(1, t.cuda_graphs);
    offload_activations_->setEnabled(offload_runs || t.offload_activation_layers > 0);
}

void TrainingEditor::sync_numerics() {
    const Layout& l = document_->layout();
    const auto& t = l.training;
    select_choice(dtype_, spelt(to_string(t.dtype)));
    for (int i = 0; i < dtype_->count(); ++i) {
        DType d = DType::Bf16;
        parse_dtype(dtype_->itemData(i).toString().toStdString(), d);
        set_choice_allowed(dtype_, i, rules::gpu_runs_dtype(l.cluster.gpu, d),
                           quantized_gemms(d) ? tr("GPU kind '%1' has no %2 units")
                                                    .arg(spelt(l.cluster.gpu.kind), spelt(to_string(d)))
                                           : tr("GPU kind '%1' lists no peak for %2")
                                                 .arg(spelt(l.cluster.gpu.kind), spelt(to_string(d))));
    }
    refresh_box(dtype_);
    select_choice(grad_reduce_, t.grad_reduce_in_bf16 ? "bf16" : "fp32");
    set_choice_allowed(grad_reduce_, 1, rules::grad_bf16_fits_dtype(true, t.dtype),
                       tr("%1 training keeps gradients in the parameters' type: only bf16, fp8 and fp4 training "
                          "have fp32 gradients to halve")
                           .arg(spelt(to_string(t.dtype))));
    refresh_box(grad_reduce_);
    select_choice(loss_, spelt(to_string(t.cross_entropy)));
    select_choice(attention_kernel_, spelt(to_string(t.attention_kernel)));
    attention_kernel_->setEnabled(t.flash_attention);
    select_choice(fp8_recipe_, spelt(to_string(t.fp8_recipe)));
    fp8_recipe_->setEnabled(t.dtype == DType::Fp8);
    select_choice(cuda_graphs_, spelt(to_string(t.cuda_graphs)));
    const std::vector<std::string> modules = graph_module_names(t.cuda_graph_modules);
    for (QAction* a : graph_modules_menu_->actions()) {
        a->setChecked(std::find(modules.begin(), modules.end(), a->text().toStdString()) != modules.end());
    }
    const std::string shown = join_graph_modules(t.cuda_graph_modules, ", ");
    graph_modules_->setText(shown.empty() ? tr("Whole layer") : QString::fromStdString(shown));
    graph_modules_->setEnabled(t.cuda_graphs == CudaGraphs::PerLayer);
}

void TrainingEditor::sync_pipeline() {
    const Layout& l = document_->layout();
    const auto& t = l.training;
    const int pp = l.parallel.mesh.pp;
    const int vpp = l.parallel.vpp;
    const int layers = l.model.num_layers;

    select_choice(schedule_, spelt(to_string(t.schedule)));
    for (int i = 0; i < schedule_->count(); ++i) {
        Schedule s = Schedule::OneFOneB;
        parse_schedule(schedule_->itemData(i).toString().toStdString(), s);
        const bool chunks = rules::interleaved_has_chunks(s, pp, vpp);
        const bool matches_vpp = rules::vpp_needs_interleaved(s, vpp);
        const bool enough = rules::interleaved_micro_batches(s, pp, l.num_micro_batches());
        set_choice_allowed(schedule_, i, chunks && matches_vpp && enough,
                           !matches_vpp ? tr("vpp %1 needs the interleaved schedule: set Virtual stages to 1 "
                                             "first (Parallelism dock)").arg(vpp)
                           : !chunks    ? tr("The interleaved schedule needs pp ≥ 2 and vpp ≥ 2 (Virtual stages, "
                                             "Parallelism dock)")
                                        : tr("The interleaved schedule needs at least pp (%1) micro-batches per "
                                             "step").arg(pp));
    }
    refresh_box(schedule_);

    const auto rule = pipeline_split_rule(l);
    QString current = kSplitCustom;
    if (rule && rule->kind == PipelineSplitRule::Kind::Even) current = kSplitEven;
    if (rule && rule->kind == PipelineSplitRule::Kind::Accounted) current = split_data(rule->embedding, rule->loss);
    if (rule && rule->kind == PipelineSplitRule::Kind::Uneven) current = kSplitUneven;
    select_choice(split_, current);
    const QString one_stage = tr("One pipeline stage holds every layer");
    const bool even_fills = rules::layers_fill_chunks(layers, static_cast<long long>(pp) * vpp);
    set_choice_allowed(split_, 0, pp > 1 && even_fills,
                       pp > 1 ? tr("%1 layers cannot fill pp×vpp = %2 model chunks evenly").arg(layers).arg(pp * vpp)
                              : one_stage);
    for (int i = 1; i <= 3; ++i) {
        const QString choice = split_->itemData(i).toString();
        std::string error;
        const bool ok = pp > 1 && !accounted_split(layers, pp, vpp, choice.contains("embedding"), choice.contains("loss"),
                                                   error).empty();
        set_choice_allowed(split_, i, ok, pp > 1 ? spelt(error) : one_stage);
    }
    set_choice_allowed(split_, 4, false, tr("Set by the first / last stage layers below (Megatron-LM's "
                                            "--decoder-first/last-pipeline-num-layers)"));
    set_choice_allowed(split_, 5, false, tr("A split placed by dragging blocks onto the stages of the Mesh view"));
    refresh_box(split_);

    const auto per_rank = layers_per_pipeline_rank(l);
    const bool uneven_ok = pp > 1 && !per_rank.empty();
    for (auto* box : {first_stage_, last_stage_}) {
        box->setRange(0, layers);
        box->setSingleStep(vpp);
        box->setEnabled(uneven_ok);
        box->setToolTip(uneven_ok ? tr("Transformer layers on the %1 pipeline rank; the middle ranks share the rest "
                                       "evenly (Megatron-LM's --decoder-%2-pipeline-num-layers; a multiple of vpp). "
                                       "Default: the even split's")
                                        .arg(box == first_stage_ ? tr("first") : tr("last"),
                                             box == first_stage_ ? "first" : "last")
                                  : one_stage);
    }
    first_stage_->setValue(per_rank.empty() ? 0 : per_rank.front());
    last_stage_->setValue(per_rank.empty() ? 0 : per_rank.back());
}

}  // namespace meshwork::gui
