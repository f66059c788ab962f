#include "core/engine/params.h"

#include "core/common/error.h"
#include "core/engine/counter_rng.h"

namespace meshwork::engine {

int ParamStore::add(ParamInfo p) {
    p.rows = p.full_rows;
    p.cols = p.full_cols;
    if (p.split != SplitDim::None && p.parts > 1) {
        int& dim = p.split == SplitDim::Rows ? p.rows : p.cols;
        if (dim % p.parts != 0) {
            throw InputError("<engine>", p.name,
                             std::to_string(dim) + " does not split into " +
                                 std::to_string(p.parts) + " equal shards");
        }
        dim /= p.parts;
        (p.split == SplitDim::Rows ? p.row_begin : p.col_begin) = dim * p.index;
    }
    const int g = static_cast<int>(p.group);
    p.offset = counts_[g];
    counts_[g] += p.count();
    params_.push_back(std::move(p));
    return static_cast<int>(params_.size()) - 1;
}

void ParamStore::finalize(Backend& be, Stream s, std::uint64_t seed, float init_std) {
    for (int g = 0; g < kReduceGroups; ++g) {
        {
            const MemoryKindScope kind(be, MemoryKind::Weights);
            values_[g] = Floats(be, counts_[g]);
        }
        {
            const MemoryKindScope kind(be, MemoryKind::Gradients);
            grads_[g] = Floats(be, counts_[g]);
        }
        be.fill(grads_[g].data(), counts_[g], 0.0f, s);
    }
    for (int id = 0; id < static_cast<int>(params_.size()); ++id) {
        const ParamInfo& p = params_[static_cast<std::size_t>(id)];
        float* v = value(id);
        if (p.init == ParamInit::Ones) {
            be.fill(v, p.count(), 1.0f, s);
            continue;
        }
        const std::uint64_t stream = stream_seed(seed, p.name.c_str());
        const auto full_cols = static_cast<std::uint64_t>(p.full_cols);
        if (p.cols == p.full_cols) {
            be.fill_normal(v, p.count(), stream, static_cast<std::uint64_t>(p.row_begin) * full_cols,
                           init_std, s);
        } else {
            for (int r = 0; r < p.rows; ++r) {
                const auto first = static_cast<std::uint64_t>(p.row_begin + r) * full_cols +
                                   static_cast<std::uint64_t>(p.col_begin);
                be.fill_normal(v + static_cast<std::size_t>(r) * p.cols, static_cast<std::size_t>(p.cols),
                               stream, first, init_std, s);
            }
        }
    }
}

float* ParamStore::value(int id) {
    const ParamInfo& p = info(id);
    return values_[static_cast<int>(p.group)].data() + p.offset;
}

float* ParamStore::grad(int id) {
    const ParamInfo& p = info(id);
    return grads_[static_cast<int>(p.group)].data() + p.offset;
}

void ParamStore::zero_grads(Backend& be, Stream s) {
    for (int g = 0; g < kReduceGroups; ++g) be.fill(grads_[g].data(), counts_[g], 0.0f, s);
}

}  // namespace meshwork::engine
