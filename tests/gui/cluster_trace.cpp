#include "tests/gui/cluster_trace.h"

#include <algorithm>
#include <random>
#include <vector>

#include "core/common/resources.h"
#include "core/layout/layout_json.h"
#include "profiler/store/trace_writer.h"

namespace meshwork::gui::test {

Layout cluster_trace_layout(const ClusterTraceShape& shape) {
    Layout layout = load_layout(resource_dir() + "/layouts/" + shape.layout + ".json");
    auto& mesh = layout.parallel.mesh;
    if (shape.tp > 0) mesh.tp = shape.tp;
    if (shape.dp > 0) mesh.dp = shape.dp;
    if (shape.pp > 0) mesh.pp = shape.pp;
    layout.gpus = mesh.tp * mesh.cp * mesh.dp * mesh.pp;
    return layout;
}

std::int64_t write_cluster_trace(const ClusterTraceShape& shape, const std::string& path) {
    const Layout layout = cluster_trace_layout(shape);
    const DeviceMesh mesh = layout.mesh();
    const int ranks = mesh.world_size();
    auto writer = profiler::TraceWriter::create(path);
    TraceRunInfo info;
    info.source = "meshwork-sim";
    info.layout_json = layout_to_json(layout).dump();
    writer->set_run_info(info);
    struct Tracks {
        int compute, tp, dp, host;
    };
    std::vector<Tracks> tracks;
    for (int r = 0; r < ranks; ++r) {
        tracks.push_back({writer->add_track({r, TrackKind::ComputeStream, 0, "compute"}),
                          writer->add_track({r, TrackKind::CommStream, 0, "comm:tp"}),
                          writer->add_track({r, TrackKind::CommStream, 1, "comm:dp"}),
                          writer->add_track({r, TrackKind::Host, 0, "host"})});
    }
    const auto tp_groups = mesh.groups(Axis::Tp);
    const auto dp_groups = mesh.groups(Axis::Dp);
    std::mt19937 rng(shape.seed);
    std::uniform_real_distribution<double> jitter(0.9, 1.1);
    const char* const ops[] = {"attention.qkv", "attention.core", "mlp.up", "mlp.down"};
    std::int64_t written = 0;
    std::vector<std::int64_t> t(static_cast<std::size_t>(ranks), 0);
    std::int64_t step_start = 0;
    auto emit = [&](int rank, int track, EventKind kind, std::string name, std::int64_t start, std::int64_t end,
                    int step, int group_size) {
        TraceEvent e;
        e.rank = rank;
        e.track = track;
        e.kind = kind;
        e.name = std::move(name);
        e.start_ns = start;
        e.end_ns = end;
        e.step = step;
        e.group_size = group_size;
        if (kind == EventKind::Communication) e.bytes = (end - start) * 100;
        writer->add_event(e);
        ++written;
    };
    for (int step = 0; step < shape.steps; ++step) {
        std::fill(t.begin(), t.end(), step_start);
        for (int k = 0; k < shape.kernels_per_step; ++k) {
            for (int r = 0; r < ranks; ++r) {
                const double slow = r == shape.slow_rank ? shape.slow_factor : 1.0;
                const auto dur = static_cast<std::int64_t>(20'000 * jitter(rng) * slow);
                auto& now = t[static_cast<std::size_t>(r)];
                emit(r, tracks[static_cast<std::size_t>(r)].compute, EventKind::Compute,
                     "block." + std::to_string(k / 4) + "." + ops[k % 4], now, now + dur, step, 0);
                now += dur;
            }
            if (k % 4 != 3) continue;
            // All-reduce over each TP group: every member leaves when the last has arrived.
            for (const auto& group : tp_groups) {
                std::int64_t last = 0;
                for (int r : group) last = std::max(last, t[static_cast<std::size_t>(r)]);
                for (int r : group) {
                    auto& now = t[static_cast<std::size_t>(r)];
                    emit(r, tracks[static_cast<std::size_t>(r)].tp, EventKind::Communication, "all_reduce(tp)", now,
                         last + 4'000, step, static_cast<int>(group.size()));
                    now = last + 4'000;
                }
            }
        }
        // The gradients' reduce-scatter over each DP group closes the step.
        std::int64_t step_end = step_start;
        for (const auto& group : dp_groups) {
            std::int64_t last = 0;
            for (int r : group) last = std::max(last, t[static_cast<std::size_t>(r)]);
            for (int r : group) {
                auto& now = t[static_cast<std::size_t>(r)];
                emit(r, tracks[static_cast<std::size_t>(r)].dp, EventKind::Communication, "reduce_scatter(dp)", now,
                     last + 30'000, step, static_cast<int>(group.size()));
                now = last + 30'000;
                step_end = std::max(step_end, now);
            }
        }
        for (int r = 0; r < ranks; ++r) {
            emit(r, tracks[static_cast<std::size_t>(r)].host, EventKind::Marker, "step " + std::to_string(step),
                 step_start, t[static_cast<std::size_t>(r)], step, 0);
        }
        step_start = step_end + 10'000;
    }
    writer->close();
    return written;
}

}  // namespace meshwork::gui::test
