// import(export(L)) == L for every layout a format can express (up to canonical_layout(),
// which only respells equivalent settings), and each lossy case names what it loses.
#include <QtTest>

#include "core/common/resources.h"
#include "core/export/canonical_layout.h"
#include "core/export/deepspeed_config.h"
#include "core/export/exporter.h"
#include "core/export/importer.h"
#include "core/export/megatron_export.h"
#include "core/export/megatron_import.h"
#include "core/export/torchtitan_config.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"

using namespace meshwork;

namespace {

Layout bundled(const std::string& name, LayoutOverrides o = {}) {
    return build_layout(resource_dir() + "/layouts/" + name + ".json", o);
}

Layout from_model(const std::string& model, const std::string& cluster, int gpus, LayoutOverrides o) {
    o.model = model;
    o.cluster = cluster;
    o.gpus = gpus;
    Layout l = build_layout(std::nullopt, o);
    l.name = model + "-case";
    l.description = "round-trip case";
    return l;
}

// A layout as torchtitan runs it: the loss on an fp32 copy of the logits (upcast), attention
// through PyTorch's scaled_dot_product_attention (sdpa), and
// selective recompute as torchtitan's op-level checkpointing. What else a torchtitan
// export would name as lost.
Layout torchtitan_run(Layout l) {
    l.training.cross_entropy = CrossEntropy::Upcast;
    l.training.attention_kernel = AttentionKernel::Sdpa;  // PyTorch's SDPA
    if (l.training.recompute == Recompute::Selective) l.training.recompute = Recompute::SelectiveOp;
    l.training.fsdp_fp32_shards = l.training.zero_stage == 3;  // FSDP2's fp32 shards
    return l;
}

ImportOptions options_for(const Layout& l) {
    ImportOptions o;
    o.cluster = l.cluster_ref;
    o.name = l.name;
    o.description = l.description;
    return o;
}

std::string listing(const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += "\n  " + i;
    return s;
}

void expect_round_trip(const Layout& l, ExportFormat format, ImportOptions o) {
    const auto valid = validate_layout(l, l.name);
    if (!valid.valid()) QFAIL(qPrintable(QString::fromStdString("case is not a valid layout: " +
                                                                 valid.errors.front().to_string())));
    const ExportResult e = export_layout(l, format);
    if (!e.lossless()) QFAIL(qPrintable(QString::fromStdString("unexpected losses:" + listing(e.lost))));
    const ImportResult r = import_config(e.text, "exported", ImportFormat::Auto, o);
    const Layout expect = canonical_layout(l);
    if (!(r.layout == expect)) {
        QFAIL(qPrintable(QString::fromStdString("round trip differs.\nexported:\n" + e.text +
                                                "\nimported:\n" + layout_to_json(r.layout).dump() +
                                                "\nexpected:\n" + layout_to_json(expect).dump())));
    }
    QVERIFY(validate_layout(r.layout, "imported").valid());
}

}  // namespace

class TestExportRoundTrip : public QObject {
    Q_OBJECT
private slots:
    void megatron_bundled_data();
    void megatron_bundled();
    void megatron_variants();
    void megatron_inline_model();
    void slurm_megatron_job();
    void deepspeed_variants();
    void torchtitan_variants();
    void lossy_cases_name_the_loss();
    void canonical_forms();
};

void TestExportRoundTrip::megatron_bundled_data() {
    QTest::addColumn<QString>("layout");
    for (const auto& name : list_presets(PresetKind::Layout)) {
        QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
}

void TestExportRoundTrip::megatron_bundled() {
    QFETCH(QString, layout);
    const Layout l = bundled(layout.toStdString());
    expect_round_trip(l, ExportFormat::Megatron, options_for(l));
}

void TestExportRoundTrip::megatron_variants() {
    {   // interleaved virtual stages, Megatron-FSDP (ZeRO-3), FP8
        LayoutOverrides o;
        o.tp = 2;
        o.pp = 4;
        o.vpp = 2;
        o.zero = 3;
        o.dtype = "fp8";
        o.mbs = 1;
        o.gbs = 64;
        o.sequence_parallel = true;
        const Layout l = from_model("llama3-8b", "dgx-h100", 16, o);
        expect_round_trip(l, ExportFormat::Megatron, options_for(l));
    }
    {   // TP communication overlap (TE's default methods = "ring") and an interleaved
        // schedule whose micro-batch count pp does not divide (Megatron's larger group)
        LayoutOverrides o;
        o.tp = 2;
        o.pp = 4;
        o.vpp = 2;
        o.gbs = 6;
        o.sequence_parallel = true;
        o.tp_comm_overlap = "ring";
        const Layout l = from_model("llama3-8b", "dgx-h100", 8, o);
        QCOMPARE(l.num_micro_batches(), 6);
        expect_round_trip(l, ExportFormat::Megatron, options_for(l));
        const std::string args = export_layout(l, ExportFormat::Megatron).text;
        QVERIFY(args.find("--tp-comm-overlap") != std::string::npos);
        QVERIFY(args.find("--microbatch-group-size-per-virtual-pipeline-stage 6") != std::string::npos);
    }
    {   // Data-parallel overlap: the reduction alone, then neither (Megatron's default)
        LayoutOverrides o;
        o.tp = 2;
        o.pp = 2;
        o.gbs = 16;
        o.overlap_grad_reduce = "on";
        o.overlap_param_gather = "off";
        Layout l = from_model("llama3-8b", "dgx-h100", 8, o);
        QVERIFY(l.parallel.overlap_grad_reduce && !l.parallel.overlap_param_gather);
        expect_round_trip(l, ExportFormat::Megatron, options_for(l));
        std::string args = export_layout(l, ExportFormat::Megatron).text;
        QVERIFY(args.find("--overlap-grad-reduce") != std::string::npos);
        QVERIFY(args.find("--overlap-param-gather") == std::string::npos);
        o.overlap_grad_reduce = "off";
        o.overlap_param_gather.reset();  // follows the reduction
        l = from_model("llama3-8b", "dgx-h100", 8, o);
        QVERIFY(!l.parallel.overlap_grad_reduce && !l.parallel.overlap_param_gather);
        expect_round_trip(l, ExportFormat::Megatron, options_for(l));
        args = export_layout(l, ExportFormat::Megatron).text;
        QVERIFY(args.find("--overlap-") == std::string::npos);
    }
    {   // Qwen2-MoE: shared expert with gate, QKV bias, EP with a capacity factor, ZeRO-2
        LayoutOverrides o;
        o.tp = 2;
        o.ep = 4;
        o.etp = 1;
        o.zero = 2;
        o.gbs = 64;
        o.recompute = "selective";
        Layout l = from_model("qwen2-57b-a14b", "dgx-h100", 16, o);
        l.training.moe_capacity_factor = 1.25;
        expect_round_trip(l, ExportFormat::Megatron, options_for(l));
    }
    {   // DeepSeek-V3: MLA, 3 dense layers first, router bias, uneven pipeline ends
        LayoutOverrides o;
        o.tp = 8;
        o.pp = 4;
        o.ep = 8;
        o.etp = 1;
        o.gbs = 128;
        o.layers_per_stage = std::vector<int>{16, 15, 15, 15};
        o.sequence_parallel = true;
        o.zero = 1;
        const Layout l = from_model("deepseek-v3", "dgx-h100", 64, o);
        expect_round_trip(l, ExportFormat::Megatron, options_for(l));
    }
    {   // GPT-NeoX: LayerNorm, GELU, biases, RoPE; cp, tp-pp-dp order, block recompute
        LayoutOverrides o;
        o.tp = 4;
        o.pp = 4;
        o.cp = 2;
        o.order = "tp-cp-ep-pp-dp";
        o.recompute = "full";
        o.gbs = 32;
        Layout l = from_model("gpt-neox-20b", "dgx-a100-80gb", 64, o);
        l.training.recompute_num_layers = 2;
        l.training.dtype = DType::Fp16;
        expect_round_trip(l, ExportFormat::Megatron, options_for(l));
    }
    {   // gpt-oss-20b: every other block a 128-token window, attention sinks, biases
        // everywhere, YaRN; the window goes out as 127,0 and comes back as 128
        LayoutOverrides o;
        o.tp = 2;
        o.ep = 4;
        o.etp = 1;
        o.gbs = 32;
        const Layout l = from_model("gpt-oss-20b", "dgx-h100", 16, o);
        expect_round_trip(l, ExportFormat::Megatron, options_for(l));
        const std::string args = export_layout(l, ExportFormat::Megatron).text;
        for (const char* flag : {"--window-size 127,0", "--window-attn-skip-freq 2", "--softmax-type learnable",
                                 "--quick-geglu", "--glu-linear-offset 1", "--activation-func-clamp-value 7"}) {
            QVERIFY2(args.find(flag) != std::string::npos, flag);
        }
    }
    {   // plain data parallelism in fp32 with unfused attention
        LayoutOverrides o;
        o.dtype = "fp32";
        o.gbs = 16;
        Layout l = from_model("mistral-7b", "dgx-h100", 8, o);
        l.training.flash_attention = false;
        expect_round_trip(l, ExportFormat::Megatron, options_for(l));
    }
}

void TestExportRoundTrip::megatron_inline_model() {
    // A model no preset has: import writes it inline with an inferred model_type.
    LayoutOverrides o;
    o.tp = 2;
    o.gbs = 8;
    Layout l = from_model("tiny", "cpu-local", 4, o);
    l.model.num_layers = 6;
    l.model.ffn_hidden_size = 192;
    l.model_ref.clear();
    l.model.name = l.name;  // an inline model takes the layout's name on import
    expect_round_trip(l, ExportFormat::Megatron, options_for(l));
    const ImportResult r = import_megatron(export_megatron(l).text, "x.sh", options_for(l));
    QVERIFY(r.layout.model_ref.empty());
    QCOMPARE(QString::fromStdString(r.layout.model.family), QString("llama"));
}

void TestExportRoundTrip::slurm_megatron_job() {
    // The SLURM job: #SBATCH --nodes sets SLURM_NNODES, which srun torchrun reads.
    for (const char* name : {"llama3-70b-h100-64", "mixtral-8x7b-h100-64"}) {
        const Layout l = bundled(name);
        ExportOptions eo;
        eo.slurm_trainer = SlurmTrainer::Megatron;
        const ExportResult e = export_layout(l, ExportFormat::Slurm, eo);
        QVERIFY(detect_import_format(e.text) == ImportFormat::Megatron);
        const ImportResult r = import_config(e.text, "job.sbatch", ImportFormat::Auto, options_for(l));
        QVERIFY2(r.layout == canonical_layout(l), name);
    }
    // On a GB200 NVL72 rack a job's node is a 4-GPU compute tray (gpus_per_host), not the
    // 72-GPU NVLink domain: 256 GPUs are 64 SLURM nodes of 4 torchrun processes, and read back
    // as 256 GPUs; --nodes counts trays.
    LayoutOverrides o;
    o.tp = 4;
    o.pp = 4;
    const Layout l = from_model("llama3-70b", "gb200-nvl72", 256, o);
    QCOMPARE(l.cluster.allocation_gpus(), 4);
    ExportOptions eo;
    eo.slurm_trainer = SlurmTrainer::Megatron;
    const ExportResult e = export_layout(l, ExportFormat::Slurm, eo);
    QVERIFY2(e.text.find("#SBATCH --nodes=64\n") != std::string::npos, e.text.c_str());
    QVERIFY2(e.text.find("#SBATCH --gpus-per-node=4\n") != std::string::npos, e.text.c_str());
    QVERIFY2(e.text.find("--nproc-per-node 4 ") != std::string::npos, e.text.c_str());
    const ImportResult r = import_config(e.text, "job.sbatch", ImportFormat::Auto, options_for(l));
    QCOMPARE(r.layout.gpus, 256);
    QVERIFY(r.layout == canonical_layout(l));
    LayoutOverrides two_trays;
    two_trays.model = "llama3-70b";
    two_trays.cluster = "gb200-nvl72";
    two_trays.nodes = 2;
    QCOMPARE(build_layout(std::nullopt, two_trays).gpus, 8);
}

void TestExportRoundTrip::deepspeed_variants() {
    auto ds_options = [](const Layout& l) {
        ImportOptions o = options_for(l);
        o.model = l.model_ref;
        o.seq = l.training.seq_length;
        return o;
    };
    {   // ZeRO-2 with the optimizer offloaded, no pipeline
        LayoutOverrides o;
        o.zero = 2;
        o.mbs = 2;
        o.gbs = 16;
        o.dtype = "fp32";
        Layout l = from_model("tiny", "dgx-h100", 4, o);  // a cluster with a host link
        l.training.offload_optimizer = Offload::Cpu;
        expect_round_trip(l, ExportFormat::DeepSpeed, ds_options(l));
    }
    {   // AutoTP and Ulysses: DeepSpeed's batch world counts the AutoTP ranks
        LayoutOverrides o;
        o.tp = 2;
        o.cp = 2;
        o.zero = 1;
        o.mbs = 2;
        o.gbs = 64;
        o.sequence_parallel = false;
        const Layout l = from_model("llama3-8b", "dgx-h100", 16, o);
        expect_round_trip(l, ExportFormat::DeepSpeed, ds_options(l));
        const auto j = nlohmann::json::parse(export_layout(l, ExportFormat::DeepSpeed).text);
        // world 16 / sp 2 = 8 ranks in DeepSpeed's check: 2 × 8 accumulation steps × 8.
        QCOMPARE(j["train_batch_size"].get<int>(), 128);
        QCOMPARE(j["gradient_accumulation_steps"].get<int>(), 8);
    }
    {   // AutoEP
        LayoutOverrides o;
        o.ep = 2;
        o.zero = 1;
        o.mbs = 1;
        o.gbs = 8;
        const Layout l = from_model("tiny-moe", "cpu-local", 4, o);
        expect_round_trip(l, ExportFormat::DeepSpeed, ds_options(l));
    }
    {   // PipelineModule: its stage count is the script's; batch world = data parallel
        LayoutOverrides o;
        o.tp = 1;
        o.pp = 2;
        o.zero = 1;
        o.recompute = "full";
        o.mbs = 2;
        o.gbs = 64;
        o.sequence_parallel = false;
        const Layout l = from_model("llama3-8b", "dgx-h100", 16, o);
        const ExportResult e = export_layout(l, ExportFormat::DeepSpeed);
        QCOMPARE(e.lost.size(), std::size_t(1));
        QVERIFY(e.lost.front().find("PipelineModule(num_stages=2)") != std::string::npos);
        const auto j = nlohmann::json::parse(e.text);
        QCOMPARE(j["train_batch_size"].get<int>(), 64);  // 2 × 4 × dp 8
        QVERIFY(!j["pipeline"].contains("stages"));
        ImportOptions io = ds_options(l);
        io.pipeline_stages = 2;
        const ImportResult r = import_config(e.text, "ds.json", ImportFormat::Auto, io);
        QVERIFY(r.layout == canonical_layout(l));
        // TP under the pipeline: not AutoTP (its groups ignore the pipeline, pipe/engine.py:109);
        // with num_stages alone DeepSpeed's grid would count the TP ranks as data parallel.
        Layout t2 = l;
        t2.parallel.mesh.tp = 2;
        t2.parallel.mesh.dp = 4;
        const ExportResult e2 = export_layout(t2, ExportFormat::DeepSpeed);
        const auto j2 = nlohmann::json::parse(e2.text);
        QVERIFY(!j2.contains("tensor_parallel"));
        QCOMPARE(j2["train_batch_size"].get<int>(), 64);  // 2 × 8 × dp 4
        bool topology = false, tp_lost = false;
        for (const auto& s : e2.lost) {
            topology = topology || s.find("PipelineModule(topology=PipeModelDataParallelTopology(num_pp=2, num_mp=2, "
                                          "num_dp=4))") != std::string::npos;
            tp_lost = tp_lost || s.find("pipe/engine.py:109") != std::string::npos;
        }
        QVERIFY(topology);
        QVERIFY(tp_lost);
        // ZeRO-2/3 with a pipeline: DeepSpeed refuses it, so the export does, naming why.
        Layout z2 = l;
        z2.training.zero_stage = 2;
        try {
            (void)export_layout(z2, ExportFormat::DeepSpeed);
            QFAIL("exported");
        } catch (const InputError& err) {
            QCOMPARE(QString::fromStdString(err.issues().front().field), QString("training.zero_stage"));
            QVERIFY(err.issues().front().message.find("pipeline parallelism") != std::string::npos);
        }
    }
}

void TestExportRoundTrip::torchtitan_variants() {
    {
        LayoutOverrides o;
        o.zero = 3;
        const Layout l = torchtitan_run(bundled("llama3-70b-h100-64", o));
        for (const auto f : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) expect_round_trip(l, f, options_for(l));
    }
    {   // TP overlap as torchtitan's async TP, with the model compiled as it needs
        LayoutOverrides o;
        o.zero = 3;
        o.tp_comm_overlap = "ring";
        const Layout l = torchtitan_run(bundled("llama3-70b-h100-64", o));
        for (const auto f : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) {
            expect_round_trip(l, f, options_for(l));
            const std::string text = export_layout(l, f).text;
            QVERIFY(text.find("enable_async_tensor_parallel") != std::string::npos);
            QVERIFY(text.find(f == ExportFormat::Torchtitan ? "config.compile.enable = True"
                                                            : "[compile]\nenable = true") != std::string::npos);
        }
    }
    {   // 126 layers over 16 stages: lighter first and last stages
        LayoutOverrides o;
        o.zero = 2;
        const Layout l = torchtitan_run(bundled("llama3.1-405b-h100-16384", o));
        for (const auto f : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) expect_round_trip(l, f, options_for(l));
    }
    {   // interleaved 1F1B, FP8, full recompute, plain FSDP
        LayoutOverrides o;
        o.pp = 4;
        o.vpp = 2;
        o.zero = 3;
        o.dtype = "fp8";
        o.recompute = "full";
        o.mbs = 1;
        o.gbs = 32;
        const Layout l = torchtitan_run(from_model("llama3-8b", "dgx-h100", 8, o));
        for (const auto f : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) expect_round_trip(l, f, options_for(l));
    }
    {   // HSDP-free replication with TP on main (v0.2.x would need DDP, which refuses TP)
        LayoutOverrides o;
        o.zero = 0;
        o.tp = 2;
        o.recompute = "selective";
        const Layout l = torchtitan_run(from_model("llama3-8b", "dgx-h100", 16, o));
        expect_round_trip(l, ExportFormat::Torchtitan, options_for(l));
    }
    {   // 32 layers over 3 stages, and a heavier last stage: torchtitan's own dealing
        //   (the remainder to the first stages, lighter ends) expresses both
        LayoutOverrides o;
        o.pp = 3;
        o.zero = 3;
        o.mbs = 1;
        o.gbs = 48;
        Layout l = torchtitan_run(from_model("llama3-8b", "dgx-h100", 24, o));
        for (const auto f : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) expect_round_trip(l, f, options_for(l));
        l.placement.layers_per_stage = {10, 11, 11};
        for (const auto f : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) expect_round_trip(l, f, options_for(l));
    }
    {   // DDP only, no parallelism but data
        LayoutOverrides o;
        o.zero = 0;
        o.mbs = 2;
        o.gbs = 64;
        o.recompute = "none";
        const Layout l = torchtitan_run(from_model("llama3-8b", "dgx-h100", 16, o));
        for (const auto f : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) expect_round_trip(l, f, options_for(l));
    }
}

void TestExportRoundTrip::lossy_cases_name_the_loss() {
    const Layout tiny = bundled("tiny-cpu");
    auto has = [](const ExportResult& r, const std::string& word) {
        for (const auto& s : r.lost) {
            if (s.find(word) != std::string::npos) return true;
        }
        return false;
    };
    const auto tt = export_layout(tiny, ExportFormat::Torchtitan);
    QVERIFY(has(tt, "flavor"));
    QVERIFY(has(export_layout(tiny, ExportFormat::TorchtitanToml), "sequence parallelism"));
    {   // ZeRO-0 with TP: v0.2.x's DDP refuses any second axis, main replicates
        LayoutOverrides o;
        o.zero = 0;
        o.tp = 2;
        const Layout l = torchtitan_run(from_model("llama3-8b", "dgx-h100", 16, o));
        QVERIFY(has(export_layout(l, ExportFormat::TorchtitanToml), "DDP has not supported"));
        QVERIFY(export_layout(l, ExportFormat::Torchtitan).lossless());
    }
    {   // What torchtitan runs differently from a Megatron-style layout: its loss on fp32
        // logits, op-level checkpointing for Megatron's selective, compile for fused kernels
        LayoutOverrides o;
        o.recompute = "selective";
        o.zero = 3;
        Layout l = from_model("llama3-8b", "dgx-h100", 16, o);
        for (const auto f : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) {
            const auto r = export_layout(l, f);
            QVERIFY(has(r, "cross_entropy vocab-parallel"));
            QVERIFY(has(r, "op-level selective checkpointing"));
            QVERIFY(r.text.find(f == ExportFormat::Torchtitan ? "config.compile.enable = True" : "[compile]\nenable = true") !=
                    std::string::npos);
        }
        l = torchtitan_run(l);
        l.training.fused_elementwise = false;
        for (const auto f : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) {
            const auto r = export_layout(l, f);
            QVERIFY(r.lossless());
            QVERIFY(r.text.find("compile") == std::string::npos);
            expect_round_trip(l, f, options_for(l));
        }
        // Megatron-LM has neither: both named lost.
        const auto m = export_layout(l, ExportFormat::Megatron);
        QVERIFY(has(m, "cross_entropy upcast"));
        QVERIFY(has(m, "eager element-wise"));
        QVERIFY(has(m, "op-level selective checkpointing"));
        // Transformer Engine's loss, as Megatron-Bridge runs it: Megatron-LM refuses it
        // (training/arguments.py:1697-1702 at d98e8a64), so the export names it lost.
        for (const auto loss : {CrossEntropy::Te, CrossEntropy::TeInPlace}) {
            l.training.cross_entropy = loss;
            QVERIFY(has(export_layout(l, ExportFormat::Megatron), "cross_entropy " + to_string(loss) + ": Megatron-LM refuses"));
        }
        // flash-attn's fused loss (llm-foundry's): Megatron-LM has its own, named lost.
        l.training.cross_entropy = CrossEntropy::FlashAttn;
        QVERIFY(has(export_layout(l, ExportFormat::Megatron), "cross_entropy flash-attn"));
    }
    {   // Tiled TP overlap: "pipe" has no flag of its own in Megatron-LM; DeepSpeed and
        // torchtitan do not write it
        LayoutOverrides o;
        o.tp = 2;
        o.sequence_parallel = true;
        o.tp_comm_overlap = "pipe";
        const Layout l = from_model("llama3-8b", "dgx-h100", 16, o);
        QVERIFY(has(export_layout(l, ExportFormat::Megatron), "--tp-comm-overlap-cfg"));
        QVERIFY(has(export_layout(l, ExportFormat::DeepSpeed), "tp_overlap_comm"));
        QVERIFY(has(export_layout(l, ExportFormat::Torchtitan), "async TP"));
        const ImportResult r = import_config(export_layout(l, ExportFormat::Megatron).text, "x.sh",
                                             ImportFormat::Auto, options_for(l));
        QCOMPARE(r.layout.parallel.tp_comm_overlap, TpOverlap::Ring);
    }
    const auto ds = export_layout(bundled("mixtral-8x7b-h100-64"), ExportFormat::DeepSpeed);
    QVERIFY(has(ds, "PipeModelDataParallelTopology(num_pp=4, num_mp=2, num_dp=8)"));  // the script's
    // AutoEP under a grid with model-parallel ranks: the experts stay replicated.
    QVERIFY(has(ds, "auto_ep_folding.py:258"));
    QVERIFY(!nlohmann::json::parse(ds.text).contains("expert_parallel"));
    {   // PipelineModule without TP/CP: num_stages is enough
        LayoutOverrides o;
        o.tp = 1;
        o.pp = 2;
        o.sequence_parallel = false;
        QVERIFY(has(export_layout(from_model("llama3-8b", "dgx-h100", 16, o), ExportFormat::DeepSpeed),
                    "PipelineModule(num_stages=2)"));
    }
    {   // expert TP: AutoEP reserves expert_tensor_parallel_size > 1
        LayoutOverrides o;
        o.tp = 2;
        o.ep = 2;
        o.etp = 2;
        o.pp = 1;
        const ExportResult e = export_layout(from_model("tiny-moe", "cpu-local", 8, o), ExportFormat::DeepSpeed);
        QVERIFY(has(e, "auto_ep_folding.py:215"));
        QVERIFY(!nlohmann::json::parse(e.text).contains("expert_parallel"));
    }
    {   // Llama 4's chunked attention and Gemma 2's soft-caps have no Megatron-LM flag
        LayoutOverrides lo;
        lo.ep = 8;
        lo.etp = 1;
        lo.gbs = 64;
        const Layout scout = from_model("llama4-scout", "dgx-h100", 64, lo);
        const auto e = export_layout(scout, ExportFormat::Megatron);
        QVERIFY(has(e, "chunked attention"));
        QVERIFY(e.text.find("--no-rope-freq 4") != std::string::npos);
        Layout gemma = from_model("mistral-7b", "dgx-h100", 8, LayoutOverrides{});
        gemma.model.attn_logit_softcap = 50;
        gemma.model.final_logit_softcap = 30;
        const auto g = export_layout(gemma, ExportFormat::Megatron);
        QVERIFY(has(g, "attention logit soft-cap 50"));
        QVERIFY(has(g, "final logit soft-cap 30"));
        gemma.model.glu_activation = "gelu_tanh";
        QVERIFY(has(export_layout(gemma, ExportFormat::Megatron), "GeGLU"));
    }
    LayoutOverrides o;
    o.schedule = "gpipe";
    QVERIFY(has(export_layout(bundled("llama3-70b-h100-64", o), ExportFormat::Megatron), "GPipe"));
    // Any split is --pipeline-model-parallel-layout now: lossless, and it comes back.
    Layout odd = bundled("llama3-70b-h100-64");
    odd.placement.layers_per_stage = {19, 21, 19, 21};
    QVERIFY(export_layout(odd, ExportFormat::Megatron).lost.empty());
    expect_round_trip(odd, ExportFormat::Megatron, options_for(odd));
    Layout odd_vpp = bundled("llama3-70b-h100-64");
    odd_vpp.parallel.vpp = 2;
    odd_vpp.training.schedule = Schedule::Interleaved;
    odd_vpp.placement.layers_per_stage = {9, 10, 10, 11, 11, 10, 10, 9};
    QVERIFY(export_layout(odd_vpp, ExportFormat::Megatron).lost.empty());
    expect_round_trip(odd_vpp, ExportFormat::Megatron, options_for(odd_vpp));
    Layout order = bundled("llama3-70b-h100-64");
    order.parallel.mesh.order = "tp-dp-cp-ep-pp";
    QVERIFY(has(export_layout(order, ExportFormat::Megatron), "rank order"));
}

void TestExportRoundTrip::canonical_forms() {
    Layout l = bundled("mixtral-8x7b-h100-64");
    const Layout c = canonical_layout(l);
    QVERIFY(c.placement.layers_per_stage.empty());     // [8,8,8,8] is the balanced split
    QVERIFY(c.placement.experts_per_ep_rank.empty());  // one expert per rank, in order
    QCOMPARE(c.stage_layers(), l.stage_layers());
    QCOMPARE(c.ep_experts(), l.ep_experts());
    l.placement.experts_per_ep_rank = {{1}, {0}, {2}, {3}, {4}, {5}, {6}, {7}};
    QVERIFY(!canonical_layout(l).placement.experts_per_ep_rank.empty());
}

QTEST_GUILESS_MAIN(TestExportRoundTrip)
#include "tst_export_roundtrip.moc"
