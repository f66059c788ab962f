// The rules of validate_layout, applied on plain values so the search can test millions of
// candidates without building a Layout or a message. The rules themselves live once, in
// core/layout/layout_rules.h; this file maps them to the search's reject reasons.
// tests/core/search/tst_feasibility.cpp compares the two on thousands of sampled layouts,
// so that a rule added to one and not the other fails a test.
//
// Each check returns the first rule it finds broken, in the order first_violation() runs
// them; the search runs the same checks at the level of its loops where their inputs are
// fixed, so the counts by reason are those first_violation() would give layout by layout.
#pragma once

#include <cstdint>

#include "core/model/model_spec.h"
#include "core/search/candidate.h"
#include "core/search/reject_reason.h"
#include "core/search/search_options.h"

namespace meshwork::search {

// What the rules read from the model and the job.
struct RuleContext {
    int heads = 1, kv_heads = 1;
    int global_kv_heads = 0;  // Gemma 4's full-attention blocks' own KV heads; 0 = none
    bool uses_mla = false;
    bool has_dense_mlp = true;
    std::int64_t ffn_hidden = 1;
    int layers = 1;
    bool moe = false;
    int experts = 0;
    std::int64_t expert_ffn_hidden = 1;
    int seq_length = 1;
    int global_batch_size = 1;
};
RuleContext rule_context(const ModelSpec& model, const SearchOptions& options);

// Heads, KV heads and MLP width against tp.
Reject check_tensor(const RuleContext& r, int tp);
// pp against the number of layers.
Reject check_pipeline_depth(const RuleContext& r, int pp);
// ep and etp against the experts and the dense ranks they fold into.
Reject check_experts(const RuleContext& r, int tp, int cp, int dp, int ep, int etp);
// The sequence against cp (causal load balancing) and, with SP, against tp.
Reject check_sequence(const RuleContext& r, int tp, int cp, bool sequence_parallel);
// Schedule against pp and vpp (without the micro-batch count).
Reject check_schedule(int pp, int vpp, Schedule schedule);
// The layer split over pp·vpp chunks.
Reject check_split(const RuleContext& r, int chunks, const StageSplit& split);
// Global batch against dp·mbs, and the interleaved schedule's micro-batch count.
Reject check_batch(const RuleContext& r, int dp, int pp, int mbs, Schedule schedule);
// Search policy, not a validation error: ZeRO-2/3 with pipeline parallelism.
Reject check_zero(int pp, int zero_stage);

// Every check above in the search's order; Reject::None when the candidate passes.
Reject first_violation(const RuleContext& r, const Candidate& c);

}  // namespace meshwork::search
