// Layout search: the best layouts for a model, a cluster, a world size and a global batch.
//
//     SearchRequest req{model, "llama3.1-405b", cluster, "dgx-h100", options};
//     SearchResult r = run_search(req, hooks);   // r.results best first
//
// The space (search_space.h) is cut into mesh shapes that worker threads take one at a
// time; each candidate runs the validation rules (feasibility.h), then the analytical cost
// model (core/cost), whose estimate does not allocate, so a search costs millions of
// layouts in seconds. Results rank by tokens/s, then lower peak memory; they do not depend
// on the number of threads. docs/search.md describes the space, the pruning and the rules.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include "core/cost/estimate.h"
#include "core/layout/layout.h"
#include "core/search/candidate.h"
#include "core/search/search_options.h"

namespace meshwork::search {

struct SearchHit {
    Layout layout;
    Candidate candidate;
    Estimate estimate;  // the full estimate, stages included
    double step_time_s = 0;
    double tokens_per_s = 0;
    double mfu = 0;
    std::int64_t peak_bytes = 0;  // peak memory per GPU on the worst stage
};

// A layout that was rejected only because it does not fit, and by how much.
struct NearMiss {
    Layout layout;
    Candidate candidate;
    std::int64_t peak_bytes = 0;
    std::int64_t overflow_bytes = 0;  // what it would need beyond the GPU's memory
    double tokens_per_s = 0;
};

struct SearchResult {
    std::vector<SearchHit> results;                // best first, at most top_k
    std::map<std::string, std::int64_t> rejected;  // layouts by reason (reject_reason.h)
    std::int64_t evaluated = 0;   // layouts that pass every rule and fit: the ranked ones
    std::int64_t space_size = 0;  // evaluated + rejected when the search ran to the end
    std::int64_t processed = 0;   // evaluated + rejected (less than space_size if cancelled)
    std::int64_t cost_model_calls = 0;
    std::vector<NearMiss> closest;  // the layouts that overflow memory least, first
    bool cancelled = false;
    int threads = 1;
    double elapsed_s = 0;
    std::string ranked_by = "cost_model";  // "cost_model+NAME" when a reranker ran
};

// Called on the thread that runs run_search, never concurrently.
using ProgressFn = std::function<void(std::int64_t done, std::int64_t total)>;
// Re-costs one layout more precisely than the analytical model (the simulator), filling
// `out` as CostModel::estimate does. Called on the calling thread.
using RerankFn = std::function<void(const Layout& layout, Estimate& out)>;

struct SearchHooks {
    std::stop_token stop;  // request_stop() ends the search early with cancelled = true
    ProgressFn progress;
    std::chrono::milliseconds progress_interval{50};
    RerankFn rerank;
    int rerank_top = 0;                  // candidates the reranker re-costs; 0: 4 × top_k
    std::string rerank_name = "rerank";  // SearchResult::ranked_by is "cost_model+" this
};

// Throws InputError for an impossible request (SearchSpace); a search in which nothing is
// feasible returns no results and the counts by reason.
SearchResult run_search(const SearchRequest& request, const SearchHooks& hooks = {});

}  // namespace meshwork::search
