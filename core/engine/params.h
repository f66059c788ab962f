// The parameters of one rank: each is a shard of a full (unsharded) tensor, and knows which
// shard, so that initialisation and the reference check can address the full tensor.
// Values and gradients of each reduce group live in one flat buffer, so data-parallel
// buckets and ZeRO shards are plain ranges of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/tensor.h"

namespace meshwork::engine {

enum class SplitDim { None, Rows, Cols };
enum class ParamInit { Normal, Ones };
// Which group sums the gradient across replicas: dense weights over dp×cp, expert weights
// over the expert-data-parallel group.
enum class ReduceGroup { Dense = 0, Expert = 1 };
inline constexpr int kReduceGroups = 2;

struct ParamInfo {
    std::string name;           // "block.2.attention.wq", "embedding", ...
    int full_rows = 0, full_cols = 0;
    SplitDim split = SplitDim::None;
    int parts = 1, index = 0;   // this rank holds shard `index` of `parts`
    ParamInit init = ParamInit::Normal;
    ReduceGroup group = ReduceGroup::Dense;
    // The gradient is a partial sum over the TP group (a replicated weight that each TP rank
    // sees different tokens of: norms under sequence parallelism, the MoE router).
    bool tp_partial_grad = false;
    bool weight_decay = true;
    // Filled by ParamStore:
    int rows = 0, cols = 0;     // the shard
    int row_begin = 0, col_begin = 0;
    std::size_t offset = 0;     // in the group's flat buffers
    [[nodiscard]] std::size_t count() const { return static_cast<std::size_t>(rows) * cols; }
};

class ParamStore {
public:
    // Registers a parameter; returns its id. Shards are even splits of the split dimension.
    int add(ParamInfo info);
    // Allocates and initialises: Normal from the counter stream of (seed, name) with
    // standard deviation init_std over the full tensor, Ones for norm weights.
    void finalize(Backend& be, Stream s, std::uint64_t seed, float init_std);

    [[nodiscard]] const ParamInfo& info(int id) const { return params_[static_cast<std::size_t>(id)]; }
    [[nodiscard]] const std::vector<ParamInfo>& all() const { return params_; }
    [[nodiscard]] float* value(int id);
    [[nodiscard]] float* grad(int id);
    [[nodiscard]] Floats& values(ReduceGroup g) { return values_[static_cast<int>(g)]; }
    [[nodiscard]] Floats& grads(ReduceGroup g) { return grads_[static_cast<int>(g)]; }
    [[nodiscard]] std::size_t group_count(ReduceGroup g) const { return counts_[static_cast<int>(g)]; }
    [[nodiscard]] std::size_t total_count() const { return counts_[0] + counts_[1]; }
    void zero_grads(Backend& be, Stream s);

private:
    std::vector<ParamInfo> params_;
    std::size_t counts_[kReduceGroups] = {0, 0};
    Floats values_[kReduceGroups];
    Floats grads_[kReduceGroups];
};

}  // namespace meshwork::engine
