// Step times of MosaicML llm-foundry's published MPT throughput tables, held back: nothing in
// Meshwork was fitted to them. Source: mosaicml/llm-foundry scripts/train/benchmarking/README.md
// (stored at c90b9b31), "H100 80GB BF16 (Large Scale, >= 128 GPUs)", "H100 80GB BF16" and "A100
// 80GB with 1600 Gbps node-node interconnect (RoCE)": Throughput (T/s/GPU) per row, with its
// model, sequence length, GPUs, micro-batch size, gradient accumulation, sharding strategy and
// activation checkpointing. The runs: Composer with PyTorch FSDP (FULL_SHARD is ZeRO-3,
// SHARD_GRAD_OP ZeRO-2), amp_bf16 (fp32 parameters sharded, bf16 compute; mixed_precision
// DEFAULT, so gradients are reduced in fp32), FlashAttention-2 (attn_impl flash, llm-foundry
// installed with gpu-flash2: scripts/train/benchmarking/submit_benchmarks.py), full activation
// checkpointing of every MPT block where the table says True, no torch.compile, the loss
// through flash-attn's fused cross entropy on the bf16 logits (llm-foundry's default). The MPT models: tests/fixtures/llm-foundry/mpt-*.json,
// written from the benchmark yamls; each row's max_seq_len is its sequence length (the
// benchmark script sets it, and the learned position table follows it).
//
// Not taken: the A100 70B rows (precision bf16 with mixed_precision PURE: bf16 parameters and
// optimizer states, a regime Meshwork's memory model does not hold), the FP8 rows
// (Transformer Engine 0.10 under FSDP, an early integration), the models under 1B.
//
// The test prints every row's estimate and error (bench/heldout-errors.py reads the lines as
// the group "llm-foundry"), asserts the stated tolerance and that every run fits.
#include <QtTest>

#include <cmath>
#include <string>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::test;

namespace {

// Measured when the rows were added, nothing changed for them (docs/cost-model.md, "llm-foundry's
// MPT tables"): H100 and A100 alike, the rows with activation checkpointing and large
// micro-batches pessimistic (up to +24 %), the rows without it optimistic (to -16 %), so 25 %.
// From 8K tokens the rows are optimistic, by 21-37 % at 32K-64K where the attention dominates:
// the runs' attention took about twice what FlashAttention-2's published table gives, on both
// GPUs (as FlashAttention-1 would: llm-foundry's flash path ran either version,
// llmfoundry/models/layers/attention.py; the tables do not say which); MPT-30B at 8K, where
// attention is a tenth of the FLOPs, is -20 % (H100) and -27 % (A100), not explained. 40 %.
constexpr double kTolerance = 0.25;
constexpr double kLongSequence = 0.40;
constexpr int kLongSequenceTokens = 8192;

struct Row {
    const char* table;  // "H100" or "A100"
    const char* model;  // tests/fixtures/llm-foundry/mpt-<model>.json
    int seq, gpus, mbs, accum;
    double tps_per_gpu;
    bool checkpointing;
    int zero_stage = 3;  // FULL_SHARD; SHARD_GRAD_OP is 2
};

const std::vector<Row>& rows() {
    static const std::vector<Row> r = {
        // H100 80GB BF16, large scale.
        {"H100", "70b", 2048, 512, 8, 1, 1007, true},
        {"H100", "30b", 2048, 512, 8, 1, 2115, true},
        {"H100", "13b", 2048, 512, 16, 1, 4952, true},
        {"H100", "7b", 2048, 512, 6, 1, 9670, false},
        {"H100", "3b", 2048, 512, 8, 1, 21664, false, 2},
        {"H100", "1b", 2048, 512, 12, 1, 39837, false, 2},
        // H100 80GB BF16.
        {"H100", "70b", 2048, 64, 8, 4, 1039, true},
        {"H100", "70b", 2048, 32, 2, 16, 882, true},
        {"H100", "30b", 8192, 8, 1, 21, 1384, true},
        {"H100", "30b", 4096, 8, 1, 21, 1802, true},
        {"H100", "30b", 2048, 32, 14, 3, 2308, true},
        {"H100", "30b", 2048, 16, 10, 3, 2263, true},
        {"H100", "30b", 2048, 8, 3, 21, 2002, true},
        {"H100", "30b", 1024, 8, 6, 21, 2084, true},
        {"H100", "13b", 32768, 8, 1, 3, 1976, true},
        {"H100", "13b", 16384, 8, 3, 3, 2985, true},
        {"H100", "13b", 4096, 8, 10, 3, 4717, true},
        {"H100", "13b", 2048, 64, 2, 1, 4800, false},
        {"H100", "13b", 2048, 8, 2, 1, 4792, false},
        {"H100", "13b", 1024, 8, 40, 3, 5502, true},
        {"H100", "7b", 65536, 8, 1, 2, 1956, true},
        {"H100", "7b", 32768, 8, 2, 2, 3318, true},
        {"H100", "7b", 8192, 8, 8, 2, 6935, true},
        {"H100", "7b", 4096, 8, 16, 2, 8611, true},
        {"H100", "7b", 2048, 8, 6, 1, 10643, false},
        {"H100", "7b", 1024, 8, 64, 2, 10203, true},
        {"H100", "3b", 32768, 8, 3, 6, 5873, true},
        {"H100", "3b", 16384, 8, 1, 6, 11152, false},
        {"H100", "3b", 8192, 8, 3, 6, 16578, false},
        {"H100", "3b", 4096, 8, 5, 6, 20964, false},
        {"H100", "3b", 2048, 64, 6, 3, 22525, false},
        {"H100", "3b", 2048, 16, 10, 3, 24142, false},
        {"H100", "3b", 1024, 8, 20, 6, 27046, false},
        {"H100", "1b", 32768, 8, 1, 4, 12025, false},
        {"H100", "1b", 8192, 8, 3, 4, 29157, false},
        {"H100", "1b", 2048, 64, 20, 1, 44402, false},
        {"H100", "1b", 2048, 8, 14, 1, 45455, false},
        // A100 80GB, 1600 Gb/s RoCE between nodes.
        {"A100", "30b", 8192, 8, 1, 21, 574, true},
        {"A100", "30b", 4096, 8, 1, 21, 814, true},
        {"A100", "30b", 2048, 8, 3, 21, 916, true},
        {"A100", "30b", 1024, 8, 6, 21, 946, true},
        {"A100", "13b", 32768, 8, 1, 3, 1016, true},
        {"A100", "13b", 8192, 8, 5, 3, 1795, true},
        {"A100", "13b", 2048, 8, 2, 3, 2262, false},
        {"A100", "13b", 1024, 8, 40, 3, 2330, true},
        {"A100", "7b", 65536, 8, 1, 2, 1013, true},
        {"A100", "7b", 8192, 8, 8, 2, 3206, true},
        {"A100", "7b", 2048, 8, 6, 2, 4641, false},
        {"A100", "7b", 1024, 8, 64, 2, 4357, true},
        {"A100", "3b", 8192, 8, 3, 6, 7695, false},
        {"A100", "3b", 2048, 8, 10, 2, 10811, false},
        {"A100", "1b", 8192, 8, 3, 4, 13814, false},
        {"A100", "1b", 2048, 8, 14, 4, 20513, false},
    };
    return r;
}

std::string label(const Row& r) {
    return std::string(r.table) + " MPT-" + r.model + " seq " + std::to_string(r.seq) + ", " + std::to_string(r.gpus) +
           " GPUs, micro-batch " + std::to_string(r.mbs) + " x " + std::to_string(r.accum) +
           (r.checkpointing ? ", checkpointing" : "") + (r.zero_stage == 2 ? ", SHARD_GRAD_OP" : "") + ", " +
           std::to_string(static_cast<int>(r.tps_per_gpu)) + " T/s/GPU";
}

Layout layout_of(const Row& r) {
    ModelSpec m = load_model(std::string(MESHWORK_TEST_FIXTURES) + "/llm-foundry/mpt-" + r.model + ".json");
    m.max_position_embeddings = r.seq;
    const bool h100 = std::string(r.table) == "H100";
    Layout l = make_layout(m, h100 ? "dgx-h100" : "dgx-a100-80gb", 1, 1, r.gpus, r.mbs, r.mbs * r.accum * r.gpus,
                           r.seq);
    l.training.zero_stage = r.zero_stage;
    // FSDP1's flat parameters stay fp32, gathered in bf16 (mixed_precision DEFAULT).
    l.training.fsdp_fp32_shards = r.zero_stage == 3;
    // FlashAttention-2 (the same kernels as PyTorch's SDPA flash backend) and llm-foundry's
    // default loss, flash-attn's fused cross entropy (ComposerMPTCausalLM, loss_fn
    // fused_crossentropy).
    l.training.attention_kernel = AttentionKernel::Sdpa;
    l.training.cross_entropy = CrossEntropy::FlashAttn;
    l.training.recompute = r.checkpointing ? Recompute::Full : Recompute::None;
    return l;
}

double published_step_s(const Row& r) {
    return static_cast<double>(r.mbs) * r.accum * r.seq / r.tps_per_gpu;
}

}  // namespace

class TestCostLlmFoundryPublished : public QObject {
    Q_OBJECT
  private slots:
    void published_runs_data() {
        QTest::addColumn<int>("which");
        for (std::size_t i = 0; i < rows().size(); ++i) {
            QTest::newRow(label(rows()[i]).c_str()) << static_cast<int>(i);
        }
    }
    void published_runs() {
        QFETCH(int, which);
        const Row& r = rows()[static_cast<std::size_t>(which)];
        const Layout l = layout_of(r);
        const auto v = validate_layout(l, "llm-foundry benchmark");
        QVERIFY2(v.valid(), v.errors.empty() ? "" : qPrintable(QString::fromStdString(v.errors[0].to_string())));
        const double published = published_step_s(r);
        const Estimate e = estimate_layout(l);
        const double err = e.step_time_s / published - 1;
        qInfo("%s [llm-foundry benchmarking/README.md, cluster %s]: published %.3f s, estimate %.3f s (%+.1f%%), fits %d",
              label(r).c_str(), l.cluster.name.c_str(), published, e.step_time_s, 100 * err, int(e.fits));
        const double tolerance = r.seq >= kLongSequenceTokens ? kLongSequence : kTolerance;
        QVERIFY2(std::fabs(err) < tolerance, "estimate outside the stated tolerance");
        // Composer's micro-batch was the largest that ran: every row trained, so must the prediction.
        QVERIFY2(e.fits, "a published run with its published settings must fit");
    }
};

QTEST_GUILESS_MAIN(TestCostLlmFoundryPublished)
#include "tst_cost_llmfoundry_published.moc"
