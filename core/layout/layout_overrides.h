// Layout settings given as command-line flags (CLI.md): each set field overrides the file.
// Kept in core so that the CLI and the GUI build layouts the same way.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/layout/layout.h"

namespace meshwork {

struct LayoutOverrides {
    std::optional<std::string> model, cluster;
    std::optional<int> gpus, nodes;
    std::optional<int> tp, pp, dp, cp, ep, etp, vpp;
    std::optional<std::string> order;
    std::optional<int> mbs, gbs, seq;
    std::optional<std::string> schedule, recompute, dtype;
    // Megatron-LM's --recompute-modules, comma-separated ("moe_act,layernorm"); "" clears the
    // list (Megatron's default, core_attn). Implies recompute selective when none is set.
    std::optional<std::string> recompute_modules;
    std::optional<bool> sequence_parallel;
    std::optional<int> zero;
    std::optional<int> zero_replicas;  // hybrid sharding: replicas of the ZeRO shard group
    std::optional<std::string> fsdp_fp32_shards;  // "on" or "off": ZeRO-3 shards as PyTorch FSDP keeps them
    std::optional<std::string> flash_attention;  // "on" or "off"
    std::optional<std::string> tp_comm_overlap;  // "none", "pipe" or "ring"
    std::optional<std::string> overlap_grad_reduce, overlap_param_gather;  // "on" or "off"
    std::optional<std::string> grad_reduce_dtype;  // "fp32" or "bf16"
    std::optional<std::string> moe_dispatcher;     // "allgather", "alltoall" or "flex"
    std::optional<std::string> moe_flex_backend;   // "deepep" or "hybridep" (flex only)
    std::optional<std::string> moe_a2a_overlap;    // "on" or "off"
    std::optional<std::string> fp8_recipe;         // "tensorwise", "blockwise" or "mxfp8"
    std::optional<std::string> attention_kernel;   // "fused" or "sdpa"
    std::optional<std::string> cuda_graphs;        // "none", "per-layer" or "full-iteration"
    std::optional<std::string> cuda_graph_modules; // comma- or space-separated Megatron-LM module names; "" the whole layer
    std::optional<int> offload_activation_layers;  // Megatron-LM's --cpu-offloading-num-layers
    std::optional<double> moe_rank_capacity_factor;  // Megatron-LM's moe_expert_rank_capacity_factor; 0: none
    std::optional<std::vector<int>> layers_per_stage;
    // Megatron-LM's splits (core/layout/pipeline_split.h), computed after the mesh flags:
    // the embedding / the LM head and loss counted as a layer, or uneven first / last ranks.
    bool account_for_embedding = false, account_for_loss = false;
    std::optional<int> first_stage_layers, last_stage_layers;

    [[nodiscard]] bool empty() const;
};

// Builds the layout from an optional file and the flags. Without a file, --model is
// required and the cluster defaults to cpu-local for the tiny models, dgx-h100 otherwise.
// Flag errors name the field "<flags>: --flag". dp, when not given, is
// world / (tp·pp·cp); gpus, when not given, follows from --nodes or from the axes.
Layout build_layout(const std::optional<std::string>& layout_file, const LayoutOverrides& flags);

// Flag values that `search` takes as job settings too, read once for both; each refuses a
// bad value with an InputError naming "<flags>: --flag".
// "on" → true, "off" → false.
bool parse_on_off_flag(const std::string& value, const char* flag);
// --recompute-modules: a comma-separated list of Megatron-LM module names into `out`.
void parse_recompute_modules_flag(const std::string& value, std::vector<RecomputeModule>& out);
// --moe-dispatcher and --moe-flex-backend (given or not); the backend needs flex.
void parse_moe_dispatch_flags(const std::optional<std::string>& dispatcher, const std::optional<std::string>& backend,
                              MoeDispatcher& dispatcher_out, MoeFlexBackend& backend_out);

}  // namespace meshwork
