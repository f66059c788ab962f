// Memory side of the cost model: Korthikanti's activation formulas, the ZeRO divisions,
// parameter memory by hand, monotonicity, in-flight micro-batches, layouts that do not fit.
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "core/cost/cost_model.h"
#include "core/cost/memory_model.h"
#include "tests/core/cost/cost_test_util.h"
#include "core/layout/layout_validate.h"
#include "core/schedule/pipeline_schedule.h"

// Counts heap allocations so that a test can check that the estimate makes none.
static std::atomic<long> g_allocations{0};
void* operator new(std::size_t n) {
    ++g_allocations;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

namespace {

// GPT-3 175B shapes (Brown et al. 2020; Korthikanti et al. 2022 Table 3): s = 2048,
// h = 12288, a = 96, d_ff = 4h, micro-batch b = 1.
ActivationShape gpt3_shape(double t, bool sp, bool selective, bool flash) {
    ActivationShape a;
    a.tokens = 2048;
    a.seq = 2048;
    a.hidden = 12288;
    a.q_width = 12288;
    a.kv_width = 12288;
    a.heads = 96;
    a.ffn = 4 * 12288;
    a.gated = false;
    a.tp = t;
    a.sequence_parallel = sp;
    a.selective = selective;
    a.flash_attention = flash;
    a.element_bytes = 2;
    return a;
}

constexpr double s = 2048, b = 1, h = 12288, a = 96;
constexpr double sbh = s * b * h;

}  // namespace

class TestCostMemory : public QObject {
    Q_OBJECT
private slots:
    // Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
    // Models", Table 2: activation bytes per layer for each parallelism/recompute case.
    void korthikanti_table2_data() {
        QTest::addColumn<double>("t");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<bool>("selective");
        QTest::addColumn<double>("expected");
        QTest::newRow("no parallelism: sbh(34 + 5as/h)") << 1.0 << false << false << sbh * (34 + 5 * a * s / h);
        QTest::newRow("TP: sbh(10 + 24/t + 5as/(ht))") << 8.0 << false << false
                                                      << sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8));
        QTest::newRow("TP+SP: sbh/t (34 + 5as/h)") << 8.0 << true << false << sbh / 8 * (34 + 5 * a * s / h);
        QTest::newRow("TP+selective: sbh(10 + 24/t)") << 8.0 << false << true << sbh * (10 + 24.0 / 8);
        QTest::newRow("TP+SP+selective: 34 sbh/t") << 8.0 << true << true << 34 * sbh / 8;
        QTest::newRow("t=4 TP+SP") << 4.0 << true << false << sbh / 4 * (34 + 5 * a * s / h);
    }
    void korthikanti_table2() {
        QFETCH(double, t);
        QFETCH(bool, sp);
        QFETCH(bool, selective);
        QFETCH(double, expected);
        const double got = block_activation_bytes(gpt3_shape(t, sp, selective, false), false);
        QVERIFY2(std::fabs(got - expected) <= 1e-9 * expected,
                 qPrintable(QString("got %1, expected %2").arg(got, 0, 'f', 0).arg(expected, 0, 'f', 0)));
    }
    void full_recompute_keeps_the_input() {
        // Table 2, "full activation recomputation": 2sbh (the block input; 2sbh/t with SP).
        QCOMPARE(block_checkpoint_bytes(gpt3_shape(8, false, false, false)), 2 * sbh);
        QCOMPARE(block_checkpoint_bytes(gpt3_shape(8, true, false, false)), 2 * sbh / 8);
    }
    void flash_attention_removes_the_score_term() {
        const auto with = gpt3_shape(8, true, false, true);
        QCOMPARE(score_activation_bytes(with), 0.0);
        QCOMPARE(block_activation_bytes(with, false), 34 * sbh / 8);
        // The score term alone, without fused attention: 5as²b/t.
        QCOMPARE(score_activation_bytes(gpt3_shape(8, true, false, false)), 5 * a * s * s * b / 8);
    }
    void no_dropout_stores_no_masks() {
        // Korthikanti's 34 = 10 + 24 counts two 1-byte hidden-dropout masks (2 in the 10)
        // and, in 5as/h, a 1-byte mask and a 2-byte dropped copy of the scores. Without
        // dropout (Llama-family configs) those are not stored: 32 and 2as/h.
        auto shape = gpt3_shape(8, true, false, false);
        shape.hidden_dropout = false;
        shape.attention_dropout = false;
        QCOMPARE(score_activation_bytes(shape), 2 * a * s * s * b / 8);
        QCOMPARE(block_activation_bytes(shape, false), sbh / 8 * (32 + 2 * a * s / h));
        shape.flash_attention = true;
        QCOMPARE(block_activation_bytes(shape, false), 32 * sbh / 8);
    }
    void fp8_saves_gemm_inputs_in_one_byte() {
        // With fp8 GEMMs (Transformer Engine) the four GEMM inputs of a block are saved in
        // fp8: QKV and FC1 inputs (h each, replicated unless SP), the projection input (q)
        // and the FC2 input (d_ff), each 1 byte less than in bf16.
        auto shape = gpt3_shape(8, false, true, true);
        const double bf16 = block_activation_bytes(shape, false);
        shape.gemm_input_bytes = 1;
        const double fp8 = block_activation_bytes(shape, false);
        QCOMPARE(bf16 - fp8, s * b * (2 * h + (h + 4 * h) / 8));
    }
    void fp8_layout_stores_less() {
        // Llama 3 8B on one H100, fp8 against bf16: the same weight bytes (fp8 parameters:
        // fp8 data and transpose, 2 bytes like bf16), fewer activation bytes: per token and
        // block 2h + q + d_ff bytes less (no SP, t = 1).
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 1, 1, 1, 4096);
        l.training.flash_attention = true;
        const Estimate bf16 = estimate_layout(l);
        l.training.dtype = DType::Fp8;
        const Estimate fp8 = estimate_layout(l);
        QCOMPARE(fp8.stages[0].params_bytes, bf16.stages[0].params_bytes);
        const double saved = static_cast<double>(bf16.stages[0].activations_bytes - fp8.stages[0].activations_bytes);
        const double expected = 32 * 4096.0 * (2 * 4096 + 4096 + 14336);
        QVERIFY2(std::fabs(saved - expected) < 64, qPrintable(QString::number(saved, 'f', 0)));
    }
    void context_parallel_divides_by_cp() {
        auto shape = gpt3_shape(8, true, false, false);
        const double whole = block_activation_bytes(shape, false);
        shape.cp = 2;
        shape.tokens = s * b / 2;
        QVERIFY(std::fabs(block_activation_bytes(shape, false) - whole / 2) < 1e-6 * whole);
    }
    void moe_activations_scale_with_top_k() {
        auto shape = gpt3_shape(1, false, true, false);
        shape.ffn = 0;  // no shared experts
        shape.expert_ffn = 4 * h;
        shape.experts = 8;
        shape.top_k = 1;
        const double k1 = block_activation_bytes(shape, true);
        shape.top_k = 2;
        const double k2 = block_activation_bytes(shape, true);
        // Routed part per token copy: 2h (the permuted input; the expert output is not kept,
        // Megatron-LM applies the routing probabilities in the experts' activation) + 2·2·d_ff
        // (GeLU in, FC2 in).
        const double per_copy = s * (2 * h + 4 * 4 * h);
        QVERIFY(std::fabs((k2 - k1) - per_copy) < 1e-6 * per_copy);
        shape.capacity_factor = 1.25;
        QVERIFY(block_activation_bytes(shape, true) > k2);
    }

    // ZeRO (Rajbhandari et al. 2020) with Megatron's byte counts (docs/distrib_optimizer.md:
    // bf16 params + fp32 grads = 18 bytes, distributed optimizer 6 + 12/d).
    void zero_divisions() {
        const double p = 1e9, d = 8;
        const auto z0 = param_memory(p, param_state_bytes(DType::Bf16, false), 0, d);
        QCOMPARE(z0.params_bytes + z0.grads_bytes + z0.optimizer_bytes, 18 * p);
        const auto z1 = param_memory(p, param_state_bytes(DType::Bf16, false), 1, d);
        QCOMPARE(z1.params_bytes + z1.grads_bytes + z1.optimizer_bytes, (6 + 12 / d) * p);
        const auto z2 = param_memory(p, param_state_bytes(DType::Bf16, false), 2, d);
        QCOMPARE(z2.params_bytes, 2 * p);
        QCOMPARE(z2.grads_bytes, 4 * p / d);
        QCOMPARE(z2.optimizer_bytes, 12 * p / d);
        const auto z3 = param_memory(p, param_state_bytes(DType::Bf16, false), 3, d);
        QCOMPARE(z3.params_bytes + z3.grads_bytes + z3.optimizer_bytes, 18 * p / d);
        // fp16: 20 = 4 + 16 (distributed: 4 + 16/d); fp32: 16 (distributed 8 + 8/d).
        const auto f16 = param_memory(p, param_state_bytes(DType::Fp16, false), 1, d);
        QCOMPARE(f16.params_bytes + f16.grads_bytes + f16.optimizer_bytes, (4 + 16 / d) * p);
        const auto f32 = param_memory(p, param_state_bytes(DType::Fp32, false), 1, d);
        QCOMPARE(f32.params_bytes + f32.grads_bytes + f32.optimizer_bytes, (8 + 8 / d) * p);
    }
    void zero_divides_in_the_estimate() {
        Layout l = preset_layout("gpt3-175b-a100-1024");  // dp 8
        l.training.zero_stage = 0;
        const Estimate z0 = estimate_layout(l);
        l.training.zero_stage = 1;
        const Estimate z1 = estimate_layout(l);
        for (std::size_t i = 0; i < z0.stages.size(); ++i) {
            QVERIFY(std::llabs(z1.stages[i].optimizer_bytes * 8 - z0.stages[i].optimizer_bytes) <= 8);
            QCOMPARE(z1.stages[i].params_bytes, z0.stages[i].params_bytes);
            QCOMPARE(z1.stages[i].grads_bytes, z0.stages[i].grads_bytes);
        }
    }
    // Gradients kept and reduced in bf16 (Megatron-LM's --grad-reduce-in-bf16, the
    // Megatron-Bridge performance recipes): 2 bytes per parameter instead of 4, the weights
    // and the optimizer state unchanged; the reduce-scatter moves half the bytes, the
    // parameter all-gather the same, so the DP traffic falls by just under a third.
    void grad_reduce_in_bf16_halves_the_gradients() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 64, 8192);
        l.training.zero_stage = 1;
        const Estimate fp32 = estimate_layout(l);
        l.training.grad_reduce_in_bf16 = true;
        QVERIFY(validate_layout(l, "l").valid());
        const Estimate bf16 = estimate_layout(l);
        QCOMPARE(bf16.stages[0].params_bytes, fp32.stages[0].params_bytes);
        QCOMPARE(bf16.stages[0].optimizer_bytes, fp32.stages[0].optimizer_bytes);
        QVERIFY(std::llabs(bf16.stages[0].grads_bytes * 2 - fp32.stages[0].grads_bytes) <= 2);
        const double fall = 1 - bf16.time.dp_comm_total_s / fp32.time.dp_comm_total_s;
        QVERIFY2(fall > 0.25 && fall < 1.0 / 3 + 1e-9, qPrintable(QString::number(fall)));
        // No effect on fp32 training, and validation says so.
        l.training.dtype = DType::Fp32;
        const auto warnings = validate_layout(l, "l").warnings;
        QVERIFY(std::any_of(warnings.begin(), warnings.end(),
                            [](const InputIssue& w) { return w.field == "training.grad_reduce_in_bf16"; }));
    }
    // DeepSpeed's offload keeps state on the host: 0 bytes of it on the GPU, nothing else
    // changes; validation asks for the ZeRO stage each kind of offload works on.
    void offload_leaves_the_gpu() {
        Layout l = preset_layout("gpt3-175b-a100-1024");
        l.training.zero_stage = 3;
        const Estimate on_gpu = estimate_layout(l);
        l.training.offload_optimizer = Offload::Cpu;
        l.training.offload_params = Offload::Nvme;
        QVERIFY(validate_layout(l, "l").valid());
        const Estimate off = estimate_layout(l);
        for (std::size_t i = 0; i < off.stages.size(); ++i) {
            QVERIFY(on_gpu.stages[i].optimizer_bytes > 0 && on_gpu.stages[i].params_bytes > 0);
            QCOMPARE(off.stages[i].optimizer_bytes, std::int64_t{0});
            QCOMPARE(off.stages[i].params_bytes, std::int64_t{0});
            QCOMPARE(off.stages[i].grads_bytes, on_gpu.stages[i].grads_bytes);
            QCOMPARE(off.stages[i].activations_bytes, on_gpu.stages[i].activations_bytes);
            // ... and its traffic crosses the host link: the weight shard before each pass,
            // the gradient shard down and the weights up at each step.
            QVERIFY(off.stages[i].forward_s > on_gpu.stages[i].forward_s);
            QVERIFY(off.stages[i].optimizer_s > on_gpu.stages[i].optimizer_s);
        }
        Layout no_host = l;
        no_host.cluster.host_link = {};
        QCOMPARE(QString::fromStdString(validate_layout(no_host, "l").errors.front().field),
                 QString("training.offload_optimizer"));
        l.training.zero_stage = 2;
        const auto checked = validate_layout(l, "l");
        QVERIFY(!checked.valid());
        QCOMPARE(QString::fromStdString(checked.errors.front().field), QString("training.offload_params"));
        l.training.zero_stage = 0;
        l.training.offload_params = Offload::None;
        QCOMPARE(QString::fromStdString(validate_layout(l, "l").errors.front().field), QString("training.offload_optimizer"));
    }

    // GPT-3 175B (96 layers, h = 12288, vocabulary 50257, 2048 learned positions, tied
    // embeddings, biases, LayerNorm) with TP8 PP16: 6 blocks per stage. By hand, per block
    // and TP rank: attention 4h² + 4h and MLP 8h² + 5h are split over 8 ranks, the two
    // LayerNorms (4h) are replicated: (12h² + 9h)/8 + 4h = 226,555,392 parameters.
    void gpt3_175b_parameter_memory_by_hand() {
        const Layout l = preset_layout("gpt3-175b-a100-1024");
        QCOMPARE(l.parallel.mesh.tp, 8);
        QCOMPARE(l.parallel.mesh.pp, 16);
        const Estimate e = estimate_layout(l);
        const std::int64_t hh = 12288;
        const std::int64_t block = (12 * hh * hh + 9 * hh) / 8 + 4 * hh;
        QCOMPARE(block, std::int64_t{226'555'392});
        const std::int64_t middle = 6 * block;                                  // 1,359,332,352
        const std::int64_t first = middle + 50257 * hh / 8 + 2048 * hh;         // + vocab/8 + positions
        const std::int64_t last = middle + 50257 * hh / 8 + 2 * hh;             // + tied copy + final norm
        QCOMPARE(e.stages[1].params_bytes, 2 * middle);  // bf16: 2 bytes per parameter
        QCOMPARE(e.stages[7].params_bytes, 2 * middle);
        QCOMPARE(e.stages[0].params_bytes, 2 * first);
        QCOMPARE(e.stages[15].params_bytes, 2 * last);
        // bf16 training keeps fp32 gradients (4 bytes) and, with ZeRO-1 over dp = 8, 12/8
        // bytes of optimizer state per parameter.
        QCOMPARE(e.stages[1].grads_bytes, 4 * middle);
        QVERIFY(std::llabs(e.stages[1].optimizer_bytes - 12 * middle / 8) <= 1);
    }

    // Adding TP never increases the weight memory of any rank.
    void more_tp_never_increases_weights() {
        std::int64_t previous = std::numeric_limits<std::int64_t>::max();
        for (int tp : {1, 2, 4, 8}) {
            Layout l = preset_layout("llama3-70b-h100-64");
            l.parallel.mesh.tp = tp;
            l.parallel.mesh.dp = 64 / (tp * l.parallel.mesh.pp);
            l.training.global_batch_size = 64 * 8;
            QVERIFY2(validate_layout(l, "t").valid(), qPrintable(QString("tp %1").arg(tp)));
            const Estimate e = estimate_layout(l);
            std::int64_t most = 0;
            for (const auto& st : e.stages) most = std::max(most, st.params_bytes);
            QVERIFY2(most <= previous, qPrintable(QString("tp %1: %2 > %3").arg(tp).arg(most).arg(previous)));
            previous = most;
        }
    }

    // The closed forms of the in-flight count agree with the schedule generator.
    void in_flight_matches_the_schedule() {
        for (Schedule sch : {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved}) {
            for (int pp : {1, 2, 4, 8}) {
                for (int m : {1, 3, 5, 6, 8, 9, 16, 32}) {
                    for (int v : {1, 2, 3}) {
                        if (sch == Schedule::OneFOneB && v != 1) continue;
                        if (sch == Schedule::Interleaved && (v < 2 || m < pp)) continue;
                        const auto s = build_pipeline_schedule(sch, pp, v, m);
                        for (int r = 0; r < pp; ++r) {
                            QCOMPARE(in_flight_passes(sch, pp, v, m, r), s.max_in_flight(r));
                        }
                    }
                }
            }
        }
    }

    void chunk_split_matches_layout() {
        Placement none;
        for (int layers : {7, 16, 30, 61, 126}) {
            for (int chunks : {1, 2, 3, 4, 5, 8, 16}) {
                if (layers < chunks) continue;
                const auto split = balanced_stage_split(layers, chunks);
                for (int g = 0; g < chunks; ++g) {
                    QCOMPARE(CostModel::chunk_layers(none, layers, chunks, g), split[static_cast<std::size_t>(g)]);
                }
            }
        }
    }

    // A valid layout that does not fit is costed and says which stage overflows by how much.
    void valid_layout_that_does_not_fit() {
        Layout l = preset_layout("llama3-70b-h100-64");
        l.gpus = 8;
        l.parallel.mesh.tp = 8;
        l.parallel.mesh.pp = 1;
        l.parallel.mesh.dp = 1;
        l.placement.layers_per_stage.clear();
        l.training.global_batch_size = 8;
        l.training.zero_stage = 0;
        QVERIFY(validate_layout(l, "t").valid());
        const Estimate e = estimate_layout(l);
        QVERIFY(!e.fits);
        QVERIFY(e.step_time_s > 0);
        const auto& worst = e.stages[static_cast<std::size_t>(e.worst_stage)];
        QVERIFY(!worst.fits);
        QCOMPARE(worst.overflow_bytes, worst.peak_bytes - l.cluster.gpu.hbm_bytes);
        QCOMPARE(e.max_overflow_bytes, worst.overflow_bytes);
        QVERIFY(e.max_overflow_bytes > 0);
    }

    void invalid_layout_is_refused() {
        Layout l = preset_layout("llama3-70b-h100-64");
        l.parallel.mesh.tp = 3;  // does not divide the heads
        QVERIFY_THROWS_EXCEPTION(InputError, estimate_layout(l));
    }

    // Extreme but valid sizes never give NaN, infinity or negative numbers.
    void extreme_sizes_stay_sane() {
        struct Case { const char* model; const char* cluster; int tp, pp, dp, mbs, gbs, seq; Schedule sch; int vpp; Recompute rc; };
        const Case cases[] = {
            {"tiny", "cpu-local", 1, 1, 1, 1, 1, 1, Schedule::OneFOneB, 1, Recompute::None},
            {"tiny", "cpu-local", 1, 4, 1, 1, 1, 1, Schedule::GPipe, 1, Recompute::Full},
            // 2^16 micro-batches a step: the most validate admits (what the simulator and engine hold)
            {"tiny", "cpu-local", 1, 1, 1, 1, 1 << 16, 16, Schedule::OneFOneB, 1, Recompute::Selective},
            {"llama3-8b", "dgx-h100", 8, 32, 1, 1, 64, 131072, Schedule::Interleaved, 1, Recompute::Full},
            {"llama3.1-405b", "dgx-h100", 8, 126, 16, 64, 1 << 20, 8192, Schedule::OneFOneB, 1, Recompute::None},
            {"gpt3-175b", "dgx-a100-80gb", 1, 1, 1, 1, 1, 2048, Schedule::OneFOneB, 1, Recompute::None},
            {"mixtral-8x7b", "dgx-h100", 1, 1, 8, 1, 8, 4, Schedule::OneFOneB, 1, Recompute::None},
        };
        for (const auto& k : cases) {
            Layout l = make_layout(load_model(k.model), k.cluster, k.tp, k.pp, k.dp, k.mbs, k.gbs, k.seq);
            if (std::string(k.cluster) == "cpu-local") l.training.dtype = DType::Fp32;  // the CPU computes in fp32
            l.training.schedule = k.sch;
            l.training.recompute = k.rc;
            if (k.sch == Schedule::Interleaved) l.parallel.vpp = 1;
            if (l.model.is_moe()) l.parallel.mesh.ep = 8;
            const auto v = validate_layout(l, "t");
            if (!v.valid()) {
                // Interleaved needs vpp ≥ 2; fall back to 1F1B for that case.
                l.training.schedule = Schedule::OneFOneB;
            }
            QVERIFY2(validate_layout(l, "t").valid(), k.model);
            const Estimate e = estimate_layout(l);
            QVERIFY2(sane(e), k.model);
        }
        // A cluster with the fastest links and no latency.
        Layout l = make_layout(load_model("tiny"), "cpu-local", 2, 2, 2, 1, 8, 64);
        l.training.dtype = DType::Fp32;
        l.cluster.intra_node = {"x", 1e14, 0};
        l.cluster.inter_node = {"y", 1e14, 0};
        QVERIFY(sane(estimate_layout(l)));
    }

    // The estimate allocates nothing once its output has room for the stages.
    // torchtitan's op-level selective checkpointing on Llama 3 8B (h = q = 4096, kv = 1024,
    // d_ff = 14336, 32 heads, bf16, t = 1), by hand per token and block: the input 2h, Q 2q,
    // V 2kv, the gate projection 2·d_ff, the down projection 2h, attention's output 2q and
    // its fp32 log-sum-exp 4·32 = 63,616 bytes; the last stage adds the final-norm and head
    // inputs 2·2h. Reruns K, the output and the up projections: 2T(h·kv + q·h + h·d_ff) FLOPs
    // per block.
    void selective_op_saves_every_other_matmul() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 8192);
        l.training.zero_stage = 1;
        l.training.recompute = Recompute::SelectiveOp;
        const Estimate op = estimate_layout(l);
        const double T = 8192;
        QCOMPARE(static_cast<double>(op.stages[0].activations_bytes), (32 * 63616.0 + 4 * 4096.0) * T);
        l.training.recompute = Recompute::None;
        const Estimate none = estimate_layout(l);
        const double rerun = 2 * T * (4096.0 * 1024 + 4096.0 * 4096 + 4096.0 * 14336) * 32;
        const double flops_diff = (op.hardware_tflops_per_gpu * op.step_time_s -
                                   none.hardware_tflops_per_gpu * none.step_time_s) * 1e12;
        QVERIFY2(std::fabs(flops_diff / rerun - 1) < 1e-9, qPrintable(QString::number(flops_diff / rerun)));
        QVERIFY(op.step_time_s > none.step_time_s);
        // Megatron's selective keeps every activation but the s×s scores: far more.
        l.training.recompute = Recompute::Selective;
        QVERIFY(estimate_layout(l).stages[0].activations_bytes > 2 * op.stages[0].activations_bytes);
    }
    // PyTorch's cross_entropy(logits.float()): 12 bytes per logit when the backward starts,
    // against the vocabulary-parallel loss's bf16 logits and one fp32 copy (6).
    void upcast_loss_holds_three_fp32_logit_copies() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 8192);
        l.training.zero_stage = 1;
        const Estimate vp = estimate_layout(l);
        l.training.cross_entropy = CrossEntropy::Upcast;
        const Estimate up = estimate_layout(l);
        const double logits = 8192.0 * 128256;
        QCOMPARE(static_cast<double>(up.stages[0].buffers_bytes - vp.stages[0].buffers_bytes), 6 * logits);
        QVERIFY(up.step_time_s > vp.step_time_s);
    }
    // The loss's peak by hand, per implementation (docs/cost-model.md, "Embedding, head,
    // buffers, reserve"). Llama 3 8B, vocabulary 128,256, one micro-batch of 8,192 tokens, no
    // pipeline, no TP, no recompute: the loss is the stage's only buffer.
    //   vocab-parallel: Megatron-LM d98e8a64 keeps the bf16 logits referenced
    //     (models/gpt/gpt_model.py:807, :839) beside their fp32 copy
    //     (tensor_parallel/cross_entropy.py:25): 2 + 4 = 6 bytes per logit, not 4;
    //   te: Transformer Engine d0067d0d allocates an fp32 gradient beside them
    //     (pytorch/triton/cross_entropy.py:58): 2 + 4;
    //   te-inplace: TE before v2.18 writes the gradient over the logits
    //     (71bbefbf common/triton/cross_entropy.py:190): 2.
    void loss_peak_per_implementation_by_hand() {
        const double tokens = 8192, vocab = 128256;
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 8192);
        l.training.zero_stage = 1;
        l.training.recompute = Recompute::None;
        const auto buffers = [&](CrossEntropy loss) {
            l.training.cross_entropy = loss;
            return static_cast<double>(estimate_layout(l).stages[0].buffers_bytes);
        };
        QCOMPARE(buffers(CrossEntropy::VocabParallel), 6 * tokens * vocab);  // 6.12 GiB
        QCOMPARE(buffers(CrossEntropy::Te), 6 * tokens * vocab);
        QCOMPARE(buffers(CrossEntropy::TeInPlace), 2 * tokens * vocab);
        QCOMPARE(buffers(CrossEntropy::Upcast), 12 * tokens * vocab);
        // flash-attn's fused loss: the bf16 logits and their bf16 gradient.
        QCOMPARE(buffers(CrossEntropy::FlashAttn), 4 * tokens * vocab);
        // Vocabulary-parallel over TP 4: each rank holds its quarter of the logits.
        Layout t4 = make_layout(load_model("llama3-8b"), "dgx-h100", 4, 1, 2, 1, 2, 8192);
        t4.training.zero_stage = 1;
        t4.training.recompute = Recompute::None;
        const Estimate vp = estimate_layout(t4);
        t4.training.cross_entropy = CrossEntropy::TeInPlace;
        const Estimate te = estimate_layout(t4);
        QCOMPARE(static_cast<double>(vp.stages[0].buffers_bytes - te.stages[0].buffers_bytes),
                 4 * tokens * vocab / 4);
        // fp32 logits: .float() is the tensor itself, worked on in place (4); TE still
        // allocates its fp32 gradient beside them (8); in place, the logits alone (4).
        QCOMPARE(loss_bytes_per_logit(CrossEntropy::VocabParallel, 4), 4.0);
        QCOMPARE(loss_bytes_per_logit(CrossEntropy::Te, 4), 8.0);
        QCOMPARE(loss_bytes_per_logit(CrossEntropy::TeInPlace, 4), 4.0);
        QCOMPARE(loss_bytes_per_logit(CrossEntropy::VocabParallel, 2), 6.0);
    }
    // ZeRO-3 as FSDP2 holds it (Llama 3 8B, no pipeline): two gathered bf16 blocks (218,112,000
    // parameters each: 4096·(4096 + 2·1024) + 4096² + 3·4096·14336 + 2·4096), one block's fp32
    // gradient, the root group gathered (embedding and head 2·128256·4096 + final norm 4096).
    void zero3_holds_gathered_blocks_and_the_root() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 8192);
        l.training.zero_stage = 2;
        const Estimate z2 = estimate_layout(l);
        l.training.zero_stage = 3;
        const Estimate z3 = estimate_layout(l);
        const double block = 218112000, root = 2.0 * 128256 * 4096 + 4096;
        QCOMPARE(static_cast<double>(z3.stages[0].buffers_bytes - z2.stages[0].buffers_bytes),
                 (2 * block + root) * 2 + block * 4);
        // Under a pipeline torchtitan keeps every block of the stage gathered, and the
        // pipelining schedule keeps their unsharded fp32 gradients until the last micro-batch:
        // stage 0 holds 16 blocks and the embedding, 6 bytes per parameter.
        Layout pp = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 2, 4, 1, 8, 8192);
        pp.training.zero_stage = 3;
        const Estimate p3 = estimate_layout(pp);
        pp.training.zero_stage = 2;
        const Estimate p2 = estimate_layout(pp);
        QCOMPARE(static_cast<double>(p3.stages[0].buffers_bytes - p2.stages[0].buffers_bytes),
                 (16 * block + 128256.0 * 4096) * 6);
    }
    // Eager element-wise kernels (torchtitan without torch.compile): per token and block
    // forward 2·(2e + 28)·h for the norms, (2e + 16)(q + kv) for rotary, 2e(q + kv) for
    // repeat_kv, 2e·q for the contiguous attention output, 2e·d_ff for SwiGLU: 458,752 bytes
    // for Llama 3 8B; at dgx-h100's 3.35 TB/s × 0.8. Memory does not change.
    void eager_elementwise_moves_more_bytes() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 8192);
        l.training.zero_stage = 1;
        const Estimate fused = estimate_layout(l);
        l.training.fused_elementwise = false;
        const Estimate eager = estimate_layout(l);
        const double fwd = 32 * 458752.0 * 8192 / (3.35e12 * 0.8);
        const double got = eager.stages[0].forward_s - fused.stages[0].forward_s;
        QVERIFY2(std::fabs(got / fwd - 1) < 1e-9, qPrintable(QString::number(got / fwd)));
        QVERIFY(std::fabs((eager.stages[0].backward_s - fused.stages[0].backward_s) / (2 * fwd) - 1) < 1e-9);
        QCOMPARE(eager.stages[0].peak_bytes, fused.stages[0].peak_bytes);
    }

    void estimate_does_not_allocate() {
        const Layout l = preset_layout("llama3.1-405b-h100-16384");
        const CostModel model(l);
        Estimate e;
        model.estimate(l, e);
        const long before = g_allocations.load();
        for (int i = 0; i < 100; ++i) model.estimate(l, e);
        QCOMPARE(g_allocations.load() - before, 0L);
    }
};

QTEST_GUILESS_MAIN(TestCostMemory)
#include "tst_cost_memory.moc"
