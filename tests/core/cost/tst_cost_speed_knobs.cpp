// The layout knobs of issue 28 pattern 5 that published runs state: activation offload to the
// host (training.offload_activation_layers, core/cost/activation_offload.h), torchao's
// row-wise fp8 recipe (core/cost/fp8_cast.h), and the squared-ReLU dense MLP (Nemotron-H):
// what each does to memory and time, checked against the formulas' own inputs, and what
// validation refuses, naming the field.
#include <QtTest>

#include <string>

#include "core/common/error.h"
#include "core/cost/activation_offload.h"
#include "core/cost/block_cost.h"
#include "core/cost/cost_model.h"
#include "core/cost/fp8_cast.h"
#include "core/cost/gemm_efficiency.h"
#include "core/cost/gemm_shapes.h"
#include "core/cost/model_profile.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_validate.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

namespace {

bool has_error(const Layout& l, const std::string& field) {
    for (const auto& e : validate_layout(l, "l.json").errors)
        if (e.field == field) return true;
    return false;
}

// Llama 3 8B on one H100 at 8K tokens: one layer's activations are ~0.5 GB.
Layout llama_one_gpu() {
    Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 1, 1, 8, 8192);
    l.training.zero_stage = 0;
    return l;
}

}  // namespace

class TestCostSpeedKnobs : public QObject {
    Q_OBJECT
  private slots:
    // The copy exposed by hand: what the hiding pass does not cover, never negative.
    void offload_exposed_by_hand() {
        QCOMPARE(offload_exposed_s(6.4e9, 0.0, 6.4e10, 0.0), 0.1);
        QCOMPARE(offload_exposed_s(6.4e9, 0.04, 6.4e10, 0.0), 0.1 - 0.04);
        QCOMPARE(offload_exposed_s(6.4e9, 1.0, 6.4e10, 2e-6), 0.0);
        QCOMPARE(offload_exposed_s(6.4e9, 0.0, 0.0, 0.0), 0.0);  // no link: validation refuses
        QCOMPARE(offloaded_layers_in(0, 32, 4), 4);
        QCOMPARE(offloaded_layers_in(2, 8, 4), 2);
        QCOMPARE(offloaded_layers_in(8, 8, 4), 0);
    }

    // Offloading N layers frees N − 1 layers' activations (one stays as the copy in flight)
    // and charges, per micro-batch and direction, each layer's copy over the host link less
    // the layer's own pass time.
    void offload_moves_memory_and_time() {
        Layout l = llama_one_gpu();
        const Estimate base = estimate_layout(l);
        constexpr int kOffloaded = 8;
        l.training.offload_activation_layers = kOffloaded;
        QVERIFY(validate_layout(l, "l.json").valid());
        const Estimate off = estimate_layout(l);
        const double freed = static_cast<double>(base.stages[0].activations_bytes - off.stages[0].activations_bytes);
        const double per_layer = freed / kOffloaded;
        QVERIFY2(per_layer > 1e8, qPrintable(QString::number(per_layer)));
        // One layer's activations come back as working memory.
        QVERIFY(off.stages[0].buffers_bytes >= base.stages[0].buffers_bytes);
        QVERIFY(off.stages[0].peak_bytes < base.stages[0].peak_bytes);
        // Time: never less than the copies less the compute of the offloaded layers, never more
        // than the copies themselves (64 GB/s PCIe Gen5 x16 of the dgx-h100 preset).
        const double link = l.cluster.host_link.bandwidth_bytes_per_s;
        const double copies_s =
            8 /*micro-batches*/ * 2.0 * kOffloaded * (per_layer / link + l.cluster.host_link.latency_s);
        QVERIFY(off.time.activation_offload_s > 0);
        QVERIFY2(off.time.activation_offload_s <= copies_s + 1e-9,
                 qPrintable(QString("%1 > %2").arg(off.time.activation_offload_s).arg(copies_s)));
        QVERIFY(off.step_time_s > base.step_time_s);
        QCOMPARE(base.time.activation_offload_s, 0.0);
        // A faster link (NVLink-C2C of GB200, 225 GB/s per GPU) hides more of it.
        Layout c2c = l;
        c2c.cluster.host_link.bandwidth_bytes_per_s = 2.25e11;
        QVERIFY(estimate_layout(c2c).time.activation_offload_s < off.time.activation_offload_s);
    }

    // Megatron-LM's rules, each an error naming training.offload_activation_layers.
    void offload_validation_names_the_field() {
        Layout l = llama_one_gpu();
        l.training.offload_activation_layers = l.model.num_layers;  // must be fewer
        QVERIFY(has_error(l, "training.offload_activation_layers"));
        l.training.offload_activation_layers = 4;
        l.training.recompute = Recompute::Full;
        QVERIFY(has_error(l, "training.offload_activation_layers"));
        l.training.recompute = Recompute::None;
        l.training.cuda_graphs = CudaGraphs::PerLayer;
        QVERIFY(has_error(l, "training.offload_activation_layers"));
        l.training.cuda_graphs = CudaGraphs::FullIteration;
        QVERIFY(validate_layout(l, "l.json").valid());
        Layout piped = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 2, 1, 1, 8, 8192);
        piped.training.offload_activation_layers = 4;
        QVERIFY(has_error(piped, "training.offload_activation_layers"));
        Layout no_link = l;
        no_link.cluster.host_link.bandwidth_bytes_per_s = 0;
        QVERIFY(has_error(no_link, "training.offload_activation_layers"));
        // Per-layer graphs with full recomputation: Megatron-LM refuses the pair.
        Layout graphs = llama_one_gpu();
        graphs.training.recompute = Recompute::Full;
        graphs.training.cuda_graphs = CudaGraphs::PerLayer;
        QVERIFY(has_error(graphs, "training.cuda_graphs"));
    }

    // The JSON field, the flag, and their errors.
    void offload_json_and_flag() {
        Layout l = llama_one_gpu();
        QVERIFY(!layout_to_json(l)["training"].contains("offload_activation_layers"));
        l.training.offload_activation_layers = 3;
        auto j = layout_to_json(l);
        QCOMPARE(j["training"]["offload_activation_layers"].get<int>(), 3);
        QCOMPARE(layout_from_json(j, "l.json").training.offload_activation_layers, 3);
        j["training"]["offload_activation_layers"] = -1;
        try {
            (void)layout_from_json(j, "l.json");
            QFAIL("accepted -1 offloaded layers");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("training.offload_activation_layers") != std::string::npos, e.what());
        }
        LayoutOverrides f;
        f.model = "llama3-8b";
        f.cluster = "dgx-h100";
        f.offload_activation_layers = 5;
        QCOMPARE(build_layout(std::nullopt, f).training.offload_activation_layers, 5);
        f.offload_activation_layers = -2;
        try {
            (void)build_layout(std::nullopt, f);
            QFAIL("accepted --offload-activation-layers -2");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("--offload-activation-layers") != std::string::npos, e.what());
        }
    }

    // Row-wise fp8: the per-tensor GEMM rate, plus 2 bytes per operand element per GEMM, which
    // the backward pays at memory speed; a bad recipe names its field.
    void rowwise_fp8_costs_its_casts() {
        Fp8Recipe r = Fp8Recipe::Tensorwise;
        QVERIFY(parse_fp8_recipe("rowwise", r) && r == Fp8Recipe::Rowwise);
        QCOMPARE(to_string(Fp8Recipe::Rowwise), std::string("rowwise"));
        QCOMPARE(gemm_precision(DType::Fp8, Fp8Recipe::Rowwise), GemmPrecision::Fp8Tensorwise);
        const GemmShape g{1024, 4096, 2048, 1};
        QCOMPARE(fp8_extra_cast_bytes(g, Fp8Recipe::Rowwise), 2.0 * (1024.0 * 2048 + 2048.0 * 4096 + 1024.0 * 4096));
        QCOMPARE(fp8_extra_cast_bytes(g, Fp8Recipe::Tensorwise), 0.0);
        QCOMPARE(fp8_extra_cast_bytes(g, Fp8Recipe::Mxfp8), 0.0);

        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 1, 1, 8, 8192);
        l.training.dtype = DType::Fp8;
        const Estimate tensorwise = estimate_layout(l);
        l.training.fp8_recipe = Fp8Recipe::Rowwise;
        const Estimate rowwise = estimate_layout(l);
        QVERIFY(rowwise.step_time_s > tensorwise.step_time_s);
        // Only the backward grows: the forward is the per-tensor one.
        QCOMPARE(rowwise.stages[0].forward_s, tensorwise.stages[0].forward_s);
        QVERIFY(rowwise.stages[0].backward_s > tensorwise.stages[0].backward_s);
        // bf16 ignores the recipe.
        l.training.dtype = DType::Bf16;
        const double bf16 = estimate_layout(l).step_time_s;
        l.training.fp8_recipe = Fp8Recipe::Tensorwise;
        QCOMPARE(estimate_layout(l).step_time_s, bf16);

        auto j = layout_to_json(l);
        j["training"]["fp8_recipe"] = "colwise";
        try {
            (void)layout_from_json(j, "l.json");
            QFAIL("accepted fp8_recipe colwise");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("training.fp8_recipe") != std::string::npos, e.what());
        }
    }

    // Squared ReLU (Nemotron-H): an ungated MLP, two GEMMs (up, down) of the FFN width, not
    // three; the activation stores what GELU's does (its input, for the backward).
    void relu2_mlp_is_two_gemms() {
        ModelSpec relu2 = load_model("llama3-8b");
        relu2.mlp = MlpKind::Dense;
        relu2.mlp_activation = "relu2";
        ModelSpec gelu = relu2;
        gelu.mlp_activation.clear();
        ModelSpec gated = relu2;
        gated.mlp = MlpKind::Gated;
        gated.mlp_activation.clear();
        auto gemms = [](const ModelSpec& m) {
            Layout l = make_layout(m, "dgx-h100", 2, 1, 1, 1, 8, 4096);
            const ModelProfile p = build_model_profile(m);
            LayoutCosts c;
            prepare_layout_costs(p, l.cluster, l.parallel, l.training, c);
            return block_gemms(p, p.dense, c, l.training);
        };
        const BlockGemms r = gemms(relu2), g = gemms(gated);
        const double ffn_local = static_cast<double>(relu2.ffn_hidden_size) / 2;
        QCOMPARE(r.fc1.n, ffn_local);       // up only
        QCOMPARE(g.fc1.n, 2 * ffn_local);   // gate and up
        QCOMPARE(r.fc2.k, ffn_local);
        QVERIFY(r.fc1.flops() + r.fc2.flops() < 0.7 * (g.fc1.flops() + g.fc2.flops()));
        // MLP FLOPs: 2 of the 3 projections of the gated model.
        const double mlp_relu2 = r.fc1.flops() + r.fc2.flops();
        const double mlp_gated = g.fc1.flops() + g.fc2.flops();
        QCOMPARE(mlp_relu2 / mlp_gated, 2.0 / 3.0);
        // Time and memory: as GELU's (same ungated shape and stored tensors), less than SwiGLU's.
        Layout lr = make_layout(relu2, "dgx-h100", 1, 1, 1, 1, 8, 4096);
        Layout lg = make_layout(gelu, "dgx-h100", 1, 1, 1, 1, 8, 4096);
        Layout lsw = make_layout(gated, "dgx-h100", 1, 1, 1, 1, 8, 4096);
        const Estimate er = estimate_layout(lr), eg = estimate_layout(lg), esw = estimate_layout(lsw);
        QCOMPARE(er.step_time_s, eg.step_time_s);
        QCOMPARE(er.stages[0].activations_bytes, eg.stages[0].activations_bytes);
        QVERIFY(er.stages[0].activations_bytes < esw.stages[0].activations_bytes);
        QVERIFY(er.step_time_s < esw.step_time_s);
    }
};

QTEST_GUILESS_MAIN(TestCostSpeedKnobs)
#include "tst_cost_speed_knobs.moc"
