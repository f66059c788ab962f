// Training knobs that change only how fast a step runs, not what it computes: the fp8
// scaling recipe of the GEMMs and CUDA-graph capture. The cost model reads them in
// core/cost/gemm_efficiency.h and core/cost/launch_cost.h (docs/cost-model.md, "GEMM
// efficiency by GPU and precision", "Host and launch cost per layer pass").
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace meshwork {

// How fp8 GEMM operands are scaled (Megatron-LM's --fp8-recipe,
// megatron/core/transformer/transformer_config.py:594 at d98e8a64; enums.py:12-19):
// Tensorwise, one scale per tensor from the tensor itself (Megatron's "tensorwise" current
// scaling, Transformer Engine's Float8CurrentScaling, torchao's Float8 "tensorwise"); Delayed,
// one scale per tensor from earlier steps' amax history (Megatron's "delayed", its default,
// transformer_config.py:594-596; TE's DelayedScaling): the same GEMM kernel, a cheaper cast
// (core/cost/fp8_cast.h); Blockwise, 1×128 / 128×128 blocks as DeepSeek-V3
// trains (Megatron's "blockwise", Transformer Engine's Float8BlockScaling); Mxfp8, 1×32
// blocks with power-of-two scales applied by Blackwell's tensor cores (Megatron's "mxfp8");
// Rowwise, one scale per row of each operand (torchao's float8 "rowwise", torchtitan's
// float8.recipe_name; pytorch/ao 36027d82 torchao/float8/config.py Float8LinearRecipeName).
// Read only when training.dtype is fp8.
enum class Fp8Recipe { Tensorwise, Delayed, Blockwise, Mxfp8, Rowwise };

// Which kernels are captured in CUDA graphs (Megatron-LM's --cuda-graph-impl,
// megatron/core/transformer/transformer_config.py:1075-1088 at d98e8a64): None, every kernel
// launched from the host; PerLayer, one graph per transformer layer ("local" or
// "transformer_engine" with an empty --cuda-graph-modules list: the whole layer); for a
// dropless MoE layer only what precedes its token-count synchronisation can be captured
// (moe/README.md:514, "the resulting dynamic shapes make MoE layers uncapturable",
// --cuda-graph-modules attn moe_router moe_preprocess); FullIteration, the whole
// forward-backward of a step as one graph ("full_iteration").
enum class CudaGraphs { None, PerLayer, FullIteration };

// What per-layer graphs capture (Megatron-LM's --cuda-graph-modules, the CudaGraphModule enum
// at d98e8a64 megatron/core/transformer/enums.py:61-73; transformer_config.py:1090-1100): empty,
// the whole layer; otherwise the listed regions only, the rest of the layer launched from the
// host. Read only with CudaGraphs::PerLayer (Megatron-LM: "no effect" with none, must be empty
// with full_iteration, transformer_config.py:1087-1088).
enum class GraphModule : unsigned { Attn = 1, Mlp = 2, Moe = 4, MoeRouter = 8, MoePreprocess = 16, Mamba = 32 };
struct GraphModules {
    unsigned bits = 0;  // GraphModule flags; 0: the whole layer
    [[nodiscard]] bool whole_layer() const { return bits == 0; }
    [[nodiscard]] bool has(GraphModule m) const { return (bits & static_cast<unsigned>(m)) != 0; }
    // Whether the region is captured: the whole layer, or listed.
    [[nodiscard]] bool captures(GraphModule m) const { return whole_layer() || has(m); }
    bool operator==(const GraphModules&) const = default;
};
// Megatron-LM's names, in its enum's order: the one table of both directions.
inline constexpr std::pair<const char*, GraphModule> kGraphModuleNames[] = {
    {"attn", GraphModule::Attn},         {"mlp", GraphModule::Mlp},
    {"moe", GraphModule::Moe},           {"moe_router", GraphModule::MoeRouter},
    {"moe_preprocess", GraphModule::MoePreprocess}, {"mamba", GraphModule::Mamba}};
inline std::vector<std::string> graph_module_names(const GraphModules& g) {
    std::vector<std::string> out;
    for (const auto& [n, m] : kGraphModuleNames) {
        if (g.has(m)) out.emplace_back(n);
    }
    return out;
}
// The listed names joined by `separator` ("" for the whole layer); with " ", Megatron-LM's
// nargs "+" words.
inline std::string join_graph_modules(const GraphModules& g, const char* separator) {
    std::string s;
    for (const std::string& n : graph_module_names(g)) s += (s.empty() ? "" : separator) + n;
    return s;
}
// "attn, mlp, ..., mamba": every name, for messages.
inline std::string graph_module_name_list() {
    std::string s;
    for (const auto& [n, m] : kGraphModuleNames) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
}
// One name into `out`; "full" (Megatron's default, the whole layer) adds nothing. False for a
// name Megatron-LM does not define.
inline bool add_graph_module(const std::string& name, GraphModules& out) {
    if (name == "full") return true;
    for (const auto& [n, m] : kGraphModuleNames) {
        if (name == n) {
            out.bits |= static_cast<unsigned>(m);
            return true;
        }
    }
    return false;
}

inline std::string to_string(Fp8Recipe r) {
    switch (r) {
        case Fp8Recipe::Tensorwise: return "tensorwise";
        case Fp8Recipe::Delayed: return "delayed";
        case Fp8Recipe::Blockwise: return "blockwise";
        case Fp8Recipe::Mxfp8: return "mxfp8";
        case Fp8Recipe::Rowwise: return "rowwise";
    }
    return "?";
}

// "tensorwise", "delayed", "blockwise", "mxfp8", "rowwise".
inline bool parse_fp8_recipe(const std::string& text, Fp8Recipe& out) {
    if (text == "tensorwise") out = Fp8Recipe::Tensorwise;
    else if (text == "delayed") out = Fp8Recipe::Delayed;
    else if (text == "blockwise") out = Fp8Recipe::Blockwise;
    else if (text == "mxfp8") out = Fp8Recipe::Mxfp8;
    else if (text == "rowwise") out = Fp8Recipe::Rowwise;
    else return false;
    return true;
}

inline std::string to_string(CudaGraphs g) {
    switch (g) {
        case CudaGraphs::None: return "none";
        case CudaGraphs::PerLayer: return "per-layer";
        case CudaGraphs::FullIteration: return "full-iteration";
    }
    return "?";
}

// "none", "per-layer", "full-iteration"; also Megatron's own spellings of --cuda-graph-impl
// ("local" and "transformer_engine" capture per layer, "full_iteration").
inline bool parse_cuda_graphs(const std::string& text, CudaGraphs& out) {
    if (text == "none") out = CudaGraphs::None;
    else if (text == "per-layer" || text == "local" || text == "transformer_engine") out = CudaGraphs::PerLayer;
    else if (text == "full-iteration" || text == "full_iteration") out = CudaGraphs::FullIteration;
    else return false;
    return true;
}

}  // namespace meshwork
