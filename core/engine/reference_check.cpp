#include "core/engine/reference_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/engine/tensor.h"

namespace meshwork::engine {

std::string Mismatch::to_string() const {
    std::ostringstream o;
    if (on_other_rank) {
        o << "a mismatch on rank " << rank << " (reported there)";
        return o.str();
    }
    o << tensor;
    if (tensor == "loss") o << " of step " << step;
    o << " on rank " << rank << ": relative error " << rel_error;
    return o.str();
}

Layout reference_layout(const Layout& layout) {
    Layout r = layout;
    r.parallel.mesh.tp = r.parallel.mesh.pp = r.parallel.mesh.dp = r.parallel.mesh.cp = 1;
    r.parallel.mesh.ep = r.parallel.mesh.etp = 1;
    r.parallel.vpp = 1;
    r.parallel.sequence_parallel = false;
    r.placement = {};
    r.gpus = 1;
    r.training.schedule = Schedule::OneFOneB;
    r.training.zero_stage = 0;
    return r;
}

std::map<std::string, std::vector<float>> download_params(Backend& be, ParamStore& store) {
    std::map<std::string, std::vector<float>> out;
    for (int id = 0; id < static_cast<int>(store.all().size()); ++id) {
        out[store.info(id).name] = download(be, store.value(id), store.info(id).count(), be.compute_stream());
    }
    return out;
}

std::optional<Mismatch> compare_params(Backend& be, ParamStore& store, const ReferenceState& ref,
                                       int world_rank, double tol) {
    for (int id = 0; id < static_cast<int>(store.all().size()); ++id) {
        const ParamInfo& p = store.info(id);
        const auto it = ref.params.find(p.name);
        if (it == ref.params.end()) return Mismatch{p.name + " (absent from the reference)", world_rank, 0, 1.0};
        const auto mine = download(be, store.value(id), p.count(), be.compute_stream());
        double diff = 0, scale = 0;
        for (int r = 0; r < p.rows; ++r) {
            for (int c = 0; c < p.cols; ++c) {
                const float want = it->second[static_cast<std::size_t>(p.row_begin + r) * p.full_cols +
                                              static_cast<std::size_t>(p.col_begin + c)];
                const float got = mine[static_cast<std::size_t>(r) * p.cols + c];
                diff += (static_cast<double>(got) - want) * (static_cast<double>(got) - want);
                scale += static_cast<double>(want) * want;
            }
        }
        const double rel = scale > 0 ? std::sqrt(diff / scale) : std::sqrt(diff);
        if (!(rel <= tol)) return Mismatch{p.name, world_rank, 0, rel};
    }
    return std::nullopt;
}

std::optional<Mismatch> compare_losses(const std::vector<double>& losses,
                                       const ReferenceState& ref, double tol) {
    for (std::size_t s = 0; s < losses.size() && s < ref.losses.size(); ++s) {
        const double want = ref.losses[s];
        const double rel = std::fabs(losses[s] - want) / std::max(std::fabs(want), 1e-30);
        if (!(rel <= tol)) return Mismatch{"loss", 0, static_cast<int>(s) + 1, rel};
    }
    return std::nullopt;
}

}  // namespace meshwork::engine
