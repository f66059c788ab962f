// One worker's walk through the mesh tasks it takes: rules at the loop level where their
// inputs are fixed, the memory dominance that skips the cost model, and the cost model for
// the rest. Owns everything it writes, so workers share nothing but the atomics they are
// handed.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/cost/cost_model.h"
#include "core/search/feasibility.h"
#include "core/search/ranking.h"
#include "core/search/reject_reason.h"
#include "core/search/search_space.h"
#include "core/search/tuning.h"

namespace meshwork::search {

class SearchWorker {
  public:
    SearchWorker(const SearchRequest& request, const SearchSpace& space, const CostModel& cost,
                 std::size_t keep_best);

    // Walks task `index`; false when `stop` was raised before the task was finished.
    bool run_task(std::size_t index, const std::atomic<bool>& stop,
                  std::atomic<std::int64_t>& processed);

    [[nodiscard]] const RejectCounts& rejected() const { return rejected_; }
    [[nodiscard]] std::int64_t evaluated() const { return evaluated_; }
    [[nodiscard]] std::int64_t cost_model_calls() const { return calls_; }
    [[nodiscard]] const TopK& best() const { return best_; }
    [[nodiscard]] const TopK& closest() const { return closest_; }

  private:
    // zero × recompute × micro-batch for the candidate's mesh, pipeline and split.
    void run_split_block(Candidate& c, std::uint64_t first_ordinal);

    const SearchOptions& options_;
    const SearchSpace& space_;
    const CostModel& cost_;
    RuleContext rules_;
    Tuner tuner_;
    ParallelConfig parallel_;
    Placement placement_;
    TrainingConfig training_;
    Estimate estimate_;
    RejectCounts rejected_{};
    std::int64_t evaluated_ = 0;
    std::int64_t calls_ = 0;
    TopK best_;
    std::size_t keep_best_;  // best_'s capacity
    TopK closest_;
};

}  // namespace meshwork::search
