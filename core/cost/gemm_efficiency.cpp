#include "core/cost/gemm_efficiency.h"

#include <algorithm>
#include <array>

namespace meshwork::cost {

namespace {

// Each row: the mean (or median, as stated) of the largest GEMMs a published kernel table
// lists, over the dense peak of the same precision (resources/gpus: H100 SXM 989.4 bf16 and
// 1,978.9 fp8 TFLOP/s; B200 2,250 and 4,500). Kernel tables time the GEMM alone, at the
// clocks a short benchmark holds; nothing here is fitted to a training run.
constexpr std::array<GemmEfficiencyRow, 11> kRows{{
    // OpenXLA's default matmul performance table for sm_90 (H100 SXM), cuBLAS through XLA,
    // tensorflow/tensorflow third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h
    // (versions at 372d578b and 9bebee8e): the four largest bf16 entries, b·m×n×k =
    // 1·4096×4096×4096 783.3 and 786.0, 2·4096×2048×4096 783.2, 1·4096×2048×4096 764.1 TFLOP/s;
    // mean 779.2 of 989.4.
    {"hopper", GemmPrecision::Bf16, 0.79,
     "OpenXLA matmul_interpolator_data.h sm_90 bf16, 4096-sized entries: 764-786 TFLOP/s of 989.4"},
    // TileLang's FP8 GEMM benchmark on H800 SXM (the H100 SXM's SMs and clocks), per-tensor
    // scales, M = N = 8192, K = 4096, 8192, 16384: 1,378 / 1,461 / 1,523 and, in the other
    // published version of the table, 1,467 / 1,507 / 1,541 TFLOP/s (tile-ai TileLang
    // benchmark/matmul_fp8/README.md in xwhzz/tilelang, measured at commit 6b1faf71);
    // median 1,487 of 1,978.9.
    {"hopper", GemmPrecision::Fp8Tensorwise, 0.75,
     "TileLang benchmark/matmul_fp8/README.md, H800 SXM, 8192x8192xK, K >= 4096: 1378-1541 TFLOP/s of 1978.9"},
    // DeepGEMM's README at its first release (deepseek-ai/DeepGEMM a6d97a1, "Normal GEMMs for
    // dense models", H800, NVCC 12.8), 1×128 / 128×128 block scales: the rows with M = 4096
    // and N, K >= 2048, 4096×2112×7168 1,058, 4096×7168×16384 1,358, 4096×4096×7168 1,304,
    // 4096×7168×2048 1,025 TFLOP/s; mean 1,186 of 1,978.9 (its CUTLASS 3.6 baseline is
    // 1.1-1.2× slower on the same rows).
    {"hopper", GemmPrecision::Fp8Blockwise, 0.60,
     "DeepGEMM a6d97a1 README, H800, M=4096 rows with N,K >= 2048: 1025-1358 TFLOP/s of 1978.9"},
    // OpenXLA's table for sm_100 (B200), openxla/xla 71feeddf7c (2025-10-21, the version that
    // added f8e4m3fn keys; same path): bf16 1·4096×4096×4096 1,416.9 and 1·4096×2048×4096
    // 1,343.5 TFLOP/s; mean 1,380 of 2,250.
    {"blackwell", GemmPrecision::Bf16, 0.61,
     "OpenXLA matmul_interpolator_data.h sm_100 bf16, 4096x4096x4096 and 4096x2048x4096: 1344-1417 TFLOP/s of 2250"},
    // The same entries, e4m3 × e4m3 → bf16 (per-tensor scales): 2,765.0 and 2,499.4 TFLOP/s;
    // mean 2,632 of 4,500.
    {"blackwell", GemmPrecision::Fp8Tensorwise, 0.58,
     "OpenXLA matmul_interpolator_data.h sm_100 f8e4m3fn, 4096x4096x4096 and 4096x2048x4096: 2499-2765 TFLOP/s of 4500"},
    // MXFP8 (1x32 block scales applied by the tensor cores) against per-tensor FP8 on the same
    // GEMMs: Transformer Engine's GEMM benchmark on B300 with the operands quantized beforehand
    // (the kernels alone; docs/examples/gemm_profiling/gemm_profiling.rst:141-148 at
    // d0067d0d: a layer's 12 GEMMs, hidden 4096, FFN 16,384, 15,872 tokens), 7.161 ms MXFP8
    // against 6.812 ms per-tensor: 0.951 of its rate. The per-tensor row above × 0.951
    // (Blackwell's SMs in both; the B300 has no table of its own here).
    {"blackwell", GemmPrecision::Mxfp8, 0.58 * 6.812 / 7.161,
     "per-tensor fp8 row x 0.951: TE gemm_profiling.rst:148, B300 pre-quantized, MXFP8 7.161 ms vs per-tensor 6.812 ms a layer"},
    // NVFP4 (e2m1 with an E4M3 scale per 16 values), a fraction of the fp4 peak (B200 9,
    // GB200 10 PFLOP/s dense). The only published NVFP4 kernel timing is the same benchmark
    // on B300, whose fp4 units are faster against its fp8 ones (13.5 against 4.5 PFLOP/s
    // dense, HGX B300 datasheet) than the B200's (9 against 4.5): NVFP4 3.764 ms against MXFP8
    // 7.161 ms a layer of W = 19.17 TFLOP (:141-148). A kernel's time as W / (f · peak) plus
    // a part that does not scale with the peak (prologue, scale loads, the bf16 epilogue),
    // solved on the two B300 figures: f = 0.836, 2.07 ms; on the B200's 9 PFLOP/s the layer
    // takes W / (0.836 · 9) + 2.07 = 4.61 ms, 1.55 times MXFP8 (not B300's 1.90). As a row:
    // the per-tensor row × 6.812 / 4.613 × 4.5 / 9 (the B200's fp8 over fp4 peak). Taking
    // 13.125 or 15 PFLOP/s for the B300 (other published figures) gives 0.432 or 0.417.
    {"blackwell", GemmPrecision::Nvfp4, 0.58 * 6.812 / 4.613 * 4.5 / 9.0,
     "TE gemm_profiling.rst:148, B300 pre-quantized NVFP4 3.764 vs MXFP8 7.161 ms a layer, moved to B200's fp4:fp8 peaks (2 vs 3) by a peak-bound + fixed kernel time: 4.613 ms"},
    // Blackwell Ultra (B300, GB300): Transformer Engine's GEMM benchmark measured on the B300
    // itself, operands quantized beforehand (gemm_profiling.rst:141-148 at d0067d0d): a
    // layer's 12 GEMMs (hidden 4096, FFN 16,384, 15,872 tokens: W = 6 · 15,872 · 4,096 ·
    // 49,152 = 19.17 TFLOP) in 13.102 ms bf16, 6.812 per-tensor FP8, 7.161 MXFP8, 3.764 NVFP4:
    // 1,463, 2,814, 2,677 and 5,093 TFLOP/s, over the B300's dense peaks (gpus/b300.json:
    // 2,250, 4,500, 4,500 and 14,000). Its fp4 units are 3x its fp8 ones where the B200's are
    // 2x, which is why Blackwell's NVFP4 row above is a model of this figure and this one is not.
    {"blackwell-ultra", GemmPrecision::Bf16, 19.17e12 / 13.102e-3 / 2.25e15,
     "TE gemm_profiling.rst:141-148, B300, a layer's 12 GEMMs of 19.17 TFLOP in 13.102 ms bf16: 1463 TFLOP/s of 2250"},
    {"blackwell-ultra", GemmPrecision::Fp8Tensorwise, 19.17e12 / 6.812e-3 / 4.5e15,
     "TE gemm_profiling.rst:141-148, B300 pre-quantized, 19.17 TFLOP in 6.812 ms per-tensor FP8: 2814 TFLOP/s of 4500"},
    {"blackwell-ultra", GemmPrecision::Mxfp8, 19.17e12 / 7.161e-3 / 4.5e15,
     "TE gemm_profiling.rst:141-148, B300 pre-quantized, 19.17 TFLOP in 7.161 ms MXFP8: 2677 TFLOP/s of 4500"},
    {"blackwell-ultra", GemmPrecision::Nvfp4, 19.17e12 / 3.764e-3 / 14e15,
     "TE gemm_profiling.rst:141-148, B300 pre-quantized, 19.17 TFLOP in 3.764 ms NVFP4: 5093 TFLOP/s of 14000"},
}};

// What a training step sustains against the kernel tables. The tables time one GEMM at the
// clocks a short benchmark holds; a step's GEMMs run at real shapes (wave and tile
// quantisation), under the GPU's sustained power limit, with the work the model does not
// price (launch gaps inside a layer; the fp8 casts are priced apart, fp8_cast.h). That
// difference has no published source, so it stays what it was before the table: one figure
// per architecture, the per-tensor fp8 GEMM efficiency fitted on the three fitted rows of
// tst_cost_h100_runs (Megatron-Bridge 25.11 DGX-H100 LLAMA3_70B and LLAMA3.1_405B for Hopper,
// DGX-B200 LLAMA3.1_405B for Blackwell; the value in steps of 0.01 with the smallest largest
// |error|, docs/cost-model.md "H100-era runs"). Every other precision keeps the tables' ratio
// to it.
struct Sustained {
    const char* architecture;
    double fp8_tensorwise;  // fitted
};
// Hopper 0.46 → 0.45 when fused attention took its published rate (attention_rate.h): the
// fitted rows' attention got faster, bench/refit-gemm.py re-chose on the same rule. Hopper
// 0.45 → 0.47 and Blackwell 0.42 → 0.43 when the casts of current scaling, which the fitted
// rows run, were priced apart (fp8_cast.h): the same rule. Hopper 0.47 → 0.48 and Blackwell
// 0.43 → 0.44 when the GPU's gap between kernels was charged (launch_cost.h), and Blackwell
// back to 0.43 when its fused attention took cuDNN's table (attention_rate.h); Hopper 0.48 →
// 0.49 and Blackwell 0.43 → 0.44 when TP overlap's GEMM chunks were priced at their own shape
// (block_cost.cpp): the same rule. Hopper 0.49 → 0.48 when the sequence-parallel all-gathers
// of fp8 and fp4 runs moved their quantized bytes (block_cost.cpp, tp_gather_bytes): the same rule.
constexpr std::array<Sustained, 2> kSustained{{{"hopper", 0.48}, {"blackwell", 0.44}}};

}  // namespace

std::string to_string(GemmPrecision p) {
    switch (p) {
        case GemmPrecision::Fp32: return "fp32";
        case GemmPrecision::Tf32: return "tf32";
        case GemmPrecision::Bf16: return "bf16";
        case GemmPrecision::Fp16: return "fp16";
        case GemmPrecision::Fp8Tensorwise: return "fp8-tensorwise";
        case GemmPrecision::Fp8Blockwise: return "fp8-blockwise";
        case GemmPrecision::Mxfp8: return "mxfp8";
        case GemmPrecision::Nvfp4: return "nvfp4";
    }
    return "?";
}

GemmPrecision gemm_precision(DType dtype, Fp8Recipe recipe) {
    switch (dtype) {
        case DType::Fp32: return GemmPrecision::Fp32;
        case DType::Tf32: return GemmPrecision::Tf32;
        case DType::Bf16: return GemmPrecision::Bf16;
        case DType::Fp16: return GemmPrecision::Fp16;
        case DType::Fp4: return GemmPrecision::Nvfp4;
        case DType::Fp8:
            switch (recipe) {
                // Current and delayed scaling feed the same per-tensor-scaled kernel ("recipes
                // that differ only in how scaling factors are computed ... collapse to the same
                // kernel", TE d0067d0d docs/features/low_precision_training/speedups.rst:24-28);
                // they differ in their casts (core/cost/fp8_cast.h).
                case Fp8Recipe::Tensorwise:
                case Fp8Recipe::Delayed: return GemmPrecision::Fp8Tensorwise;
                case Fp8Recipe::Blockwise: return GemmPrecision::Fp8Blockwise;
                case Fp8Recipe::Mxfp8: return GemmPrecision::Mxfp8;
                // torchao's rowwise GEMM (CUTLASS, per-row scales) has no published kernel
                // table; it is taken at the per-tensor rate, as torchao's own roofline does for
                // every float8 recipe (one pct_achievable_gemm_tops, pytorch/ao 36027d82
                // torchao/testing/training/roofline_utils.py:311-330). An assumption; its extra
                // cast traffic is charged apart (core/cost/fp8_cast.h).
                case Fp8Recipe::Rowwise: return GemmPrecision::Fp8Tensorwise;
            }
    }
    return GemmPrecision::Bf16;
}

std::span<const GemmEfficiencyRow> gemm_efficiency_table() { return kRows; }

std::string gpu_architecture(const std::string& kind) {
    auto starts = [&](const char* prefix) { return kind.rfind(prefix, 0) == 0; };
    // Hopper: H100 (SXM, NVL, PCIe, the 96 GB HBM2e part), H200, H800, GH200.
    if (starts("h100") || starts("h200") || starts("h800") || starts("gh200")) return "hopper";
    // Blackwell datacenter parts: B200, GB200 (the same SMs at a higher power limit), and
    // Blackwell Ultra's B300 and GB300 (the same tensor-core generation, sm_103; only their GEMM
    // rows are their own, gpu_table_architecture below).
    if (starts("b200") || starts("gb200") || starts("b100") || starts("b300") || starts("gb300")) return "blackwell";
    return {};
}

std::string gpu_table_architecture(const std::string& gpu_kind) {
    if (gpu_kind.rfind("b300", 0) == 0 || gpu_kind.rfind("gb300", 0) == 0) return "blackwell-ultra";
    return gpu_architecture(gpu_kind);
}

namespace {
std::optional<double> table_row(const std::string& arch, GemmPrecision p) {
    for (const GemmEfficiencyRow& r : kRows) {
        if (arch == r.architecture && r.precision == p) return r.fraction_of_peak;
    }
    return std::nullopt;
}
}  // namespace

std::optional<double> tabled_gemm_efficiency(const std::string& gpu_kind, GemmPrecision p) {
    const std::string arch = gpu_architecture(gpu_kind);
    if (arch.empty()) return std::nullopt;
    const std::string table = gpu_table_architecture(gpu_kind);
    auto find = [&](GemmPrecision q) { return table_row(table, q); };
    // fp16 runs on the same tensor-core datapath at the same peak as bf16 on these GPUs
    // (the datasheets list one figure for both); the tables time bf16.
    if (p == GemmPrecision::Fp16) p = GemmPrecision::Bf16;
    if (auto e = find(p)) return e;
    // An fp8 recipe without a row of its own (blockwise on Blackwell) takes its GPU's
    // per-tensor row. MXFP8 on Hopper has no hardware and no row either way.
    if (p == GemmPrecision::Mxfp8 && arch != "blackwell") return std::nullopt;
    if (p == GemmPrecision::Nvfp4) return std::nullopt;  // a row of its own or none
    if (p == GemmPrecision::Fp8Blockwise || p == GemmPrecision::Mxfp8) return find(GemmPrecision::Fp8Tensorwise);
    return std::nullopt;
}

std::optional<double> sustained_gemm_efficiency(const std::string& gpu_kind, GemmPrecision p) {
    const auto kernel = tabled_gemm_efficiency(gpu_kind, p);
    // The fitted figure is a share of its architecture's per-tensor kernel row; Blackwell Ultra,
    // with rows of its own and no fitted run, keeps Blackwell's share of its own rows.
    const std::string arch = gpu_architecture(gpu_kind);
    const auto reference = table_row(arch, GemmPrecision::Fp8Tensorwise);
    if (!kernel || !reference || *reference <= 0) return std::nullopt;
    for (const Sustained& s : kSustained) {
        if (arch == s.architecture) return std::clamp(s.fp8_tensorwise * *kernel / *reference, 1e-3, 1.0);
    }
    return std::nullopt;
}

double gemm_efficiency(const ClusterSpec& c, DType dtype, Fp8Recipe recipe) {
    if (c.efficiency.gemm > 0) return std::clamp(c.efficiency.gemm, 1e-3, 1.0);
    if (auto e = sustained_gemm_efficiency(c.gpu.kind, gemm_precision(dtype, recipe))) return *e;
    return kUntabledGemm;
}

}  // namespace meshwork::cost
