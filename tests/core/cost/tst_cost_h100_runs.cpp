// Step times of H100-era runs. Three rows are *fitted*: the per-tensor fp8 GEMM efficiency a
// step sustains on Hopper (0.45, kSustained in core/cost/gemm_efficiency.cpp) was chosen on
// the Megatron-Bridge H100 LLAMA3_70B and LLAMA3.1_405B rows, that of Blackwell (0.42) on the
// B200 LLAMA3.1_405B row: the value, in steps of 0.01, with the smallest largest |error| of the
// fitted estimates (bench/refit-gemm.py; until issue 28 the presets' efficiency.gemm, refitted
// when these rows gained their recipes' TP overlap, 0.55 and 0.5 → 0.47 and 0.46, and again
// with Megatron's per-chunk data-parallel overlap, and 0.46 → 0.45 when fused attention took its
// published rate, core/cost/attention_rate.h). Other precisions (the bf16 rows here) take
// the published kernel tables' ratio to it, not a fitted figure. Every other row is *held
// back*: nothing was tuned to it (the other
// efficiencies date from the A100 rows of tst_cost_published; the interference figures are
// Calculon's). Each row gives its source; the test prints the error
// of the estimate and of the simulator and asserts the stated tolerance.
//
// Sources:
// - Megatron-LM functional tests (NVIDIA/Megatron-LM d98e8a64): golden "iteration-time"
//   on dgx_h100 (tests/functional_tests/test_cases/gpt/<case>/golden_values_dev_dgx_h100.json,
//   mean of iterations 10-24 logged there; 1 node of 8 H100 SXM, tests/test_utils/recipes/
//   h100/gpt.yaml:443-456). The same 7B configuration as tst_cost_measured_memory; note
//   --deterministic-mode (deterministic attention backward) and NCCL_ALGO=Ring.
// - torchtitan, benchmarks/llama3_h100_202412_torchtitan.md (pytorch/torchtitan b5bcd76c),
//   Tables 1 and 3: Llama 3.1 8B, FSDP (ZeRO-3) over 8 / 128 GPUs, local batch 2, sequence
//   8192, selective activation checkpointing, bf16, no torch.compile: 5,762 / 5,605 tokens
//   per second per GPU. Its H100s are 96 GB HBM2e parts at 500 W ("the actual peak TFLOPs
//   number is between SXM and NVL"): the grand-teton-h100 preset, peaks at the middle of that
//   bracket, efficiencies dgx-h100's (nothing fitted to these rows). The run as torchtitan
//   ran it: op-level selective checkpointing, eager element-wise kernels, the loss on fp32
//   logits (docs/cost-model.md).
// - Dubey et al. 2024, "The Llama 3 Herd of Models" (arXiv:2407.21783), Table 4: Llama 3.1
//   405B, TP8 CP1 PP16, sequence 8192, 16M tokens per step: DP64 on 8,192 GPUs at 430
//   TFLOP/s per GPU, DP128 on 16,384 GPUs at 400. Step time = the model's FLOPs per step /
//   (TFLOP/s × GPUs). §3.3.2: FSDP sharding optimizer states and gradients (ZeRO-2), no
//   activation checkpointing, "an interleaved schedule ... with V pipeline stages on one
//   pipeline rank", and "one Transformer layer is reduced each from the first and the last
//   stages ... the first model chunk on the first stage has only the embedding, and the last
//   model chunk on the last stage has only output projection and loss calculation": 126 + 2 =
//   128 over 16 ranks, chunks of one layer (V = 8), Megatron-LM's accounted split
//   (core/layout/pipeline_split.h). The preset layout states it; the paper's tunable group N
//   is not stated (the smallest Megatron-LM accepts, pp).
// - NVIDIA Megatron-Bridge docs/performance-summary.md (NVIDIA-NeMo/Megatron-Bridge
//   00b7660b), "25.11 NeMo Container", DGX-H100 and DGX-B200 tables, FP8 current scaling:
//   tokens/s/GPU with GPUs, GBS, MBS, sequence, FSDP, TP, PP, CP, VP. Step = GBS × seq /
//   (GPUs × tokens/s/GPU). Settings the table does not give, from the recipes
//   (scripts/performance/configs/llama/llama3_workload_base_configs.py 00919dcf: 8B on H100
//   recomputes 5 layers; llama31_workload_base_configs.py: 405B on H100 none): sequence
//   parallelism with TP, the distributed optimizer (FSDP 8 = ZeRO-3 for the 8B H100 row),
//   fused attention, no dropout (the Llama configs), and TP communication overlap with TP:
//   the pretrain configs set tp_comm_overlap_cfg (scripts/performance/configs/llama/
//   llama3_llm_pretrain.py:185-200, llama31_llm_pretrain.py) to userbuffers configurations
//   that ring-exchange every forward and input-gradient collective and bulk-overlap the rest
//   (src/megatron/bridge/training/comm_overlap.py:108-119, :161-172, :184-197): "ring".
//   Gradients kept and reduced in bf16: the Llama pretrain configs set
//   grad_reduce_in_fp32 = False (llama3_llm_pretrain.py:73-74, llama31_llm_pretrain.py:58-59
//   at 00b7660b).
// - NeMo 24.07's pre-training table (NVIDIA/NeMo 8e3d65dc docs/source/performance/
//   performance_summary.md:9-25, "NeMo24.07", DGX-H100, FP8): GPUs, GBS, MBS, sequence, TP, PP,
//   CP, VP and tokens/s/GPU; step = GBS × seq / (GPUs × tokens/s/GPU). Held back, added for
//   issue 28 with nothing changed for them. What the table does not state is Megatron-Core's
//   usual setting of that time, assumed: Transformer Engine's delayed fp8 scaling (its default
//   recipe then), sequence parallelism and userbuffers TP overlap with TP, the distributed
//   optimizer with both data-parallel overlaps, gradients reduced in fp32, fused attention.
#include <QtTest>

#include "core/cost/cost_model.h"
#include "core/layout/layout_validate.h"
#include "core/sim/simulate.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::test;

namespace {

struct Row {
    Layout layout;
    double published_s = 0;
};

Layout megatron_7b(int tp, int pp, int vpp, int mbs) {
    Layout l = make_layout(megatron_functional_7b(tp), "dgx-h100", tp, pp, 8 / (tp * pp), mbs, 8, 8192);
    l.parallel.vpp = vpp;
    l.training.schedule = vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
    l.training.recompute = Recompute::None;
    l.training.zero_stage = 1;
    // --overlap-grad-reduce, --overlap-param-gather (the cases' model_config.yaml:49-51).
    l.parallel.overlap_grad_reduce = true;
    l.parallel.overlap_param_gather = true;
    return l;
}

// torchtitan's llama3_8b.toml as torchtitan runs it on `cluster`: FSDP2 over all ranks (local
// batch 2, seq_len 8192), selective AC with the "op" policy, the loss on fp32 logits
// (train.py:131-134 at 9dec370), attention through PyTorch's SDPA (models/llama/model.py:209
// at 9dec370; models/attention.py:183-214 at e7c0cae).
Layout torchtitan_8b(const char* cluster, int gpus) {
    Layout l = make_layout(load_model("llama3-8b"), cluster, 1, 1, gpus, 2, 2 * gpus, 8192);
    run_as_torchtitan(l);
    l.training.recompute = Recompute::SelectiveOp;
    return l;
}

// torchtitan's own runs (9dec370): training.compile false (eager element-wise kernels), on
// the Grand Teton preset (500 W, 96 GB HBM2e H100s; the Hopper efficiencies of dgx-h100).
Layout torchtitan_8b_fsdp(int gpus) {
    Layout l = torchtitan_8b("grand-teton-h100", gpus);
    l.training.fused_elementwise = false;
    return l;
}

// Trainy's torchtitan runs on H200 (torchtitan benchmarks/llama3_8b_h200_2025-06_torchtitan.md
// at bcdeaa37, torchtitan e7c0cae, torch 2.8.0a0 of NGC 25.05): training.compile and
// model.converters "float8" (torchao's tensorwise, its default recipe), on 8-GPU H200 hosts
// with 400 Gb/s per GPU (the dgx-h200 preset). Not statable: enable_fsdp_float8_all_gather
// (weights gathered in fp8), force_recompute_fp8_weight_in_bwd,
// precompute_float8_dynamic_scale_for_fsdp.
Layout torchtitan_8b_h200_float8(int gpus) {
    Layout l = torchtitan_8b("dgx-h200", gpus);
    l.training.dtype = DType::Fp8;
    l.training.fp8_recipe = Fp8Recipe::Tensorwise;
    return l;
}

// A Megatron-Bridge performance row (fp8 current scaling).
Layout bridge(const char* model, const char* cluster, int gpus, int gbs, int mbs, int tp, int pp, int cp, int vpp,
              int zero, int recompute_layers) {
    const int dp = gpus / (tp * pp * cp);
    Layout l = make_layout(load_model(model), cluster, tp, pp, dp, mbs, gbs, 8192);
    l.gpus = gpus;
    l.parallel.mesh.cp = cp;
    l.parallel.vpp = vpp;
    l.parallel.sequence_parallel = tp > 1;
    l.parallel.tp_comm_overlap = tp > 1 ? TpOverlap::Ring : TpOverlap::None;
    l.training.schedule = vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
    l.training.dtype = DType::Fp8;
    l.training.zero_stage = zero;
    l.training.recompute = recompute_layers > 0 ? Recompute::Full : Recompute::None;
    l.training.recompute_num_layers = recompute_layers;
    // With the distributed optimizer and dp > 1, Bridge turns on both data-parallel overlaps
    // (align_param_gather with interleaving; src/megatron/bridge/training/comm_overlap.py:
    // 539-546, applied at :598-606).
    l.parallel.overlap_grad_reduce = true;
    l.parallel.overlap_param_gather = true;
    l.training.grad_reduce_in_bf16 = true;
    // Transformer Engine's cross entropy, which the performance scripts set
    // (scripts/performance/utils/overrides.py:55 at 00b7660b), at the pinned TE release_v2.9
    // (pyproject.toml:120): the gradient written over the logits.
    l.training.cross_entropy = CrossEntropy::TeInPlace;
    if (std::string(model) == "llama3.1-405b") use_bridge_405b_split(l);
    return l;
}

// `base` at another size: its block, its vocabulary and positions.
ModelSpec resized(ModelSpec m, const std::string& family, std::int64_t hidden, int layers, int heads, int kv_heads,
                  std::int64_t ffn) {
    m.name = family + "-" + std::to_string(hidden);
    m.hidden_size = hidden;
    m.num_layers = layers;
    m.num_heads = heads;
    m.num_kv_heads = kv_heads;
    m.head_dim = hidden / heads;
    m.ffn_hidden_size = ffn;
    return m;
}

// NeMo 24.07's Llama 2 models (NVIDIA/NeMo 8e3d65dc nemo/collections/llm/gpt/model/llama.py:
// 40-77, LlamaConfig and Llama2Config7B/13B/70B: RMSNorm, SwiGLU, RoPE, no biases, no dropout,
// untied embeddings, sequence 4096), over the Llama 3 8B preset's block, with Llama 2's
// 32,000-token vocabulary (Touvron et al. 2023, "Llama 2", §2.1: "the total vocabulary size is
// 32k tokens"; a multiple of 128, so Megatron's padding leaves it).
ModelSpec llama2(std::int64_t hidden, int layers, int heads, int kv_heads, std::int64_t ffn) {
    ModelSpec m = resized(load_model("llama3-8b"), "llama2", hidden, layers, heads, kv_heads, ffn);
    m.vocab_size = 32000;
    m.max_position_embeddings = 4096;
    m.rope.theta = 10000;
    return m;
}

// NeMo 24.07's GPT-3 5B and 20B (nemo/collections/llm/gpt/model/base.py:195-218 at 8e3d65dc:
// GPTConfig5B 24 layers, hidden 4096, FFN 16,384, 32 heads; GPTConfig20B 44, 6144, 24,576, 48),
// over the GPT-3 175B preset's block (GPT-2 style, sequence 2048).
ModelSpec gpt3(std::int64_t hidden, int layers, int heads) {
    return resized(load_model("gpt3-175b"), "gpt3", hidden, layers, heads, heads, 4 * hidden);
}

// A NeMo 24.07 row (see the sources above for what is assumed).
Layout nemo_2407(const ModelSpec& model, int gpus, int gbs, int mbs, int seq, int tp, int pp, int cp, int vpp) {
    const int dp = gpus / (tp * pp * cp);
    Layout l = make_layout(model, "dgx-h100", tp, pp, dp, mbs, gbs, seq);
    l.gpus = gpus;
    l.parallel.mesh.cp = cp;
    l.parallel.vpp = vpp;
    l.parallel.sequence_parallel = tp > 1;
    l.parallel.tp_comm_overlap = tp > 1 ? TpOverlap::Ring : TpOverlap::None;
    l.parallel.overlap_grad_reduce = true;
    l.parallel.overlap_param_gather = true;
    l.training.schedule = vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
    l.training.dtype = DType::Fp8;
    l.training.fp8_recipe = Fp8Recipe::Delayed;
    l.training.zero_stage = 1;
    return l;
}

Layout nemo_2407(const char* model, int gpus, int gbs, int mbs, int seq, int tp, int pp, int cp, int vpp) {
    return nemo_2407(load_model(model), gpus, gbs, mbs, seq, tp, pp, cp, vpp);
}

double bridge_step_s(int gpus, int gbs, double tokens_per_s_per_gpu) {
    return gbs * 8192.0 / (gpus * tokens_per_s_per_gpu);
}

Layout llama3_405b(int dp) {
    Layout l = preset_layout("llama3.1-405b-h100-16384");
    l.parallel.mesh.dp = dp;
    l.gpus = 8 * 16 * dp;
    return l;
}

double flops_time_s(const Layout& l, double tflops_per_gpu) {
    const Estimate e = estimate_layout(l);
    return e.model_tflops_per_gpu * e.step_time_s / tflops_per_gpu;
}

}  // namespace

class TestCostH100Runs : public QObject {
    Q_OBJECT
private slots:
    void h100_era_runs_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<double>("tolerance");
        QTest::addColumn<bool>("fitted");
        // Stated tolerances, from what each row runs that the model does not represent (the
        // errors these rows show are in docs/cost-model.md, "Held-back H100 runs"):
        // deterministic attention backward (Megatron functional rows); a GPU peak known only
        // to lie between the H100 NVL's and SXM's, ±8.5 % around the preset's (torchtitan
        // rows). Llama 3 rows: ZeRO-2 reduce-scatters every micro-batch's gradients (the paper's
        // FSDP shards them, and the stage would not fit with an unsharded fp32 accumulator),
        // asynchronously (section 3.3.2, "reducing gradients" asynchronously is why DP is the
        // outermost axis); under interleaved 1F1B the reduce of a chunk's backward runs beside
        // the forward that follows it too (block_cost.h, zero_exposure). +24.7 / +23.5 % when
        // only the backward hid it (2.9 s of 15.0 s at DP64, 1.0 s of 8.0 s at DP128 exposed),
        // +4.4 / +2.8 % since: 10 %, the bound of this test's other held-back dense rows. The fitted rows: 6.5 %: with the data-parallel overlap
        // Megatron runs (core/cost/dp_overlap.h) the two H100 rows' errors bracket one GEMM
        // figure, +6.3 / −5.5 % since current scaling's casts are priced apart (core/cost/
        // fp8_cast.h; +4.9 / −5.8 % before, when the fitted figure absorbed them; the issue's
        // goal is 6 %). The casts weigh most where nothing is sharded by TP: the Bridge H100
        // 8B row (FSDP, TP 1) moved +8.4 → +12.7 % (11 % → 13 %). docs/cost-model.md,
        // "H100-era runs" and "fp8 casts", has the figures.
        QTest::newRow("Megatron functional gpt3_7b_tp4_pp1_memory_speed, 1.115 s") << 0 << 0.20 << false;
        QTest::newRow("Megatron functional gpt3_7b_tp1_pp4_memory_speed (8 chunks), 1.151 s") << 1 << 0.20 << false;
        QTest::newRow("torchtitan T1 Llama 3.1 8B FSDP 8, 5762 TPS/GPU") << 2 << 0.10 << false;
        QTest::newRow("torchtitan T3 Llama 3.1 8B FSDP 128, 5605 TPS/GPU") << 3 << 0.10 << false;
        QTest::newRow("Llama 3 T4 405B TP8 PP16 DP64 8192 GPUs, 430 TFLOP/s") << 4 << 0.10 << false;
        QTest::newRow("Llama 3 T4 405B TP8 PP16 DP128 16384 GPUs, 400 TFLOP/s") << 5 << 0.10 << false;
        // The third row of the same table, long context: TP8 CP16 PP16 DP8, sequence 131,072,
        // 16 sequences per data-parallel group (16M tokens a batch), 380 TFLOP/s. Added for
        // issue 28 as it stands, nothing changed for it: -6.0 %, fits. Its ZeRO-2
        // reduce-scatter spans 8 ranks, not 64 or 128, which is where the two rows above
        // lose; 10 %, the bound of this test's other held-back dense rows.
        QTest::newRow("Llama 3 T4 405B TP8 CP16 PP16 DP8 16384 GPUs, seq 131072, 380 TFLOP/s") << 13 << 0.10 << false;
        // Megatron-Bridge 25.11 fp8 rows: production recipes on Megatron-Core.
        QTest::newRow("Bridge H100 LLAMA3_8B 8 GPUs FSDP 8, 14451 TPS/GPU") << 6 << 0.13 << false;
        QTest::newRow("Bridge H100 LLAMA3_70B 64 GPUs TP4 PP8 VP5, 1602 TPS/GPU") << 7 << 0.065 << true;
        QTest::newRow("Bridge H100 LLAMA3.1_405B 1024 GPUs TP8 PP8 CP2 VP8, 292 TPS/GPU") << 8 << 0.065 << true;
        QTest::newRow("Bridge B200 LLAMA3_8B 8 GPUs MBS 2, 30624 TPS/GPU") << 9 << 0.10 << false;
        QTest::newRow("Bridge B200 LLAMA3.1_405B 128 GPUs TP4 PP8 CP2 VP8, 661 TPS/GPU") << 10 << 0.065 << true;
        // Trainy's torchtitan float8 runs on H200, held back (docs/cost-model.md "torchtitan's
        // runs as torchtitan runs them"): −15.4 / −16.9 % when added with FlashAttention-3's
        // table, −3.9 / −5.6 % with the FlashAttention-2 kernels PyTorch's SDPA runs; the
        // torchtitan rows' 10 %.
        QTest::newRow("torchtitan (Trainy) Llama 3.1 8B H200 FSDP 32 float8, 10938 TPS/GPU") << 11 << 0.10 << false;
        QTest::newRow("torchtitan (Trainy) Llama 3.1 8B H200 FSDP 64 float8, 10753 TPS/GPU") << 12 << 0.10 << false;
        // NeMo 24.07 (held back; -11.1, -3.8, -0.4 and +9.3 % when added): the bound of the
        // Megatron-family held-back rows of tst_cost_published_heldout, 15 %.
        QTest::newRow("NeMo 24.07 H100 LLAMA3-8B 8 GPUs CP2, 12273 TPS/GPU") << 14 << 0.15 << false;
        QTest::newRow("NeMo 24.07 H100 LLAMA3-70B 64 GPUs TP4 PP4 CP2 VP5, 1524 TPS/GPU") << 15 << 0.15 << false;
        QTest::newRow("NeMo 24.07 H100 GPT3-175B 128 GPUs TP4 PP8 VP6, 716 TPS/GPU") << 16 << 0.15 << false;
        QTest::newRow("NeMo 24.07 H100 GPT3-175B 512 GPUs TP4 PP8 VP6 MBS2, 825 TPS/GPU") << 17 << 0.15 << false;
        // The same table's Llama 2 and GPT-3 5B / 20B rows, added for issue 28 once their models
        // were written from NeMo's own configs (above), nothing changed for them; the table's
        // 15 %.
        QTest::newRow("NeMo 24.07 H100 LLAMA2-7B 8 GPUs, 16934 TPS/GPU") << 18 << 0.15 << false;
        QTest::newRow("NeMo 24.07 H100 LLAMA2-13B 16 GPUs PP4 VP10, 8715 TPS/GPU") << 19 << 0.15 << false;
        QTest::newRow("NeMo 24.07 H100 LLAMA2-70B 64 GPUs TP4 PP4 VP20, 1728 TPS/GPU") << 20 << 0.15 << false;
        QTest::newRow("NeMo 24.07 H100 GPT3-5B 64 GPUs MBS4, 23406 TPS/GPU") << 21 << 0.15 << false;
        QTest::newRow("NeMo 24.07 H100 GPT3-20B 64 GPUs TP2 MBS2, 5851 TPS/GPU") << 22 << 0.15 << false;
    }
    void h100_era_runs() {
        QFETCH(int, which);
        QFETCH(double, tolerance);
        QFETCH(bool, fitted);
        Row r;
        switch (which) {
            case 0: r = {megatron_7b(4, 1, 1, 2), 1.115}; break;
            case 1: r = {megatron_7b(1, 4, 8, 1), 1.151}; break;
            case 2: r = {torchtitan_8b_fsdp(8), 2 * 8192 / 5762.0}; break;
            case 3: r = {torchtitan_8b_fsdp(128), 2 * 8192 / 5605.0}; break;
            case 4: {
                Layout l = llama3_405b(64);
                r = {l, flops_time_s(l, 430)};
                break;
            }
            case 5: {
                Layout l = llama3_405b(128);
                r = {l, flops_time_s(l, 400)};
                break;
            }
            case 6: r = {bridge("llama3-8b", "dgx-h100", 8, 128, 1, 1, 1, 1, 1, 3, 5), bridge_step_s(8, 128, 14451)}; break;
            case 7: r = {bridge("llama3-70b", "dgx-h100", 64, 128, 1, 4, 8, 1, 5, 1, 0), bridge_step_s(64, 128, 1602)}; break;
            case 8:
                r = {bridge("llama3.1-405b", "dgx-h100", 1024, 512, 1, 8, 8, 2, 8, 1, 0), bridge_step_s(1024, 512, 292)};
                break;
            case 9: r = {bridge("llama3-8b", "dgx-b200", 8, 128, 2, 1, 1, 1, 1, 1, 0), bridge_step_s(8, 128, 30624)}; break;
            case 11: r = {torchtitan_8b_h200_float8(32), 2 * 8192 / 10938.0}; break;
            case 12: r = {torchtitan_8b_h200_float8(64), 2 * 8192 / 10753.0}; break;
            case 14: r = {nemo_2407("llama3-8b", 8, 128, 1, 8192, 1, 1, 2, 1), 128 * 8192 / (8 * 12273.0)}; break;
            case 15: r = {nemo_2407("llama3-70b", 64, 128, 1, 8192, 4, 4, 2, 5), 128 * 8192 / (64 * 1524.0)}; break;
            case 16: r = {nemo_2407("gpt3-175b", 128, 256, 1, 2048, 4, 8, 1, 6), 256 * 2048 / (128 * 716.0)}; break;
            case 17: r = {nemo_2407("gpt3-175b", 512, 2048, 2, 2048, 4, 8, 1, 6), 2048 * 2048 / (512 * 825.0)}; break;
            case 18:
                r = {nemo_2407(llama2(4096, 32, 32, 32, 11008), 8, 128, 1, 4096, 1, 1, 1, 1), 128 * 4096 / (8 * 16934.0)};
                break;
            case 19:
                r = {nemo_2407(llama2(5120, 40, 40, 40, 13824), 16, 128, 1, 4096, 1, 4, 1, 10),
                     128 * 4096 / (16 * 8715.0)};
                break;
            case 20:
                r = {nemo_2407(llama2(8192, 80, 64, 8, 28672), 64, 128, 1, 4096, 4, 4, 1, 20), 128 * 4096 / (64 * 1728.0)};
                break;
            case 21: r = {nemo_2407(gpt3(4096, 24, 32), 64, 2048, 4, 2048, 1, 1, 1, 1), 2048 * 2048 / (64 * 23406.0)}; break;
            case 22: r = {nemo_2407(gpt3(6144, 44, 48), 64, 256, 2, 2048, 2, 1, 1, 1), 256 * 2048 / (64 * 5851.0)}; break;
            case 13: {
                Layout l = llama3_405b(8);
                l.parallel.mesh.cp = 16;
                l.gpus = 8 * 16 * 16 * 8;
                l.training.seq_length = 131072;
                l.training.global_batch_size = 16 * 8;
                r = {l, flops_time_s(l, 380)};
                break;
            }
            default:
                r = {bridge("llama3.1-405b", "dgx-b200", 128, 64, 1, 4, 8, 2, 8, 1, 0), bridge_step_s(128, 64, 661)};
                break;
        }
        const auto v = validate_layout(r.layout, "published run");
        QVERIFY2(v.valid(), v.errors.empty() ? "" : qPrintable(QString::fromStdString(v.errors[0].to_string())));
        const Estimate e = estimate_layout(r.layout);
        const double est_err = e.step_time_s / r.published_s - 1;
        const double sim_err = simulate_layout(r.layout).estimate.step_time_s / r.published_s - 1;
        // bench/refit-gemm.py reads these lines (the cluster names the preset a row fits).
        qInfo("%s [%s, cluster %s]: published %.4f s, estimate %.4f s (%+.2f%%), simulation %+.1f%%, fits %d",
              QTest::currentDataTag(), fitted ? "fitted" : "held back", r.layout.cluster.name.c_str(), r.published_s,
              e.step_time_s, 100 * est_err, 100 * sim_err, int(e.fits));
        if (which == 4 || which == 5 || which == 13) {
            if (which != 13)
                QVERIFY2(est_err > 0, "the exposed per-micro-batch ZeRO-2 reduce-scatter must make it pessimistic");
            // The paper's split, as stated: the first chunk only the embedding, the last only
            // the head and loss, 7 layers on the end ranks and 8 on the others.
            const auto& split = r.layout.placement.layers_per_stage;
            QVERIFY(r.layout.training.schedule == Schedule::Interleaved && split.size() == 128);
            QVERIFY(split.front() == 0 && split.back() == 0);
            QCOMPARE(e.stages.front().layers, 7);
            QCOMPARE(e.stages[1].layers, 8);
            QCOMPARE(e.stages.back().layers, 7);
        }
        QVERIFY2(std::fabs(est_err) < tolerance, "estimate outside the stated tolerance");
        // The fit was made on the estimate; the simulator keeps each interleaved send as a
        // delay of the pass that depends on it (docs/cost-model.md), up to 6 points slower here
        // (70B: +10.8 % against the estimate's +6.3 %; NeMo's GPT-3 175B on 512 GPUs +15.1 %
        // against +10.9 %): those 6 points beside an interleaved row's own bound.
        const bool interleaved = r.layout.training.schedule == Schedule::Interleaved;
        const double sim_tolerance = fitted ? 0.11 : tolerance + (interleaved ? 0.06 : 0.0);
        QVERIFY2(std::fabs(sim_err) < sim_tolerance, "simulation outside the stated tolerance");
        // Llama 3 DP64 (32 micro-batches): with Megatron-LM's interleaved warm-up,
        // 2(p − r − 1) + (v − 1)·N + 1 chunk passes at its smallest group N = pp, stage 1
        // holds 141 one-layer passes against 128 at DP128 and the model puts it at 82.5 GiB;
        // the paper tunes N ("Our key insight is to make N tunable", §3.3.2 and Figure 6; N
        // = 5 in the figure's example, "fewer micro-batches than the number of stages") and
        // "proactively deallocate[s]" each stage's input and output tensors, but Table 4 does
        // not state the N of either run, and Megatron-LM refuses a group below pp
        // (pipeline_parallel/schedules.py:1160-1168 at d98e8a64), where a larger group only
        // lengthens the warm-up. So no published setting makes it fit: a group field would be
        // a number fitted to this row (docs/cost-model.md, "Known limits").
        QVERIFY2(e.fits || which == 4, "a published run with its published settings must fit");
    }
};

QTEST_GUILESS_MAIN(TestCostH100Runs)
#include "tst_cost_h100_runs.moc"
