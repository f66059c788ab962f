// Module-level selective recomputation (Megatron-LM's --recompute-modules): what each
// module frees of a block's activations, by hand on a small shape; what it reruns, through
// the estimate; the layout field's JSON form, validation, the CLI overrides, and the
// Megatron-LM export and import. docs/cost-model.md, "Module-level recomputation".
#include <QtTest>

#include <cmath>
#include <map>

#include "core/common/error.h"
#include "core/cost/cost_model.h"
#include "core/cost/memory_model.h"
#include "core/export/megatron_export.h"
#include "core/export/megatron_import.h"
#include "core/common/json_reader.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_validate.h"
#include "core/sim/simulate.h"
#include "tests/core/cost/cost_test_util.h"
#include "tests/support/recording_sink.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

namespace {

// A small MoE block: h 1024, q 1024, kv 256, shared experts 2048 wide (gated), 8 routed
// experts of 512 with top 2, bf16, t 2 with SP, 4096 tokens per micro-batch, no dropout.
ActivationShape small_moe() {
    ActivationShape a;
    a.tokens = 4096;
    a.seq = 4096;
    a.hidden = 1024;
    a.q_width = 1024;
    a.kv_width = 256;
    a.heads = 8;
    a.ffn = 2048;
    a.gated = true;
    a.tp = 2;
    a.sequence_parallel = true;
    a.flash_attention = true;
    a.element_bytes = 2;
    a.gemm_input_bytes = 2;
    a.hidden_dropout = false;
    a.attention_dropout = false;
    a.top_k = 2;
    a.expert_ffn = 512;
    a.experts = 8;
    return a;
}

double freed(const ActivationShape& a, bool moe, std::vector<RecomputeModule> modules) {
    return module_recompute_freed_bytes(block_activations(a, moe), moe, RecomputeSet(true, modules));
}

bool has_error(const ValidationResult& v, const std::string& field, const std::string& words) {
    for (const auto& e : v.errors) {
        if (e.field == field && e.message.find(words) != std::string::npos) return true;
    }
    return false;
}

}  // namespace

class TestCostRecomputeModules : public QObject {
    Q_OBJECT
private slots:
    // By hand, per micro-batch (T = 4096, t = 2, SP, e = g = 2):
    // layernorm: the norm outputs that are modules of their own in Megatron-LM's TE layer
    //   spec, each g·h/t·T = 2·1024/2·4096 = 4,194,304: an MoE block's pre-MLP norm; an MLA
    //   block's input norm too; none in a dense non-MLA block (both fused into the next GEMM,
    //   which keeps their output);
    // mla_up_proj: Q, K, V, e·(q + 2kv)/t·T = 2·1536/2·4096 = 6,291,456;
    // moe_act: the routed copies (k/t·T = 4096) times the activation output g·d_e = 1024:
    //   4,194,304;
    // shared_experts (and mlp in a dense block): (2e + g)·d_ff/t·T = 6·2048/2·4096 =
    //   25,165,824;
    // moe: copies·(g·h + 2e·d_e + g·d_e) = 4096·(2048 + 2048 + 1024) = 20,971,520 (the
    //   permuted input; the expert output is not kept, probabilities are applied in the
    //   activation), the router's fp32 logits 4·8/2·4096 = 65,536, and the shared experts:
    //   46,202,880.
    void each_module_frees_its_own_terms() {
        const ActivationShape a = small_moe();
        using M = RecomputeModule;
        QCOMPARE(freed(a, true, {M::Layernorm}), 4194304.0);
        QCOMPARE(freed(a, false, {M::Layernorm}), 0.0);
        ActivationShape mla = a;
        mla.mla_latent = 512 + 1536;
        QCOMPARE(freed(mla, true, {M::Layernorm}), 8388608.0);
        QCOMPARE(freed(mla, false, {M::Layernorm}), 4194304.0);
        QCOMPARE(freed(a, true, {M::MlaUpProj}), 6291456.0);
        QCOMPARE(freed(a, true, {M::MoeAct}), 4194304.0);
        QCOMPARE(freed(a, true, {M::SharedExperts}), 25165824.0);
        QCOMPARE(freed(a, false, {M::Mlp}), 25165824.0);
        QCOMPARE(freed(a, true, {M::Mlp}), 0.0);      // mlp: dense layers only
        QCOMPARE(freed(a, false, {M::MoeAct}), 0.0);  // no experts in a dense block
        QCOMPARE(freed(a, true, {M::Moe}), 46202880.0);
        // moe covers moe_act and shared_experts: nothing counted twice.
        QCOMPARE(freed(a, true, {M::Moe, M::MoeAct, M::SharedExperts}), 46202880.0);
        QCOMPARE(freed(a, true, {M::Layernorm, M::MoeAct}), 4194304.0 + 4194304.0);
        // core_attn frees the score terms through `selective`, not here.
        QCOMPARE(freed(a, true, {M::CoreAttn}), 0.0);
        // The terms add up to the block's total, as before the split.
        QCOMPARE(block_activations(a, true).total(), block_activation_bytes(a, true));
    }

    // Llama 3 8B (h 4096, d_ff 14336, 32 layers, bf16), one micro-batch of 8192 tokens per GPU,
    // t = 1: "mlp" frees 32·(2e + g)·d_ff·T = 32·6·14336·8192 bytes and reruns both MLP GEMMs,
    // 2·T·3·h·d_ff FLOPs per layer. Selective with no modules is core_attn (Megatron's
    // default), as before the field existed.
    void mlp_recompute_in_the_estimate() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 8192);
        l.training.recompute = Recompute::Selective;
        const Estimate attn = estimate_layout(l);
        l.training.recompute_modules = {RecomputeModule::CoreAttn};
        const Estimate same = estimate_layout(l);
        QCOMPARE(same.step_time_s, attn.step_time_s);
        QCOMPARE(same.stages[0].activations_bytes, attn.stages[0].activations_bytes);
        l.training.recompute_modules = {RecomputeModule::CoreAttn, RecomputeModule::Mlp};
        const Estimate mlp = estimate_layout(l);
        const double T = 8192;
        const double mlp_freed = static_cast<double>(attn.stages[0].activations_bytes - mlp.stages[0].activations_bytes);
        QVERIFY2(std::fabs(mlp_freed - 32 * 6 * 14336.0 * T) <= 2, qPrintable(QString::number(mlp_freed)));
        const double rerun = 2 * T * 3 * 4096.0 * 14336 * 32;
        const double flops_diff = (mlp.hardware_tflops_per_gpu * mlp.step_time_s -
                                   attn.hardware_tflops_per_gpu * attn.step_time_s) * 1e12;
        QVERIFY2(std::fabs(flops_diff / rerun - 1) < 1e-9, qPrintable(QString::number(flops_diff / rerun)));
        QVERIFY(mlp.step_time_s > attn.step_time_s);
        QVERIFY(mlp.time.recompute_s > attn.time.recompute_s);
        // layernorm on a dense block without MLA: both norms are fused into the next GEMM in
        // Megatron-LM's TE layer spec (gpt_layer_specs.py:319-336 at d98e8a64), so nothing is
        // freed and nothing rerun.
        l.training.recompute_modules = {RecomputeModule::CoreAttn, RecomputeModule::Layernorm};
        const Estimate norms = estimate_layout(l);
        QCOMPARE(norms.stages[0].activations_bytes, attn.stages[0].activations_bytes);
        QCOMPARE(norms.step_time_s, attn.step_time_s);
    }

    // DeepSeek-V3 (MLA, MoE): every module the Megatron-Bridge recipes name lowers the
    // stored activations and adds recompute time; together they lower more.
    void moe_modules_in_the_estimate() {
        Layout l = make_layout(load_model("deepseek-v3"), "dgx-b200", 1, 8, 32, 1, 256, 4096);
        l.gpus = 256;
        l.parallel.mesh.ep = 32;
        l.training.recompute = Recompute::Selective;
        l.training.recompute_modules = {RecomputeModule::CoreAttn};
        QVERIFY(validate_layout(l, "test").valid());
        const Estimate base = estimate_layout(l);
        double all = 0;
        for (RecomputeModule m : {RecomputeModule::MoeAct, RecomputeModule::Layernorm, RecomputeModule::MlaUpProj,
                                  RecomputeModule::SharedExperts}) {
            l.training.recompute_modules = {m};
            const Estimate e = estimate_layout(l);
            QVERIFY2(e.stages[1].activations_bytes < base.stages[1].activations_bytes, to_string(m).c_str());
            all += static_cast<double>(base.stages[1].activations_bytes - e.stages[1].activations_bytes);
        }
        l.training.recompute_modules = {RecomputeModule::MoeAct, RecomputeModule::Layernorm,
                                        RecomputeModule::MlaUpProj, RecomputeModule::SharedExperts};
        const Estimate e = estimate_layout(l);
        // core_attn is not in the list: fused attention had no score terms to free, so the
        // four modules' savings add up exactly.
        const double together = static_cast<double>(base.stages[1].activations_bytes - e.stages[1].activations_bytes);
        QVERIFY2(std::fabs(together - all) <= 8, qPrintable(QString::number(together - all)));
        QVERIFY(e.time.recompute_s > 0);
    }

    // The simulator's trace names the span after what it reruns, with the rerun FLOPs: for
    // "mlp" on Llama 3 8B (t = 1, T = 8192) at least both MLP GEMMs, 2·T·3·h·d_ff.
    void simulator_names_the_recomputed_modules() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 8192);
        l.training.recompute = Recompute::Selective;
        test::RecordingSink core;
        (void)simulate_layout(l, &core);
        (void)core.named("block.0.attention.recompute");
        l.training.recompute_modules = {RecomputeModule::CoreAttn, RecomputeModule::Mlp};
        test::RecordingSink mods;
        (void)simulate_layout(l, &mods);
        const TraceEvent& e = mods.named("block.0.modules.recompute");
        QVERIFY(e.end_ns > e.start_ns);
        QVERIFY(e.flops > 2 * 8192.0 * 3 * 4096 * 14336);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, (void)mods.named("block.0.attention.recompute"));
    }

    void json_round_trip_and_refusals() {
        Layout l = make_layout(load_model("deepseek-v3"), "dgx-b200", 1, 8, 32, 1, 256, 4096);
        l.training.recompute = Recompute::Selective;
        l.training.recompute_modules = {RecomputeModule::MlaUpProj, RecomputeModule::Mlp};
        const Json j = layout_to_json(l);
        QCOMPARE(j["training"]["recompute_modules"], Json({"mla_up_proj", "mlp"}));
        QCOMPARE(layout_from_json(j, "x.json").training.recompute_modules, l.training.recompute_modules);
        Json bad = j;
        bad["training"]["recompute_modules"] = {"mlp", "attention"};
        try {
            (void)layout_from_json(bad, "x.json");
            QFAIL("an unknown module was read");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.issues().at(0).file), QString("x.json"));
            QCOMPARE(QString::fromStdString(e.issues().at(0).field), QString("training.recompute_modules[1]"));
            QVERIFY(std::string(e.what()).find("attention") != std::string::npos);
        }
        bad["training"]["recompute_modules"] = "mlp";
        QVERIFY_THROWS_EXCEPTION(InputError, (void)layout_from_json(bad, "x.json"));
    }

    void validation_names_the_field() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 8192);
        l.training.recompute = Recompute::Full;
        l.training.recompute_modules = {RecomputeModule::Layernorm};
        QVERIFY(has_error(validate_layout(l, "t"), "training.recompute_modules", "only with recompute: selective"));
        l.training.recompute = Recompute::Selective;
        QVERIFY(validate_layout(l, "t").valid());
        l.training.recompute_modules = {RecomputeModule::MlaUpProj};
        QVERIFY(has_error(validate_layout(l, "t"), "training.recompute_modules", "multi-latent attention"));
        l.training.recompute_modules = {RecomputeModule::MoeAct};
        const auto v = validate_layout(l, "t");
        QVERIFY(v.valid());
        QVERIFY(!v.warnings.empty());
    }

    // --recompute-modules: a list implies selective recomputation (as Megatron-Bridge's
    // overrides do); an unknown name or another granularity is refused naming the flag.
    void cli_overrides() {
        LayoutOverrides f;
        f.model = "llama3-8b";
        f.gpus = 8;
        f.recompute_modules = "core_attn, mlp";
        const Layout l = build_layout(std::nullopt, f);
        QCOMPARE(l.training.recompute, Recompute::Selective);
        QCOMPARE(l.training.recompute_modules,
                 (std::vector<RecomputeModule>{RecomputeModule::CoreAttn, RecomputeModule::Mlp}));
        f.recompute_modules = "mlp,attn";
        try {
            (void)build_layout(std::nullopt, f);
            QFAIL("an unknown module was accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.issues().at(0).field), QString("--recompute-modules"));
        }
        f.recompute_modules = "mlp";
        f.recompute = "full";
        QVERIFY_THROWS_EXCEPTION(InputError, (void)build_layout(std::nullopt, f));
    }

    // Export writes --recompute-modules as upstream's nargs "+" (one word each), with
    // --moe-grouped-gemm for moe_act and tensor-wise fp8 scaling for moe_act/layernorm
    // (transformer_config.py:1964-1967, :2000-2012 at d98e8a64); import reads it back.
    void megatron_round_trip() {
        Layout l = make_layout(load_model("deepseek-v3"), "dgx-b200", 1, 8, 32, 1, 256, 4096);
        l.gpus = 256;
        l.parallel.mesh.ep = 32;
        l.training.dtype = DType::Fp8;
        l.training.recompute = Recompute::Selective;
        l.training.recompute_modules = {RecomputeModule::MlaUpProj, RecomputeModule::Layernorm,
                                        RecomputeModule::MoeAct};
        std::map<std::string, std::string> args;
        for (const auto& [flag, value] : megatron_command(l).args) args[flag] = value;
        QCOMPARE(QString::fromStdString(args.at("--recompute-modules")), QString("mla_up_proj layernorm moe_act"));
        QVERIFY(args.count("--moe-grouped-gemm") == 1);
        QCOMPARE(QString::fromStdString(args.at("--fp8-recipe")), QString("tensorwise"));
        const ExportResult text = export_megatron(l);
        QVERIFY(text.text.find("--recompute-modules mla_up_proj layernorm moe_act") != std::string::npos);
        ImportOptions o;
        o.cluster = "dgx-b200";
        const ImportResult r = import_megatron(text.text, "ds.sh", o);
        QCOMPARE(r.layout.training.recompute, Recompute::Selective);
        QCOMPARE(r.layout.training.recompute_modules, l.training.recompute_modules);
        // Upstream's other modules belong to blocks Meshwork has no model of; a misspelling is
        // named as such.
        const std::string base = "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 "
                                 "--num-attention-heads 4 --seq-length 32 --micro-batch-size 1 "
                                 "--global-batch-size 8 --vocab-size 256 --recompute-granularity selective ";
        for (const char* bad : {"--recompute-modules core_attn mhc", "--recompute-modules mlpp"}) {
            try {
                (void)import_megatron(base + bad, "b.sh", o);
                QFAIL(bad);
            } catch (const InputError& e) {
                QVERIFY(e.issues().at(0).field.find("--recompute-modules") != std::string::npos);
            }
        }
        const ImportResult plain = import_megatron(base + "--recompute-modules core_attn mlp", "b.sh", o);
        QCOMPARE(plain.layout.training.recompute_modules,
                 (std::vector<RecomputeModule>{RecomputeModule::CoreAttn, RecomputeModule::Mlp}));
    }
};

QTEST_GUILESS_MAIN(TestCostRecomputeModules)
#include "tst_cost_recompute_modules.moc"
