#include "core/engine/memory_estimate.h"

#include <algorithm>

#include <unistd.h>

#include "core/engine/model/dims.h"
#include "core/engine/trainer.h"
#include "core/schedule/pipeline_schedule.h"

namespace meshwork::engine {

namespace {
// Floats one block keeps per micro-batch (the caches of attention.cpp, mlp.cpp, moe.cpp).
double block_activation_floats(const ModelDims& d, bool moe) {
    const double rows = d.rows, region = d.region_rows, H = d.hidden;
    const double sall = static_cast<double>(d.cp) * d.seq_local;
    double a = region * H + rows * H + 2 * rows * d.q_cols() + 2.0 * d.mbs * sall * d.kv_cols() +
               static_cast<double>(d.mbs) * d.heads_local * d.seq_local * sall + region;
    if (moe) {
        const double n = rows / d.tp, assigned = n * d.top_k;  // balanced routing assumed
        a += region * H + n * H + 2 * assigned * H + 3 * assigned * d.expert_ffn + region;
    } else {
        a += region * H + rows * H + 3 * rows * d.ffn_local + region;
    }
    return a;
}
}  // namespace

std::vector<RankMemory> estimate_memory(const Layout& layout, const EngineOptions& options) {
    const ModelDims d = make_dims(layout, options);
    const DeviceMesh mesh = layout.mesh();
    const auto& m = layout.parallel.mesh;
    const int pp = m.pp, vpp = layout.parallel.vpp;
    const PipelineSchedule sched = build_pipeline_schedule(layout.training.schedule, pp, vpp,
                                                           layout.num_micro_batches());
    const auto layers = layout.stage_layers();
    const auto first = layout.stage_first_layer();
    std::vector<RankMemory> out;
    for (int r = 0; r < mesh.world_size(); ++r) {
        const RankCoords c = mesh.coords(r);
        const ParamStore store = plan_params(layout, d, c);
        RankMemory rm;
        rm.rank = r;
        rm.params_bytes = store.total_count() * sizeof(float);
        rm.grads_bytes = rm.params_bytes;
        std::size_t adam = 0;
        for (ReduceGroup g : {ReduceGroup::Dense, ReduceGroup::Expert}) {
            const int shards = layout.training.zero_stage >= 1
                                   ? mesh.axis_size(g == ReduceGroup::Dense ? Axis::DpCp : Axis::Edp)
                                   : 1;
            adam += 2 * ((store.group_count(g) + static_cast<std::size_t>(shards) - 1) / static_cast<std::size_t>(shards));
        }
        rm.optimizer_bytes = adam * sizeof(float);
        // Activations: the heaviest of this rank's chunks per micro-batch, times the passes
        // in flight.
        double per_mb = 0;
        for (int v = 0; v < vpp; ++v) {
            const int gc = v * pp + c.pp;
            double a = 0;
            for (int b = first[static_cast<std::size_t>(gc)];
                 b < first[static_cast<std::size_t>(gc)] + layers[static_cast<std::size_t>(gc)]; ++b) {
                a += block_activation_floats(d, layout.model.is_moe_block(b));
            }
            if (gc == pp * vpp - 1) a += d.region_rows * static_cast<double>(d.hidden) + static_cast<double>(d.rows) * d.hidden + static_cast<double>(d.rows) * d.vocab_local;
            per_mb = std::max(per_mb, a);
        }
        const double in_flight = sched.max_in_flight(c.pp);
        rm.activations_bytes = static_cast<std::size_t>(per_mb * in_flight * sizeof(float));
        // Transients: about one micro-batch of one chunk's activations during a pass.
        const std::size_t transient = static_cast<std::size_t>(per_mb * sizeof(float));
        rm.peak_bytes = rm.params_bytes + rm.grads_bytes + rm.optimizer_bytes +
                        rm.activations_bytes + transient;
        out.push_back(rm);
    }
    return out;
}

double host_memory_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0 ? static_cast<double>(pages) * static_cast<double>(page_size) : 0.0;
}

}  // namespace meshwork::engine
