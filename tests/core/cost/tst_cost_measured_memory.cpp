// Memory predictions against memory measured on GPUs, not only against formulas.
//
// Source: Megatron-LM's functional tests, which log `torch.cuda.memory_stats()` on the last
// rank (the TensorBoard writer lives on rank world_size − 1, megatron/training/
// global_vars.py:240; the scalars at megatron/training/training.py:3440-3446) and keep the
// measured values as golden values. At NVIDIA/Megatron-LM d98e8a64 (2026-08-22):
//   tests/functional_tests/test_cases/gpt/<case>/model_config.yaml      the run's flags
//   tests/functional_tests/test_cases/gpt/<case>/golden_values_dev_dgx_h100.json
//       "mem-allocated-bytes"      allocated after the step: weights, gradients, optimizer
//       "mem-max-allocated-bytes"  the allocator's peak (no fragmentation, no CUDA context)
//   tests/test_utils/recipes/h100/gpt.yaml:443-456 (1 node, 8 GPUs: dp = 8 / (tp·pp)).
// Values from iteration 25 (steady; iteration 1 has no optimizer state yet).
//
// The model of these cases ("gpt3_7b"): 32 layers, h 4096, 32 heads with 8 query groups,
// Megatron-LM's defaults otherwise (LayerNorm, GeLU MLP of 4h, biases, learned absolute
// positions, hidden and attention dropout 0.1), untied embeddings, NullTokenizer of
// --vocab-size 131073 padded to a multiple of 128·tp (build_tokenizer.py:133), sequence
// 8192, bf16, distributed optimizer, Transformer Engine (fused attention).
//
// Meshwork's peak without its reserve (fixed overhead and fragmentation) is the figure
// comparable with max_memory_allocated.
#include <QtTest>

#include "core/cost/cost_model.h"
#include "core/layout/layout_validate.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::test;

namespace {

// Stated tolerances: the state after the step is bytes per parameter (Megatron's bf16
// weights, fp32 gradient buffer, distributed optimizer 12/dp), exact up to what Meshwork
// does not count: 1.45 GB more on the last rank of the interleaved case (8 model chunks,
// each with its own gradient and parameter buffers) is not attributed yet (−5.8 %). The
// peak adds activations, whose per-kernel temporaries Meshwork does not list.
constexpr double kStateTolerance = 0.07;
constexpr double kPeakTolerance = 0.10;
// torchtitan's reserved peaks (activations and the loss are two thirds of them): what the
// model does not list, the eager kernels' fp32 temporaries alive during a block's backward
// and the caching allocator's rounding and splitting of 8 GB loss tensors beyond its 5 %
// fragmentation share. FSDP2's state is its own since training.fsdp_fp32_shards (16 bytes per
// parameter, the sharded fp32 parameter the master copy; 18 before, 1.9 GiB more at FSDP 8:
// -3.7 / -5.1 % then, -6.0 / -5.3 % now). 8 %.
constexpr double kTorchtitanTolerance = 0.08;

}  // namespace

class TestCostMeasuredMemory : public QObject {
    Q_OBJECT
private slots:
    void megatron_functional_tests_data() {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vpp");
        QTest::addColumn<int>("mbs");
        QTest::addColumn<double>("state_bytes");
        QTest::addColumn<double>("peak_bytes");
        // gpt/gpt3_7b_tp4_pp1_memory_speed, golden_values_dev_dgx_h100.json, iteration 25.
        QTest::newRow("gpt3_7b_tp4_pp1_memory_speed (H100)") << 4 << 1 << 1 << 2 << 20663519232.0 << 57143791616.0;
        // gpt/gpt3_7b_tp1_pp4_memory_speed (--num-layers-per-virtual-pipeline-stage 1: 8 chunks
        // per rank; 4 micro-batches = pp, so every forward runs before the first backward).
        QTest::newRow("gpt3_7b_tp1_pp4_memory_speed (H100)") << 1 << 4 << 8 << 1 << 24808996864.0 << 60720852992.0;
    }
    void megatron_functional_tests() {
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, vpp);
        QFETCH(int, mbs);
        QFETCH(double, state_bytes);
        QFETCH(double, peak_bytes);
        const int dp = 8 / (tp * pp);
        Layout l = make_layout(megatron_functional_7b(tp), "dgx-h100", tp, pp, dp, mbs, 8, 8192);
        l.parallel.vpp = vpp;
        l.training.schedule = vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
        l.training.recompute = Recompute::None;
        l.training.flash_attention = true;
        l.training.zero_stage = 1;  // --use-distributed-optimizer
        const auto v = validate_layout(l, "megatron functional test");
        QVERIFY2(v.valid(), v.errors.empty() ? "" : qPrintable(QString::fromStdString(v.errors[0].to_string())));
        const Estimate e = estimate_layout(l);
        const StageMemory& last = e.stages.back();
        const double state = static_cast<double>(last.params_bytes + last.grads_bytes + last.optimizer_bytes);
        const double peak = state + static_cast<double>(last.activations_bytes + last.buffers_bytes);
        const double state_err = state / state_bytes - 1;
        const double peak_err = peak / peak_bytes - 1;
        qInfo("%s: state %.2f GB measured, %.2f GB predicted (%+.1f%%); peak %.2f GB measured, "
              "%.2f GB predicted (%+.1f%%; activations %.2f GB, buffers %.2f GB)",
              QTest::currentDataTag(), state_bytes / 1e9, state / 1e9, 100 * state_err, peak_bytes / 1e9,
              peak / 1e9, 100 * peak_err, last.activations_bytes / 1e9, last.buffers_bytes / 1e9);
        QVERIFY2(std::fabs(state_err) < kStateTolerance, "state after the step outside 7 %");
        QVERIFY2(std::fabs(peak_err) < kPeakTolerance, "peak outside 10 %");
        QVERIFY(e.fits);  // these runs trained on 80 GB H100s
    }

    // torchtitan's published memory, benchmarks/llama3_h100_202412_torchtitan.md (pytorch/
    // torchtitan b5bcd76c; runs at 9dec370), Tables 1 and 3, row "FSDP": Llama 3.1 8B,
    // FSDP over 8 / 128 GPUs, local batch 2, sequence 8192, selective activation
    // checkpointing (train_configs/llama3_8b.toml at 9dec370: mode 'selective', option
    // 'op'), bf16, no torch.compile, no Float8; 96 GB HBM2e H100s at 500 W. The figure
    // logged is torch.cuda.memory_stats()["reserved_bytes.all.peak"] in GiB (9dec370
    // torchtitan/metrics.py:62-63, train.py:393-400), the maximum over the GPUs.
    //
    // Reserved memory is what the caching allocator holds: the allocated peak plus what
    // fragmentation keeps reserved, without the CUDA context or NCCL's own buffers. The
    // comparable figure is Meshwork's peak without its fixed reserve (which stands for
    // those) but with its fragmentation share.
    void torchtitan_published_memory_data() {
        QTest::addColumn<int>("gpus");
        QTest::addColumn<double>("reserved_gib");
        QTest::newRow("Table 1: 8B FSDP 8, 82.4 GiB") << 8 << 82.4;
        QTest::newRow("Table 3: 8B FSDP 128, 67.0 GiB") << 128 << 67.0;
    }
    void torchtitan_published_memory() {
        QFETCH(int, gpus);
        QFETCH(double, reserved_gib);
        Layout l = make_layout(load_model("llama3-8b"), "grand-teton-h100", 1, 1, gpus, 2, 2 * gpus, 8192);
        l.training.zero_stage = 3;                                 // FSDP over every rank
        l.training.fsdp_fp32_shards = true;                        // FSDP2: the fp32 shard alone
        l.training.recompute = Recompute::SelectiveOp;             // selective_ac_option "op"
        l.training.cross_entropy = CrossEntropy::Upcast;           // train.py:131-134
        l.training.fused_elementwise = false;                      // training.compile = false
        const auto v = validate_layout(l, "torchtitan benchmark");
        QVERIFY2(v.valid(), v.errors.empty() ? "" : qPrintable(QString::fromStdString(v.errors[0].to_string())));
        const Estimate e = estimate_layout(l);
        const StageMemory& st = e.stages.front();
        const double fixed = static_cast<double>(l.cluster.memory_reserve.fixed_bytes);
        const double model_gib = (static_cast<double>(st.peak_bytes) - fixed) / (1024.0 * 1024 * 1024);
        const double err = model_gib / reserved_gib - 1;
        qInfo("%s: reserved %.1f GiB published, %.1f GiB predicted (%+.1f%%; state %.1f, activations %.1f, "
              "buffers %.1f, fragmentation %.1f GiB)",
              QTest::currentDataTag(), reserved_gib, model_gib, 100 * err,
              static_cast<double>(st.params_bytes + st.grads_bytes + st.optimizer_bytes) / (1 << 30),
              static_cast<double>(st.activations_bytes) / (1 << 30), static_cast<double>(st.buffers_bytes) / (1 << 30),
              (static_cast<double>(st.reserved_bytes) - fixed) / (1 << 30));
        QVERIFY2(std::fabs(err) < kTorchtitanTolerance, "torchtitan's reserved peak outside the stated tolerance");
        QVERIFY(e.fits);
    }
};

QTEST_GUILESS_MAIN(TestCostMeasuredMemory)
#include "tst_cost_measured_memory.moc"
