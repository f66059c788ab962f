// Step times of torchtitan's own published H100 benchmarks, held back: nothing in Meshwork was
// fitted to them. Sources: pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md
// (stored at 31a17bfd; runs at torchtitan 9dec370, torch 1963fc8, torchao eab345c, December
// 2024), Tables 1-6, TPS/GPU read at the 90th iteration; and
// benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md (added in 2887250b; runs at torch
// 38410cf9, June 2025): vanilla against async TP, bf16 and torchao's tensorwise and rowwise
// Float8, on the same hosts. Grand Teton hosts: 8 H100 with 96 GB
// HBM2e at a 500 W power limit, 400 Gb/s per GPU between hosts (the grand-teton-h100 preset,
// whose efficiencies are dgx-h100's). The two eager bf16 rows of Tables 1 and 3 ("FSDP") are
// tst_cost_h100_runs' (with the GEMM fit); this test holds every other row.
//
// What each row states, written as torchtitan runs it at 9dec370: FSDP2 over the data-parallel
// ranks (ZeRO-3), the loss on fp32 logits (train.py:131-134), attention through PyTorch's SDPA
// (FlashAttention-2 kernels), torch.compile fusing the element-wise kernels where the table
// says "torch.compile", "Float8" as torchao's tensorwise dynamic scaling of every Linear but
// the output head (torchtitan/float8.py:99, module_filter_fn `fqn != "output"`; the model
// prices the head at the training precision, a known limit), AsyncTP as TP communication
// tiled against the GEMMs, and the table's activation checkpointing. Assumed where the tables
// are silent (each row says so): the pipeline's micro-batch count (torchtitan's default at
// 9dec370, the pipeline degree: config_manager.py:342-351, parallelisms/pipelining_utils.py:
// 79-81; 8 micro-batches of Table 5's 32 sequences, 8 of Table 6's 8) and two stages per rank
// for Table 5's interleaved 1F1B.
//
// The test prints every row's estimate and error (bench/heldout-errors.py reads the lines as
// the group "torchtitan"), asserts each row's stated tolerance and that every run fits.
#include <QtTest>

#include <cmath>
#include <string>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/layout/layout_validate.h"
#include "core/sim/simulate.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::test;

namespace {

// torch.compile with bf16, and Float8 with TP 8 without AsyncTP (Table 4's "2D"): as close as
// the eager rows of tst_cost_h100_runs (+3.4 / +0.0 %): -0.8, -3.7 and -0.7 % when added. 10 %,
// that test's bound for these rows.
constexpr double kClose = 0.10;
// torchao Float8 (tensorwise) under FSDP alone, Llama 3.1 8B: optimistic by 9-15 % when added
// (Tables 1 and 3: the model credits Float8 with 1.40x over compiled bf16, torchtitan measured
// 1.28x and 1.29x; torchao's own table 1.25x, docs/cost-model.md). With TP 8 (Table 4, "2D")
// the same Float8 is within a point, so the cause lies beside the TP-sharded GEMMs; not found
// (the output head, which torchao leaves in bf16 and the model prices at fp8, is a part). 20 %.
constexpr double kFloat8Fsdp = 0.20;
constexpr const char* kFloat8FsdpWhy = "torchao Float8 under FSDP alone: its gain overestimated, cause not found";
// torchtitan's AsyncTP (PyTorch's symmetric-memory micro-pipelined all-gather/reduce-scatter
// matmuls under torch.compile): the model hides every TP collective behind its GEMM chunks (the
// `ring` overlap), which makes Table 4 1.18x faster where torchtitan measured 1.057x with the
// torch of December 2024 (829 -> 876 TPS/GPU); the pipelined 405B rows carry the same optimism
// (11-13 %). With June 2025's torch the same 70B layout measured 1.16x (float8 tensorwise; the
// model 1.18x) and 1.09x (bf16; the model 1.15x), and those rows are within 5 %. 20 %.
constexpr double kAsyncTp = 0.20;
constexpr const char* kAsyncTpWhy = "AsyncTP of December 2024's torch credited with more than it gained (1.18x vs 1.057x)";
// Llama 3.1 8B at TP 8 (June 2025, FSDP 8 x TP 8, local batch 12, per-op SAC): 15-24 %
// optimistic, vanilla and async alike; TP 8 on an 8B model's 4,096-wide layers is what sets
// these rows apart (the 70B at TP 8 is within 5 %). 30 %.
constexpr double kTp8Small = 0.30;
constexpr const char* kTp8SmallWhy = "TP 8 on an 8B model: its collectives and short GEMMs cost more than priced";
// torchao's rowwise Float8 with TP: the source itself calls its vanilla-TP baseline low and
// links the fix in progress (torchtitan issue #1207); rowwise runs slower than bf16 there, the
// model has it near tensorwise (the same GEMM rate, 2 more bytes a cast). 27-45 % optimistic.
// 50 %.
constexpr double kRowwiseTp = 0.50;
constexpr const char* kRowwiseTpWhy = "rowwise Float8 with TP: a low baseline the source names (torchtitan #1207)";
// Context parallelism through PyTorch's ring attention (torch.distributed.tensor.experimental
// context_parallel at torch 1963fc8: all-gathered K and V, one SDPA call per ring step with
// its output merged into an fp32 copy, the round-robin load balancer): optimistic by 12-39 %
// when added, most at CP 4 and 8 (Table 2 FSDP 2 CP 4 -35 %, FSDP 1 CP 8 -39 %; Table 6 CP 8
// -39 %), the model's attention at these lengths and its ring the TE kind. 45 %.
constexpr double kTorchCp = 0.45;
constexpr const char* kTorchCpWhy = "PyTorch's ring attention (fp32 merges, all-gather rotation) not modelled";

struct Row {
    const char* label;
    const char* model;
    int gpus, tp, pp, cp, dp;
    int local_batch;  // sequences per data-parallel rank a step
    int micro_batch;  // sequences per micro-batch (pipeline rows: assumed, see above)
    int seq;
    bool compile, float8, async_tp, full_ac, interleaved;
    double tps_per_gpu;
    double tolerance;
    const char* why;
    bool rowwise = false;  // torchao's rowwise Float8 recipe instead of tensorwise
    const char* source = "llama3_h100_202412_torchtitan.md";
};

constexpr const char* kAsyncTp2506 = "asyncTP_llama3_h100_2025-06_torchtitan.md";

const std::vector<Row>& rows() {
    static const std::vector<Row> r = {
        // Table 1: Llama 3.1 8B, 8 GPUs, local batch 2, selective (op) checkpointing.
        {"T1 8B FSDP 8 + torch.compile, 6667 TPS/GPU", "llama3-8b", 8, 1, 1, 1, 8, 2, 2, 8192, true, false, false,
         false, false, 6667, kClose, ""},
        {"T1 8B FSDP 8 + torch.compile + Float8, 8532 TPS/GPU", "llama3-8b", 8, 1, 1, 1, 8, 2, 2, 8192, true, true,
         false, false, false, 8532, kFloat8Fsdp, kFloat8FsdpWhy},
        // Table 3: the same on 128 GPUs.
        {"T3 8B FSDP 128 + torch.compile, 6514 TPS/GPU", "llama3-8b", 128, 1, 1, 1, 128, 2, 2, 8192, true, false,
         false, false, false, 6514, kClose, ""},
        {"T3 8B FSDP 128 + torch.compile + Float8, 8380 TPS/GPU", "llama3-8b", 128, 1, 1, 1, 128, 2, 2, 8192, true,
         true, false, false, false, 8380, kFloat8Fsdp, kFloat8FsdpWhy},
        // Table 2: 8B, 8 GPUs, FSDP + CP + torch.compile + Float8, local batch 1, full AC.
        {"T2 8B FSDP 8 CP 1, seq 32768, 3890 TPS/GPU", "llama3-8b", 8, 1, 1, 1, 8, 1, 1, 32768, true, true, false,
         true, false, 3890, kFloat8Fsdp, "Float8 under FSDP alone at 32K tokens, no CP"},
        {"T2 8B FSDP 4 CP 2, seq 65536, 2540 TPS/GPU", "llama3-8b", 8, 1, 1, 2, 4, 1, 1, 65536, true, true, false,
         true, false, 2540, kTorchCp, kTorchCpWhy},
        {"T2 8B FSDP 2 CP 4, seq 131072, 1071 TPS/GPU", "llama3-8b", 8, 1, 1, 4, 2, 1, 1, 131072, true, true, false,
         true, false, 1071, kTorchCp, kTorchCpWhy},
        {"T2 8B FSDP 1 CP 8, seq 262144, 548 TPS/GPU", "llama3-8b", 8, 1, 1, 8, 1, 1, 1, 262144, true, true, false,
         true, false, 548, kTorchCp, kTorchCpWhy},
        // Table 4: Llama 3.1 70B, 256 GPUs (FSDP 32, TP 8), compile + Float8, local batch 16, full AC.
        {"T4 70B FSDP 32 TP 8, 829 TPS/GPU", "llama3-70b", 256, 8, 1, 1, 32, 16, 16, 8192, true, true, false, true,
         false, 829, kClose, ""},
        {"T4 70B FSDP 32 TP 8 + AsyncTP, 876 TPS/GPU", "llama3-70b", 256, 8, 1, 1, 32, 16, 16, 8192, true, true, true,
         true, false, 876, kAsyncTp, kAsyncTpWhy},
        // Table 5: Llama 3.1 405B, 512 GPUs (FSDP 8, TP 8, PP 8), compile + Float8 + AsyncTP,
        // local batch 32 (8 micro-batches of 4: assumed), full AC.
        {"T5 405B FSDP 8 TP 8 PP 8, 1F1B, 100 TPS/GPU", "llama3.1-405b", 512, 8, 8, 1, 8, 32, 4, 8192, true, true,
         true, true, false, 100, kAsyncTp, kAsyncTpWhy},
        {"T5 405B FSDP 8 TP 8 PP 8, interleaved 1F1B, 128 TPS/GPU", "llama3.1-405b", 512, 8, 8, 1, 8, 32, 4, 8192,
         true, true, true, true, true, 128, kAsyncTp, kAsyncTpWhy},
        // Table 6: 405B, 512 GPUs (TP 8, PP 8), + CP, 1F1B, local batch 8 (8 micro-batches of 1: assumed).
        {"T6 405B FSDP 8 CP 1 TP 8 PP 8, seq 32768, 76 TPS/GPU", "llama3.1-405b", 512, 8, 8, 1, 8, 8, 1, 32768, true,
         true, true, true, false, 76, kAsyncTp, kAsyncTpWhy},
        {"T6 405B FSDP 4 CP 2 TP 8 PP 8, seq 65536, 47 TPS/GPU", "llama3.1-405b", 512, 8, 8, 2, 4, 8, 1, 65536, true,
         true, true, true, false, 47, kTorchCp, kTorchCpWhy},
        {"T6 405B FSDP 2 CP 4 TP 8 PP 8, seq 131072, 31 TPS/GPU", "llama3.1-405b", 512, 8, 8, 4, 2, 8, 1, 131072,
         true, true, true, true, false, 31, kTorchCp, kTorchCpWhy},
        {"T6 405B FSDP 1 CP 8 TP 8 PP 8, seq 262144, 16 TPS/GPU", "llama3.1-405b", 512, 8, 8, 8, 1, 8, 1, 262144,
         true, true, true, true, false, 16, kTorchCp, kTorchCpWhy},
        // June 2025: Llama 3.1 70B, 256 GPUs (FSDP 32, TP 8), compile, full AC, local batch 16.
        {"A1 70B FSDP 32 TP 8 bf16, 597.3 TPS/GPU", "llama3-70b", 256, 8, 1, 1, 32, 16, 16, 8192, true, false, false,
         true, false, 597.3, kClose, "", false, kAsyncTp2506},
        {"A1 70B FSDP 32 TP 8 bf16 + AsyncTP, 652.4 TPS/GPU", "llama3-70b", 256, 8, 1, 1, 32, 16, 16, 8192, true, false,
         true, true, false, 652.4, kClose, "", false, kAsyncTp2506},
        {"A1 70B FSDP 32 TP 8 Float8 tensorwise, 809.8 TPS/GPU", "llama3-70b", 256, 8, 1, 1, 32, 16, 16, 8192, true, true,
         false, true, false, 809.8, kClose, "", false, kAsyncTp2506},
        {"A1 70B FSDP 32 TP 8 Float8 tensorwise + AsyncTP, 942.4 TPS/GPU", "llama3-70b", 256, 8, 1, 1, 32, 16, 16, 8192,
         true, true, true, true, false, 942.4, kClose, "", false, kAsyncTp2506},
        {"A1 70B FSDP 32 TP 8 Float8 rowwise, 599.6 TPS/GPU", "llama3-70b", 256, 8, 1, 1, 32, 16, 16, 8192, true, true,
         false, true, false, 599.6, kRowwiseTp, kRowwiseTpWhy, true, kAsyncTp2506},
        {"A1 70B FSDP 32 TP 8 Float8 rowwise + AsyncTP, 624.8 TPS/GPU", "llama3-70b", 256, 8, 1, 1, 32, 16, 16, 8192,
         true, true, true, true, false, 624.8, kRowwiseTp, kRowwiseTpWhy, true, kAsyncTp2506},
        // June 2025: Llama 3.1 8B, 64 GPUs (FSDP 8, TP 8), compile, per-op SAC, local batch 12.
        {"A2 8B FSDP 8 TP 8 bf16, 4378 TPS/GPU", "llama3-8b", 64, 8, 1, 1, 8, 12, 12, 8192, true, false, false, false,
         false, 4378, kTp8Small, kTp8SmallWhy, false, kAsyncTp2506},
        {"A2 8B FSDP 8 TP 8 bf16 + AsyncTP, 4809.4 TPS/GPU", "llama3-8b", 64, 8, 1, 1, 8, 12, 12, 8192, true, false,
         true, false, false, 4809.4, kTp8Small, kTp8SmallWhy, false, kAsyncTp2506},
        {"A2 8B FSDP 8 TP 8 Float8 tensorwise, 5078.1 TPS/GPU", "llama3-8b", 64, 8, 1, 1, 8, 12, 12, 8192, true, true,
         false, false, false, 5078.1, kTp8Small, kTp8SmallWhy, false, kAsyncTp2506},
        {"A2 8B FSDP 8 TP 8 Float8 tensorwise + AsyncTP, 5570.1 TPS/GPU", "llama3-8b", 64, 8, 1, 1, 8, 12, 12, 8192,
         true, true, true, false, false, 5570.1, kTp8Small, kTp8SmallWhy, false, kAsyncTp2506},
        {"A2 8B FSDP 8 TP 8 Float8 rowwise, 3708.5 TPS/GPU", "llama3-8b", 64, 8, 1, 1, 8, 12, 12, 8192, true, true,
         false, false, false, 3708.5, kRowwiseTp, kRowwiseTpWhy, true, kAsyncTp2506},
        {"A2 8B FSDP 8 TP 8 Float8 rowwise + AsyncTP, 3914.9 TPS/GPU", "llama3-8b", 64, 8, 1, 1, 8, 12, 12, 8192, true,
         true, true, false, false, 3914.9, kRowwiseTp, kRowwiseTpWhy, true, kAsyncTp2506},
    };
    return r;
}

Layout layout_of(const Row& r) {
    Layout l = make_layout(load_model(r.model), "grand-teton-h100", r.tp, r.pp, r.dp, r.micro_batch,
                           r.local_batch * r.dp, r.seq);
    l.gpus = r.gpus;
    l.parallel.mesh.cp = r.cp;
    l.parallel.sequence_parallel = r.tp > 1;  // torchtitan's TP plan shards the norms' sequence
    l.parallel.tp_comm_overlap = r.async_tp ? TpOverlap::Ring : TpOverlap::None;
    if (r.interleaved) {
        l.parallel.vpp = 2;
        l.training.schedule = Schedule::Interleaved;
    } else {
        l.training.schedule = Schedule::OneFOneB;
    }
    run_as_torchtitan(l);
    l.training.recompute = r.full_ac ? Recompute::Full : Recompute::SelectiveOp;
    l.training.fused_elementwise = r.compile;
    if (r.float8) {
        l.training.dtype = DType::Fp8;
        l.training.fp8_recipe = r.rowwise ? Fp8Recipe::Rowwise : Fp8Recipe::Tensorwise;
    }
    return l;
}

// Tokens a GPU processes in a step over the table's TPS/GPU: local batch × sequence, shared by
// the TP and CP ranks of a data-parallel rank's model replica and its pipeline stages.
double published_step_s(const Row& r) {
    const double tokens_per_gpu = static_cast<double>(r.local_batch) * r.dp * r.seq / r.gpus;
    return tokens_per_gpu / r.tps_per_gpu;
}

}  // namespace

class TestCostTorchtitanPublished : public QObject {
    Q_OBJECT
  private slots:
    void published_runs_data() {
        QTest::addColumn<int>("which");
        for (std::size_t i = 0; i < rows().size(); ++i) QTest::newRow(rows()[i].label) << static_cast<int>(i);
    }
    void published_runs() {
        QFETCH(int, which);
        const Row& r = rows()[static_cast<std::size_t>(which)];
        const Layout l = layout_of(r);
        const auto v = validate_layout(l, "torchtitan benchmark");
        QVERIFY2(v.valid(), v.errors.empty() ? "" : qPrintable(QString::fromStdString(v.errors[0].to_string())));
        const double published = published_step_s(r);
        const Estimate e = estimate_layout(l);
        const double err = e.step_time_s / published - 1;
        const double sim_err = simulate_layout(l).estimate.step_time_s / published - 1;
        qInfo("%s [%s, cluster grand-teton-h100]: published %.3f s, estimate %.3f s (%+.1f%%), simulation %+.1f%%, "
              "fits %d%s%s",
              r.label, r.source, published, e.step_time_s, 100 * err, 100 * sim_err, int(e.fits), *r.why ? "; " : "",
              r.why);
        QVERIFY2(std::fabs(err) < r.tolerance, "estimate outside the stated tolerance");
        QVERIFY2(std::fabs(sim_err) < r.tolerance + 0.10, "simulation outside the stated tolerance");
        // Every run trained on its 96 GB GPUs: so must the prediction, with its published settings.
        QVERIFY2(e.fits, "a published run with its published settings must fit");
    }
};

QTEST_GUILESS_MAIN(TestCostTorchtitanPublished)
#include "tst_cost_torchtitan_published.moc"
