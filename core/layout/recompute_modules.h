// Module-level selective recomputation, as Megatron-LM states it: with
// --recompute-granularity selective, --recompute-modules names the submodules of each
// transformer layer whose activations are dropped after the forward and rebuilt before the
// backward (TransformerConfig.recompute_modules, megatron/core/transformer/
// transformer_config.py:560-583 at d98e8a64; default ["core_attn"], :1940-1941). The layout
// field is `training.recompute_modules`; it needs `training.recompute: selective`, and empty
// means Megatron's default, core attention alone. What each module frees and reruns is
// priced from the block's own activation terms (core/cost/memory_model.h, BlockActivations)
// and forward costs (core/cost/block_cost.cpp); docs/cost-model.md, "Module-level
// recomputation".
#pragma once

#include <string>
#include <vector>

namespace meshwork {

// The modules Meshwork's blocks have. Megatron's other choices ("gdn_norm_out",
// "gdp_in_proj", "gdp_qkv", "mhc") belong to block kinds no Meshwork model has (gated delta
// nets, hyper-connections) and are refused by name.
enum class RecomputeModule {
    CoreAttn,       // "core_attn": scores, softmax, context (Korthikanti et al. 2022 §5)
    MoeAct,         // "moe_act": the routed experts' activation function, output discarded
    Layernorm,      // "layernorm": input_layernorm and pre_mlp_layernorm, outputs discarded
    MlaUpProj,      // "mla_up_proj": MLA's Q/K/V up-projections and RoPE, outputs discarded
    Mlp,            // "mlp": the dense MLP of non-MoE layers, checkpointed whole
    Moe,            // "moe": the MoE layer (router, dispatch, experts, shared experts), whole
    SharedExperts,  // "shared_experts": the MoE layer's shared experts, checkpointed whole
};

inline constexpr RecomputeModule kAllRecomputeModules[] = {
    RecomputeModule::CoreAttn, RecomputeModule::MoeAct, RecomputeModule::Layernorm,
    RecomputeModule::MlaUpProj, RecomputeModule::Mlp,   RecomputeModule::Moe,
    RecomputeModule::SharedExperts};

std::string to_string(RecomputeModule m);  // Megatron's spelling: "core_attn", "moe_act", ...
bool parse_recompute_module(const std::string& text, RecomputeModule& out);
// "core_attn, moe_act, ..." for messages and --help.
std::string recompute_module_names();
// A comma-separated list ("moe_act,layernorm"; spaces around names allowed). On an unknown
// or empty name returns false and sets `bad` to it.
bool parse_recompute_module_list(const std::string& text, std::vector<RecomputeModule>& out,
                                 std::string& bad);
// "a,b"; with `separator` " ", Megatron-LM's nargs "+" words "a b".
std::string join_recompute_modules(const std::vector<RecomputeModule>& modules, const char* separator = ",");

// The set a block actually recomputes, as bits (1 << module). `selective` is whether the
// layout's recompute is `selective`; an empty list then means Megatron's default, core_attn.
// Otherwise nothing.
class RecomputeSet {
public:
    RecomputeSet() = default;
    RecomputeSet(bool selective, const std::vector<RecomputeModule>& modules);
    [[nodiscard]] bool has(RecomputeModule m) const { return (bits_ & bit(m)) != 0; }
    [[nodiscard]] bool empty() const { return bits_ == 0; }
    [[nodiscard]] bool only_core_attn() const { return bits_ == bit(RecomputeModule::CoreAttn); }

private:
    static unsigned bit(RecomputeModule m) { return 1u << static_cast<unsigned>(m); }
    unsigned bits_ = 0;
};

}  // namespace meshwork
