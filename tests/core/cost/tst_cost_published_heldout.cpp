// Step times of published production runs that nothing in Meshwork was tuned to: a second,
// wider held-back set beside the one of tst_cost_h100_runs (which keeps the three rows the
// GEMM efficiency of dgx-h100/h200/b200 was fitted on). Dense Llama runs at other batch
// sizes and on GB200, and the MoE runs (Qwen3, DeepSeek-V3, GPT-OSS) of the same
// publication. The test prints every row's estimate and error, the mean |error| and the
// worst, and asserts each row's stated tolerance; docs/cost-model.md "Held-back published
// runs (wider set)" holds the table.
//
// Source of every figure: NVIDIA Megatron-Bridge, docs/performance-summary-archive.md at
// NVIDIA-NeMo/Megatron-Bridge 067f987d (the release tables "25.11", "25.09", "26.04.01" and
// "26.06"; line numbers beside each row). The tables give GPUs, precision, GBS, MBS, sequence,
// FSDP, TP, PP, CP, VP, EP and tokens/s/GPU; step = GBS × seq / (GPUs × tokens/s/GPU). What
// they do not give is taken from the recipes of the 25.11 release
// (scripts/performance/configs/*/..._workload_base_configs.py at 00b7660b, 2025-12-09,
// "Update with latest perf for DS-v3, Qwen-3, Llama3 models"): expert tensor parallelism 1
// (BASE_QWEN3_*, BASE_DEEPSEEK_V3_CONFIG, BASE_GPT_OSS_120B_CONFIG), the distributed
// optimizer, sequence parallelism and userbuffers TP overlap with TP (as tst_cost_h100_runs),
// fused attention, and no dropout; gradients kept and reduced in bf16 (every performance
// config sets grad_reduce_in_fp32 = False at 21d102f5e: llama/llama3_llm_pretrain.py:43-44,
// llama/llama31_llm_pretrain.py:42-43, qwen/qwen3_llm_pretrain.py:41-42,
// deepseek/deepseek_llm_pretrain.py:42-43, gpt_oss/gpt_oss_llm_pretrain.py:32-33). Where a table and the recipe of its release disagree
// the table wins (it is what was measured); the rows say so. "In MoE training benchmarks, we
// force-balance the token distribution among experts and all benchmarks are token-dropless"
// (archive :597): dropless, balanced experts, as the cost model assumes.
//
// Each row states its recipe's module-level recomputation (recompute_modules, as the layout's
// training.recompute_modules) and activation offload (cpu_offloading_num_layers, as
// training.offload_activation_layers). Not stated in a layout and left out (each row names
// which): CUDA graphs. Every MoE row states its recipe's dispatcher and MoE
// all-to-all overlap (moe_recipes() below).
#include <QtTest>

#include <cmath>
#include <string>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"
#include "core/sim/simulate.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::test;

namespace {

struct Run {
    const char* label;   // system, model, layout, published figure
    const char* source;  // archive line
    const char* model;
    const char* cluster;
    int gpus, gbs, mbs, seq, tp, pp, cp, vpp, ep;
    DType dtype;
    int zero;  // 1 = distributed optimizer, 3 = Megatron-FSDP
    int recompute_layers;
    double tokens_per_s_per_gpu;
    double tolerance;  // stated |error| bound, with its reason in `why`
    const char* why;
    // Layers per model chunk where the recipe sets pp_layout (Megatron-LM's
    // --pipeline-model-parallel-layout); empty: the even split.
    std::vector<int> layers_per_chunk = {};
    // The recipe's recompute_modules (Megatron-Bridge sets selective recomputation with them,
    // scripts/performance/utils/overrides.py:150-152 at 21d102f5e); empty: none.
    std::vector<RecomputeModule> recompute_modules = {};
    // The recipe's cpu_offloading_num_layers (Megatron-Core's --cpu-offloading-num-layers:
    // the first N layers' activations go to host memory, training.offload_activation_layers);
    // 0: none.
    int offload_activation_layers = 0;
};

// Production Megatron-Core recipes the layout states fully (dense Llama): 15 %, twice the
// worst error of the tst_cost_h100_runs Megatron-family held-back rows (+8.4 %) rounded up.
constexpr double kMegatron = 0.15;
// The NVFP4 405B row runs its TP4 collectives without userbuffers (its script turns TP overlap
// off for nvfp4): the forward's all-gathers (of NVFP4 values) and reduce-scatters (bf16) are
// exposed, 5.6 s of its 50.9 s estimate when the gathers were priced at bf16, on top of the
// pessimism its fp8 neighbour shows (+12.5 %, in compute). 25 %.
constexpr double kNoTpOverlap405b = 0.25;
// MoE with EP inside the NVLink domain: the estimate is optimistic on every such row (3 to
// 30 % before issue 28 pattern 2, with the rows' recipe dispatchers stated, the experts' eager
// passes priced, core/cost/moe_eager_passes.h, and the flex kernels at their published rate,
// core/cost/flex_kernel_rate.h). Issue 28 pattern 2 charges what the layer asks of the host:
// Megatron-LM's framework ops per MoE layer (router, auxiliary loss, dispatcher metadata and
// host copies, per-expert grouped-GEMM launches) at the host time per op of DeepSeek's
// published training trace, over the whole layer, and the router's memory passes
// (core/cost/moe_host_ops.h). That moved the rows whose layers are short (micro-batch 1:
// H100 GPT-OSS -14.8 % -> -0.0 %; B200 Qwen3 235B -25.1 % -> -8.4 %) and left the
// micro-batch-4 rows, whose layers outlast their host's launches, within a point (worst
// -28.3 % -> -27.9 %, GB200 GPT-OSS). Left out: CUDA graphs of the router and dispatch
// preprocessing (not stated), a host slower than x86 (GB200's Grace: the GB200 Qwen3 30B run
// is slower than the B200 one of the same layout, the model has it faster), and grouped GEMMs
// over many small per-expert matrices. 34 %: the worst (-30.1 % before issue 28, -28.0 %
// after its launch cost, -27.9 % after pattern 2) plus a margin.
constexpr double kMoeIntraNode = 0.34;
constexpr const char* kMoeWhy = "MoE: host speed (Grace), router CUDA graphs and small expert GEMMs not modelled";
// MoE with EP across nodes. The rows state their recipes' dispatchers (DeepEP/HybridEP: the
// "flex" token dispatcher, one copy per token and destination node across nodes, fanned out
// over NVLink there) and MoE all-to-all overlap (moe_a2a_overlap: the dispatch and combine of
// one micro-batch beside another's compute), see moe_recipes() below. Before they were
// stated the rows were pessimistic by 17 to 143 %; stated, they are optimistic like the
// in-domain rows (0 to -39 %), for the same unmodelled kernels. The two rows with the
// overlap moved by 5 and 7 points when its compute ran on the SMs the dispatcher's kernels
// leave (core/cost/ep_comm_sms.h) rather than beside InfiniBand's 0.02, and by 3 and 4 more
// with Megatron's four pairings per layer (core/cost/moe_dispatch.h). 45 % was the worst
// (-39.4 %, the H100 Qwen3 30B row, no overlap) plus a margin; that row is -29.3 % before and
// -22.9 % after issue 28 pattern 2's MoE host ops (core/cost/moe_host_ops.h): 30 %.
constexpr double kMoeCrossNode = 0.30;
constexpr const char* kCrossNodeWhy =
    "EP across nodes, dispatcher and A2A overlap stated: host speed, router CUDA graphs not modelled";
// Megatron-Bridge's own measured A/B pair on the shape of the H100 Qwen3 30B row (EP 16 over
// two DGX-H100), which isolates the dispatcher, fp8 and the MoE all-to-all overlap: bf16,
// the all-to-all dispatcher, GBS 1024, CUDA graphs off and moe_permute_fusion off, steady
// mean of iterations 3-8, 41.25 s without and 31.31 s with the EP overlap
// (skills/perf-expert-parallel-overlap/SKILL.md:127-135 at 21d102f5e, "Measured Short-Run
// Evidence", 2026-05-18 current main). The unfused permutation is not statable (the model
// prices the fused one). Diagnostic, not fitted: without the overlap the model is 6 %
// optimistic, with it 27 % with InfiniBand's interference figure (0.02), 21 % with the
// compute on the 116 of 132 SMs NCCL's 16 CTAs leave (core/cost/ep_comm_sms.h) and 18 % with
// Megatron's four pairings per layer instead of three (core/cost/moe_dispatch.h), so the
// overlap model still hides more of the all-to-all than Megatron does (the model saves 13.1 s,
// the run 9.9 s); and against the fp8 HybridEP row (:248, 29.26 s) the model credits fp8 and
// per-node dispatch with 20.9 s of savings where the runs show 12.0 s. 22 %: the worst
// (-18.3 %) plus a margin (35 % before the SM share and the four pairings). With issue 28
// pattern 2's MoE host ops (core/cost/moe_host_ops.h) the pair is -5.6 % and -8.6 % (from
// -3.4 % and -14.3 %). 16 % (kept apart from kMegatron's 15 %: summary() tells the groups
// apart by their tolerance).
constexpr double kMoeMeasuredAB = 0.16;
// summary() tells the groups apart by their tolerance.
static_assert(kMoeIntraNode != kMoeCrossNode && kMoeIntraNode != kMoeMeasuredAB && kMoeCrossNode != kMoeMeasuredAB &&
              kMoeMeasuredAB > kMegatron && kMoeCrossNode > kMegatron && kMoeIntraNode > kMegatron);
constexpr const char* kMeasuredABWhy =
    "Bridge's measured EP-overlap A/B (bf16, alltoall): unfused permutation not statable";
// The rows: the DGX-H100, DGX-B200 and DGX-GB200 pre-training rows of release 26.04.01
// (archive :193-290; recipes at 21d102f5e, the commit of that table: the *_V2 presets match
// its GBS and layouts) for the models Meshwork knows, and the GB200 LLAMA3_8B row of 25.11
// (archive :565, recipes at 00b7660b; 26.04.01 has no 8B row). Left out: Nemotron 3
// (hybrid Mamba blocks, not a Meshwork model), Kimi-K2 (GB300 only, Muon optimizer), the
// GB300 and B300 rows (no preset: no datasheet figures at hand to cite).
// Tolerances: stated per row (see `why`).
const std::vector<Run>& runs() {
    static const std::vector<Run> r = {
        // Dense Llama, H100: the fitted layouts at the larger batch of this release.
        {"H100 LLAMA3_70B 64 GPUs GBS 256 TP4 PP8 VP5 fp8, 1664 TPS/GPU", "26.04.01 :207",
         "llama3-70b", "dgx-h100", 64, 256, 1, 8192, 4, 8, 1, 5, 1, DType::Fp8, 1, 0, 1664,
         kMegatron, ""},
        {"H100 LLAMA3.1_405B 1024 GPUs GBS 1536 TP8 PP8 CP2 VP8 fp8, 328 TPS/GPU", "26.04.01 :219",
         "llama3.1-405b", "dgx-h100", 1024, 1536, 1, 8192, 8, 8, 2, 8, 1, DType::Fp8, 1, 0, 328,
         kMegatron, ""},
        // Dense Llama, GB200 NVL72 (preset from vendor figures, nothing fitted).
        {"GB200 LLAMA3_8B 8 GPUs MBS 2 fp8, 31508 TPS/GPU", "25.11 :565", "llama3-8b",
         "gb200-nvl72", 8, 128, 2, 8192, 1, 1, 1, 1, 1, DType::Fp8, 1, 0, 31508, kMegatron, ""},
        {"GB200 LLAMA3_70B 64 GPUs TP2 PP4 VP5 mxfp8, 3712 TPS/GPU", "26.04.01 :205", "llama3-70b",
         "gb200-nvl72", 64, 256, 1, 8192, 2, 4, 1, 5, 1, DType::Fp8, 1, 0, 3712, kMegatron, ""},
        {"GB200 LLAMA3.1_405B 256 GPUs TP4 PP16 VP4 fp8, 864 TPS/GPU",
         "26.04.01 :216",
         "llama3.1-405b",
         "gb200-nvl72",
         256,
         1536,
         1,
         8192,
         4,
         16,
         1,
         4,
         1,
         DType::Fp8,
         1,
         0,
         864,
         kMegatron,
         ""},
        // Megatron-FSDP with activation offload: LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2
        // (llama3_workload_base_configs.py:241-246 at 21d102f5e: MBS 2, use_megatron_fsdp,
        // cpu_offloading_num_layers 40 of the 80 layers to the Grace CPU over NVLink-C2C;
        // fsdp_double_buffer, llama3_llm_pretrain.py:109-110). Added when a layout could
        // state the offload (training.offload_activation_layers); nothing was changed for it.
        {"GB200 LLAMA3_70B 64 GPUs FSDP 64 MBS 2 fp8, 40 layers offloaded, 4224 TPS/GPU",
         "26.04.01 :204",
         "llama3-70b",
         "gb200-nvl72",
         64,
         256,
         2,
         8192,
         1,
         1,
         1,
         1,
         1,
         DType::Fp8,
         3,
         0,
         4224,
         kMegatron,
         "",
         {},
         {},
         40},
        // NVFP4 (fp4 training) beside the fp8 rows of the same table: the recipes
        // LLAMA3_70B_PRETRAIN_CONFIG_GB200_NVFP4_V2 (llama3_workload_base_configs.py:256-264 at
        // 21d102f5e, no CUDA graphs) and LLAMA31_405B_PRETRAIN_CONFIG_GB200_NVFP4_V2 over V1
        // (llama31_workload_base_configs.py:284-289 over :108-119: TP4 PP16 VP8, no CUDA
        // graphs, no recomputation); precision bf16_with_nvfp4_mixed (mixed_precision.py:405-417),
        // every layer NVFP4. layout_of() states what their scripts change for nvfp4.
        {"GB200 LLAMA3_70B 64 GPUs TP2 PP4 VP5 nvfp4, 4864 TPS/GPU", "26.04.01 :206", "llama3-70b",
         "gb200-nvl72", 64, 256, 1, 8192, 2, 4, 1, 5, 1, DType::Fp4, 1, 0, 4864, kMegatron, ""},
        {"GB200 LLAMA3.1_405B 256 GPUs TP4 PP16 VP8 nvfp4, 1184 TPS/GPU", "26.04.01 :218", "llama3.1-405b",
         "gb200-nvl72", 256, 1536, 1, 8192, 4, 16, 1, 8, 1, DType::Fp4, 1, 0, 1184, kNoTpOverlap405b,
         "TP collectives without userbuffers, over the 405B GB200 rows' pessimism"},
        // MoE, H100.
        {"H100 GPT OSS 120B 64 GPUs PP4 EP8 bf16, 5824 TPS/GPU", "26.04.01 :238", "gpt-oss-120b",
         "dgx-h100", 64, 1280, 1, 4096, 1, 4, 1, 1, 8, DType::Bf16, 1, 0, 5824, kMoeIntraNode,
         kMoeWhy, {},
         // recompute_modules=["layernorm", "moe_act"] (gpt_oss_workload_base_configs.py:82, the
         // H100 V1 preset the V2 one inherits, :124-127, at 21d102f5e).
         {RecomputeModule::Layernorm, RecomputeModule::MoeAct}},
        {"H100 Qwen3_30B_a3B 16 GPUs EP16 fp8, 8960 TPS/GPU", "26.04.01 :248", "qwen3-30b-a3b",
         "dgx-h100", 16, 1024, 1, 4096, 1, 1, 1, 1, 16, DType::Fp8, 1, 0, 8960, kMoeCrossNode,
         kCrossNodeWhy},
        {"H100 Qwen3_235B_a22B 256 GPUs TP2 PP8 VP4 EP32 fp8, 1712 TPS/GPU", "26.04.01 :258",
         "qwen3-235b-a22b", "dgx-h100", 256, 8192, 1, 4096, 2, 8, 1, 4, 32, DType::Fp8, 1, 0, 1712,
         kMoeCrossNode, kCrossNodeWhy},
        // MoE, B200.
        {"B200 DeepSeekV3 256 GPUs PP8 VP2 EP32 mxfp8, 3328 TPS/GPU",
         "26.04.01 :228",
         "deepseek-v3",
         "dgx-b200",
         256,
         4096,
         1,
         4096,
         1,
         8,
         1,
         2,
         32,
         DType::Fp8,
         1,
         0,
         3328,
         kMoeCrossNode,
         kCrossNodeWhy,
         // pp_layout "Et*4|(t*4|)*14tmL" (deepseek_workload_base_configs.py:231, B200 FP8_MX_V2 at
         // 21d102f5e): 15 chunks of 4 layers, the last 1 layer + MTP + loss.
         {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1},
         // recompute_modules=["mla_up_proj", "mlp"] (the same preset, :234).
         {RecomputeModule::MlaUpProj, RecomputeModule::Mlp}},
        {"B200 GPT OSS 120B 64 GPUs EP8 MBS 4 bf16, 13568 TPS/GPU",
         "26.04.01 :237",
         "gpt-oss-120b",
         "dgx-b200",
         64,
         1280,
         4,
         4096,
         1,
         1,
         1,
         1,
         8,
         DType::Bf16,
         1,
         0,
         13568,
         kMoeIntraNode,
         kMoeWhy,
         {},
         // recompute_modules=["layernorm", "moe_act"] (gpt_oss_workload_base_configs.py:75,
         // GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V1, which the V2 preset of the table's GBS
         // 1280 and EP8 inherits, :117-121, at 21d102f5e).
         {RecomputeModule::Layernorm, RecomputeModule::MoeAct}},
        {"B200 Qwen3_30B_a3B 8 GPUs EP8 MBS 4 mxfp8, 27136 TPS/GPU", "26.04.01 :247",
         "qwen3-30b-a3b", "dgx-b200", 8, 512, 4, 4096, 1, 1, 1, 1, 8, DType::Fp8, 1, 0, 27136,
         kMoeIntraNode, kMoeWhy},
        {"B200 Qwen3_235B_a22B 256 GPUs PP8 EP8 mxfp8, 3776 TPS/GPU", "26.04.01 :257",
         "qwen3-235b-a22b", "dgx-b200", 256, 8192, 1, 4096, 1, 8, 1, 1, 8, DType::Fp8, 1, 0, 3776,
         kMoeIntraNode, kMoeWhy},
        // MoE, GB200.
        {"GB200 DeepSeekV3 256 GPUs PP4 VP4 EP64 mxfp8, 4256 TPS/GPU",
         "26.04.01 :226",
         "deepseek-v3",
         "gb200-nvl72",
         256,
         4096,
         1,
         4096,
         1,
         4,
         1,
         4,
         64,
         DType::Fp8,
         1,
         0,
         4256,
         kMoeIntraNode,
         kMoeWhy,
         {},
         // recompute_modules=["mlp"] (deepseek_workload_base_configs.py:81, the GB200 V1 preset
         // that DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_V2 and its FP8_MX alias inherit, :182-191, at
         // 21d102f5e): the 3 dense layers' MLPs only.
         {RecomputeModule::Mlp}},
        {"GB200 GPT OSS 120B 64 GPUs EP64 MBS 4 bf16, 16640 TPS/GPU", "26.04.01 :235",
         "gpt-oss-120b", "gb200-nvl72", 64, 1280, 4, 4096, 1, 1, 1, 1, 64, DType::Bf16, 1, 0, 16640,
         kMoeIntraNode, kMoeWhy, {},
         // recompute_modules=["layernorm", "moe_act"] (gpt_oss_workload_base_configs.py:58, the
         // GB200 V1 preset the V2 one inherits, :102-106, at 21d102f5e).
         {RecomputeModule::Layernorm, RecomputeModule::MoeAct}},
        {"GB200 Qwen3_30B_a3B 8 GPUs EP8 MBS 4 mxfp8, 26112 TPS/GPU", "26.04.01 :245",
         "qwen3-30b-a3b", "gb200-nvl72", 8, 512, 4, 4096, 1, 1, 1, 1, 8, DType::Fp8, 1, 0, 26112,
         kMoeIntraNode, kMoeWhy},
        {"GB200 Qwen3_235B_a22B 256 GPUs PP8 VP3 EP32 mxfp8, 5680 TPS/GPU", "26.04.01 :255",
         "qwen3-235b-a22b", "gb200-nvl72", 256, 8192, 1, 4096, 1, 8, 1, 3, 32, DType::Fp8, 1, 0,
         5680, kMoeIntraNode, kMoeWhy},
        // Bridge's measured A/B pair (kMoeMeasuredAB above): the published step as tokens/s/GPU.
        {"H100 Qwen3_30B_a3B 16 GPUs EP16 bf16 alltoall, no EP overlap, 41.25 s", "SKILL.md :133",
         "qwen3-30b-a3b", "dgx-h100", 16, 1024, 1, 4096, 1, 1, 1, 1, 16, DType::Bf16, 1, 0,
         1024.0 * 4096 / (16 * 41.25), kMoeMeasuredAB, kMeasuredABWhy},
        {"H100 Qwen3_30B_a3B 16 GPUs EP16 bf16 alltoall, EP overlap, 31.31 s", "SKILL.md :134",
         "qwen3-30b-a3b", "dgx-h100", 16, 1024, 1, 4096, 1, 1, 1, 1, 16, DType::Bf16, 1, 0,
         1024.0 * 4096 / (16 * 31.31), kMoeMeasuredAB, kMeasuredABWhy},
    };
    return r;
}

// The MoE dispatch settings of the rows, from their recipes at 21d102f5e
// (scripts/performance/...): a base config's moe_flex_dispatcher_backend makes the
// dispatcher "flex" with that backend, none makes it "alltoall" (utils/overrides.py:243-246,
// src/megatron/bridge/training/flex_dispatcher_backend.py:70-71); moe_a2a_overlap sets
// overlap_moe_expert_parallel_comm (utils/overrides.py:161-168). Rows not listed run their
// recipes' alltoall dispatcher without overlap, the layout's defaults.
struct MoeRecipe {
    const char* source;  // the row's archive line
    MoeDispatcher dispatcher;
    MoeFlexBackend backend;
    bool a2a_overlap;
    bool tp_comm_overlap;
};
const std::vector<MoeRecipe>& moe_recipes() {
    static const std::vector<MoeRecipe> r = {
        // H100 Qwen3 30B: QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1,
        // configs/qwen/qwen3_workload_base_configs.py:433-441 (hybridep, moe_a2a_overlap False).
        {"26.04.01 :248", MoeDispatcher::Flex, MoeFlexBackend::HybridEP, false, true},
        // H100 Qwen3 235B: QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V2 (:280-283 over
        // V1 :175-185: no flex backend, moe_a2a_overlap True); qwen3_llm_pretrain.py:193-195
        // sets tp_comm_overlap False and the alltoall dispatcher.
        {"26.04.01 :258", MoeDispatcher::AllToAll, MoeFlexBackend::DeepEP, true, false},
        // B200 DeepSeek-V3: DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2,
        // configs/deepseek/deepseek_workload_base_configs.py:224-235 (deepep, moe_a2a_overlap True).
        {"26.04.01 :228", MoeDispatcher::Flex, MoeFlexBackend::DeepEP, true, true},
        // Rows with EP inside the NVLink domain whose recipe sets a flex backend or the MoE
        // all-to-all overlap (the others run alltoall without overlap: no backend in their
        // presets, utils/overrides.py:243-246):
        // B200 Qwen3 30B: QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1 = B200_BF16_V1,
        // qwen3_workload_base_configs.py:405-412 (hybridep).
        {"26.04.01 :247", MoeDispatcher::Flex, MoeFlexBackend::HybridEP, false, true},
        // GB200 DeepSeek-V3: GB200_FP8_MX_V2 = GB200_V2 over GB200_V1,
        // deepseek_workload_base_configs.py:72-84, :182-185, :191 (hybridep, moe_a2a_overlap False).
        {"26.04.01 :226", MoeDispatcher::Flex, MoeFlexBackend::HybridEP, false, true},
        // GB200 Qwen3 30B: GB200_FP8_MX_V1, qwen3_workload_base_configs.py:368-375 (hybridep).
        {"26.04.01 :245", MoeDispatcher::Flex, MoeFlexBackend::HybridEP, false, true},
        // GB200 Qwen3 235B: GB200_FP8_MX_V2 over FP8_CS_V2 over FP8_CS_V1,
        // qwen3_workload_base_configs.py:96-105, :216-226 (hybridep).
        {"26.04.01 :255", MoeDispatcher::Flex, MoeFlexBackend::HybridEP, false, true},
        // GB200 GPT-OSS: GPT_OSS_120B_PRETRAIN_CONFIG_GB200_BF16_V2,
        // gpt_oss_workload_base_configs.py:102-106 (moe_a2a_overlap True, no backend).
        {"26.04.01 :235", MoeDispatcher::AllToAll, MoeFlexBackend::DeepEP, true, true},
        // Bridge's measured A/B pair: the all-to-all dispatcher (--moe_flex_dispatcher_backend
        // None), the overlap off and on (SKILL.md:127-135, command :144-166).
        {"SKILL.md :133", MoeDispatcher::AllToAll, MoeFlexBackend::DeepEP, false, true},
        {"SKILL.md :134", MoeDispatcher::AllToAll, MoeFlexBackend::DeepEP, true, true},
    };
    return r;
}

void state_moe_recipe(const Run& r, Layout& l) {
    for (const MoeRecipe& m : moe_recipes()) {
        if (std::string(m.source) != r.source) continue;
        l.parallel.moe_dispatcher = m.dispatcher;
        l.parallel.moe_flex_backend = m.backend;
        l.parallel.moe_a2a_overlap = m.a2a_overlap;
        if (!m.tp_comm_overlap) l.parallel.tp_comm_overlap = TpOverlap::None;
    }
}

Layout layout_of(const Run& r) {
    const int dp = r.gpus / (r.tp * r.pp * r.cp);
    // Every model is a bundled preset; the Qwen3 MoE ones (qwen3-30b-a3b, qwen3-235b-a22b) are
    // Megatron-Bridge's providers (qwen_provider.py at 00b7660b :363-425) as the Hugging Face
    // config.json they mirror.
    Layout l = make_layout(load_model(r.model), r.cluster, r.tp, r.pp, dp, r.mbs, r.gbs, r.seq);
    l.gpus = r.gpus;
    l.parallel.mesh.cp = r.cp;
    if (r.ep > 1) {
        l.parallel.mesh.ep = r.ep;
        l.parallel.mesh.etp = 1;
    }
    l.parallel.vpp = r.vpp;
    l.parallel.sequence_parallel = r.tp > 1;
    l.parallel.tp_comm_overlap = r.tp > 1 ? TpOverlap::Ring : TpOverlap::None;
    l.training.schedule = r.vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
    l.training.dtype = r.dtype;
    // The precision column of the archive says the fp8 recipe: "FP8-CS" (current scaling,
    // per-tensor) or "MXFP8"; the labels carry it.
    if (std::string(r.label).find("mxfp8") != std::string::npos) l.training.fp8_recipe = Fp8Recipe::Mxfp8;
    l.training.zero_stage = r.zero;
    l.training.recompute = r.recompute_layers > 0 ? Recompute::Full : Recompute::None;
    l.training.recompute_num_layers = r.recompute_layers;
    if (!r.recompute_modules.empty()) {
        l.training.recompute = Recompute::Selective;
        l.training.recompute_modules = r.recompute_modules;
    }
    l.training.offload_activation_layers = r.offload_activation_layers;
    l.training.grad_reduce_in_bf16 = true;
    // The loss: the performance scripts set Transformer Engine's cross entropy for every run,
    // over the recipes' own choice (scripts/performance/utils/overrides.py:66 at v0.4.0,
    // 2026-04-16, called from set_workload_base_configs at :223; :55 at 00b7660b, 25.11;
    // fusion on, gpt_provider.py:196), and the TE they pin writes the gradient over the
    // logits (71bbefbf at v0.4.0, pyproject.toml:122; release_v2.9 at 00b7660b,
    // release_v2.15 on 2026-05-18; TE keeps an fp32 gradient only from v2.18):
    // te-inplace, 2 bytes per logit.
    l.training.cross_entropy = CrossEntropy::TeInPlace;
    l.placement.layers_per_stage = r.layers_per_chunk;
    if (std::string(r.model) == "llama3.1-405b") use_bridge_405b_split(l);
    if (r.dtype == DType::Fp4) {
        // The scripts turn TP overlap off for nvfp4 (llama3_llm_pretrain.py:115,
        // llama31_llm_pretrain.py:122 at 21d102f5e), and the 405B V2 run the parameter-gather
        // overlap (:123-124, disable_param_gather_overlap :46-55, "to reduce training peak
        // memory and avoid OOM").
        l.parallel.tp_comm_overlap = TpOverlap::None;
        if (std::string(r.model) == "llama3.1-405b") l.parallel.overlap_param_gather = false;
    }
    state_moe_recipe(r, l);
    return l;
}

double published_step_s(const Run& r) {
    return static_cast<double>(r.gbs) * r.seq / (r.gpus * r.tokens_per_s_per_gpu);
}

}  // namespace

class TestCostPublishedHeldout : public QObject {
    Q_OBJECT
  private slots:
    void published_runs_data() {
        QTest::addColumn<int>("which");
        for (std::size_t i = 0; i < runs().size(); ++i)
            QTest::newRow(runs()[i].label) << static_cast<int>(i);
    }
    void published_runs() {
        QFETCH(int, which);
        const Run& run = runs()[static_cast<std::size_t>(which)];
        const Layout l = layout_of(run);
        const auto v = validate_layout(l, "published run");
        QVERIFY2(v.valid(), v.errors.empty()
                                ? ""
                                : qPrintable(QString::fromStdString(v.errors[0].to_string())));
        const double published = published_step_s(run);
        const Estimate e = estimate_layout(l);
        const double err = e.step_time_s / published - 1;
        const double sim_err = simulate_layout(l).estimate.step_time_s / published - 1;
        qInfo(
            "%s [%s]: published %.3f s, estimate %.3f s (%+.1f%%), simulation %+.1f%%, fits %d%s%s",
            run.label, run.source, published, e.step_time_s, 100 * err, 100 * sim_err, int(e.fits),
            *run.why ? "; " : "", run.why);
        const auto& worst = e.stages[static_cast<std::size_t>(e.worst_stage)];
        qInfo(
            "  busiest rank: compute %.2f s, recompute %.2f, TP %.2f, EP %.2f, PP %.2f, DP %.2f, "
            "bubble %.2f, host launches %.2f; "
            "peak %.1f GiB of %.1f",
            e.time.compute_s, e.time.recompute_s, e.time.tp_comm_s, e.time.ep_comm_s,
            e.time.pp_comm_s, e.time.dp_comm_s, e.time.bubble_s, e.time.host_launch_s,
            worst.peak_bytes / 1073741824.0,
            l.cluster.gpu.hbm_bytes / 1073741824.0);
        QVERIFY2(std::fabs(err) < run.tolerance, "estimate outside the stated tolerance");
        QVERIFY2(std::fabs(sim_err) < run.tolerance + 0.10,
                 "simulation outside the stated tolerance");
        // Every run fitted its GPUs: so must the prediction, with its published settings.
        QVERIFY2(e.fits, "a published run with its published settings must fit");
    }
    // The summary the docs table quotes: mean |error| and the worst row, over the whole set
    // and by kind (dense rows the layout states fully; MoE with EP inside the NVLink domain;
    // MoE with EP across nodes).
    void summary() {
        struct Group {
            const char* name;
            double sum = 0, worst = 0;
            int n = 0;
        };
        Group all{"all"}, dense{"dense, fully stated"}, intra{"MoE, EP in the NVLink domain"},
            cross{"MoE, EP across nodes"}, measured_ab{"MoE, Bridge's measured EP-overlap A/B"};
        for (const Run& run : runs()) {
            const double err =
                estimate_layout(layout_of(run)).step_time_s / published_step_s(run) - 1;
            if (run.tolerance == kMoeMeasuredAB) {  // diagnostic pair: kept out of "all"
                measured_ab.sum += std::fabs(err);
                measured_ab.n += 1;
                if (std::fabs(err) > std::fabs(measured_ab.worst)) measured_ab.worst = err;
                continue;
            }
            Group& g = run.tolerance <= kMegatron       ? dense
                       : run.tolerance == kMoeIntraNode ? intra
                                                        : cross;
            for (Group* x : {&all, &g}) {
                x->sum += std::fabs(err);
                x->n += 1;
                if (std::fabs(err) > std::fabs(x->worst)) x->worst = err;
            }
        }
        for (const Group* g : {&all, &dense, &intra, &cross, &measured_ab}) {
            qInfo("held back, %s: %d rows, mean |error| %.1f%%, worst %+.1f%%", g->name, g->n,
                  g->n ? 100 * g->sum / g->n : 0.0, 100 * g->worst);
        }
        // The dense rows: as close as the Megatron-family rows of tst_cost_h100_runs (4.5 %
        // mean there), with room for a second GPU generation (GB200) that nothing was fitted on.
        QVERIFY(dense.n > 0 && dense.sum / dense.n < 0.10);
        // 23.1 % with every row's recipe dispatcher stated (the HybridEP rows the most
        // optimistic) and the experts' eager passes priced (core/cost/moe_eager_passes.h);
        // 19.2 % with the flex kernels at their published NVLink rate instead of the link's
        // (core/cost/flex_kernel_rate.h: the four HybridEP rows move by 6 to 10 points).
        // 18.0 % with issue 28's launch cost per layer pass (core/cost/launch_cost.h) and the
        // kernel tables' bf16 ratio (core/cost/gemm_efficiency.h).
        // 13.8 % with issue 28 pattern 2's MoE host ops and router (core/cost/moe_host_ops.h).
        QVERIFY(intra.n > 0 && intra.sum / intra.n < 0.16);
        // With their dispatchers and overlap stated (61.5 % mean before, +143 % worst): 23.3 %;
        // 19.5 % with the overlapped compute on the SMs the dispatcher leaves, 17.2 % with
        // Megatron's four pairings per layer.
        // 13.2 % with issue 28's launch cost per layer pass.
        // 11.7 % with issue 28 pattern 2's MoE host ops and router (core/cost/moe_host_ops.h).
        QVERIFY(cross.n > 0 && cross.sum / cross.n < 0.15);
    }
};

QTEST_GUILESS_MAIN(TestCostPublishedHeldout)
#include "tst_cost_published_heldout.moc"
