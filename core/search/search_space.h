// The space a search walks: the values of every setting, and the mesh shapes (tp, cp, pp,
// dp, ep, etp) that split it into independent tasks for the worker threads.
//
// Mesh sizes are the factorisations of the world (tp within a node unless allowed across);
// micro-batch sizes are the divisors of the global batch up to a bound. Sizes that some
// rule refuses stay in the space, so that the search can say how many layouts each rule
// removed (docs/search.md lists the space and the rules).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/layout/layout.h"
#include "core/search/search_options.h"
#include "core/search/stage_splits.h"

namespace meshwork::search {

struct PipelineOption {
    Schedule schedule = Schedule::OneFOneB;
    int vpp = 1;
};

struct MeshTask : AxisSizes {
    std::int64_t layouts = 0;  // candidates under this mesh shape
};

class SearchSpace {
  public:
    // Throws InputError (file "<flags>") when the request is impossible before any rule
    // runs: a world the cluster cannot hold or that does not fill whole nodes, a pinned
    // size that does not divide the world, constraints that leave nothing to consider.
    explicit SearchSpace(const SearchRequest& request);

    [[nodiscard]] const std::vector<MeshTask>& tasks() const { return tasks_; }
    [[nodiscard]] std::int64_t size() const { return size_; }

    [[nodiscard]] const std::vector<bool>& sequence_parallel(int tp) const {
        return tp > 1 ? sp_with_tp_ : sp_without_tp_;
    }
    [[nodiscard]] const std::vector<PipelineOption>& pipelines(int pp) const;
    [[nodiscard]] const std::vector<StageSplit>& splits(int chunks) const;
    [[nodiscard]] const std::vector<int>& zero_stages() const { return zero_; }  // ascending
    [[nodiscard]] const std::vector<Recompute>& recomputes() const { return recompute_; }
    [[nodiscard]] const std::vector<int>& micro_batches() const { return mbs_; }  // ascending
    // Candidates under one (schedule, vpp, split) of a task: zero × recompute × mbs.
    [[nodiscard]] std::int64_t split_block() const {
        return static_cast<std::int64_t>(zero_.size() * recompute_.size() * mbs_.size());
    }
    // Candidates under one sequence-parallel choice of a task with pipeline depth pp.
    [[nodiscard]] std::int64_t sp_block(int pp) const;

    [[nodiscard]] int max_pp() const { return max_pp_; }
    [[nodiscard]] int max_chunks() const { return max_chunks_; }

  private:
    std::vector<MeshTask> tasks_;
    std::int64_t size_ = 0;
    std::vector<bool> sp_with_tp_, sp_without_tp_;
    std::map<int, std::vector<PipelineOption>> pipelines_;
    std::map<int, std::vector<StageSplit>> splits_;
    std::vector<int> zero_;
    std::vector<Recompute> recompute_;
    std::vector<int> mbs_;
    int max_pp_ = 1;
    int max_chunks_ = 1;
};

// Divisors of n in increasing order.
std::vector<int> divisors(int n);

}  // namespace meshwork::search
