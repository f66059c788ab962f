// What a layout search looks for: the fixed job (world size, batch, sequence, dtype), the
// constraints a user places on the space, and the bounds of the space itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cluster/cluster_spec.h"
#include "core/layout/layout.h"
#include "core/layout/layout_rules.h"
#include "core/search/tuning.h"

namespace meshwork::search {

// Values the user pins (`--fix tp=8`); an unset field is searched.
struct FixedSettings {
    std::optional<int> tp, pp, dp, cp, ep, etp, vpp, mbs, zero;
    std::optional<Schedule> schedule;
    std::optional<Recompute> recompute;
    std::optional<bool> sequence_parallel;
};

struct SearchOptions {
    // The job.
    int gpus = 0;
    int global_batch_size = 0;  // sequences per step
    int seq_length = 0;         // tokens per sequence
    DType dtype = DType::Bf16;
    // Gradients kept and reduced in bf16 (the job's framework setting, like the dtype).
    bool grad_reduce_in_bf16 = false;
    // ZeRO-3 candidates keep their shards as PyTorch FSDP does (training.fsdp_fp32_shards): the
    // job's framework, like the dtype; candidates of other stages are unaffected.
    bool fsdp_fp32_shards = false;
    // Whether a candidate of `zero_stage` keeps fp32 shards: the job's setting where it applies.
    [[nodiscard]] bool fp32_shards_at(int zero_stage) const {
        return fsdp_fp32_shards && rules::fsdp_fp32_shards_need_zero3(true, zero_stage);
    }
    // The speed-only knobs (TP communication overlap, data-parallel overlaps, MoE dispatcher
    // and all-to-all overlap, recompute modules of selective candidates): each one unset is
    // searched per candidate (core/search/tuning.h), each one set is pinned.
    KnobPins knobs;
    std::string order{kDefaultAxisOrder};  // rank order of every layout (Megatron's default)

    // Constraints.
    FixedSettings fixed;
    int max_tp = 0;  // 0: no limit other than the node (or the world)
    bool allow_cross_node_tp = false;
    double min_mfu = 0;  // layouts below are rejected as "min_mfu"

    // Bounds of the space. Micro-batch sizes are the divisors of the global batch up to
    // max_micro_batch; vpp runs 2..max_vpp for the interleaved schedule; the first and the
    // last model chunk may each hold up to max_end_lighter_layers layers fewer than the
    // others (they also hold the embedding and the LM head).
    int max_micro_batch = 16;
    int max_vpp = 8;
    int max_end_lighter_layers = 2;

    // Execution.
    int top_k = 10;
    int threads = 0;  // 0: std::thread::hardware_concurrency()
    // Skip the cost model where memory is known to overflow: a layout that does not fit
    // at micro-batch b does not fit at any larger b, nor at a lower ZeRO stage. Results
    // are identical either way (tests/core/search); off only to measure what it saves.
    bool memory_pruning = true;
};

// A search: the model and the cluster (with the names they were loaded by, kept in the
// layouts the search returns) and the options.
struct SearchRequest {
    ModelSpec model;
    std::string model_ref;
    ClusterSpec cluster;
    std::string cluster_ref;
    SearchOptions options;
};

// Applies one "key=value" constraint (keys: fix_keys()). Throws InputError, field "--fix",
// for an unknown key or a value that does not parse.
void apply_fix(const std::string& assignment, FixedSettings& fixed);
// The keys apply_fix accepts, comma-separated, for help texts and messages.
const char* fix_keys();

}  // namespace meshwork::search
