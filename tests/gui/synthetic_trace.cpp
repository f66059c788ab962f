#include "tests/gui/synthetic_trace.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "profiler/store/trace_writer.h"

namespace meshwork::gui::test {

namespace {

// Calls add_lane(rank, kind, index, name) -> lane id, then add_event(lane, event) per event.
template <class AddLane, class AddEvent>
void generate(const SyntheticTraceShape& shape, AddLane add_lane, AddEvent add_event) {
    constexpr int kLanesPerRank = 3;
    const char* const ops[] = {"attention.qkv", "attention.core", "attention.out", "mlp.up", "mlp.down", "norm"};
    const char* const collectives[] = {"all_reduce(tp)", "reduce_scatter(dp)", "all_gather(dp)", "send(pp)", "recv(pp)"};
    std::vector<std::string> op_names;
    for (int layer = 0; layer < 8; ++layer) {
        for (const char* op : ops) {
            op_names.push_back("block." + std::to_string(layer) + "." + op + ".fwd");
            op_names.push_back("block." + std::to_string(layer) + "." + op + ".bwd");
        }
    }
    const std::int64_t per_lane = shape.events / (shape.ranks * (kLanesPerRank + (shape.host_depth > 0 ? 1 : 0)));
    const char* const host_ops[] = {"aten::linear", "aten::addmm", "aten::layer_norm", "aten::softmax", "aten::gelu"};
    for (int r = 0; r < shape.ranks; ++r) {
        const int compute = add_lane(r, TrackKind::ComputeStream, 0, "compute");
        const int tp = add_lane(r, TrackKind::CommStream, 0, "comm:tp");
        const int dp = add_lane(r, TrackKind::CommStream, 1, "comm:dp");
        std::mt19937 rng(shape.seed + static_cast<std::uint32_t>(r));
        // Log-uniform durations from ~1 µs to ~1 ms: a few long kernels among many short ones.
        std::uniform_real_distribution<double> log_dur(3.0, 6.0);
        std::uniform_real_distribution<double> log_gap(1.0, 4.5);
        for (const int lane : {compute, tp, dp}) {
            std::int64_t t = r * 1000;
            for (std::int64_t i = 0; i < per_lane; ++i) {
                TraceEvent e;
                e.rank = r;
                e.track = lane;
                e.step = static_cast<int>(i / 20000);
                e.micro_batch = static_cast<int>((i / 200) % 8);
                e.layer = static_cast<int>((i / 12) % 8);
                const auto dur = static_cast<std::int64_t>(std::pow(10.0, log_dur(rng)));
                if (lane == compute) {
                    e.kind = EventKind::Compute;
                    e.name = op_names[static_cast<std::size_t>(i) % op_names.size()];
                    e.flops = static_cast<double>(dur) * 4e5;
                } else {
                    e.kind = EventKind::Communication;
                    e.name = collectives[static_cast<std::size_t>(i + (lane == dp ? 1 : 0)) % 5];
                    e.bytes = dur * 200;
                }
                e.start_ns = t;
                e.end_ns = t + dur;
                add_event(lane, e);
                t = e.end_ns + static_cast<std::int64_t>(std::pow(10.0, log_gap(rng)));
            }
        }
        if (shape.host_depth <= 0) continue;
        // The innermost calls first (per_lane of them), then each depth above encloses
        // kHostFanout consecutive calls of the one below, 100 ns either side.
        std::vector<std::vector<TraceEvent>> depth(static_cast<std::size_t>(shape.host_depth));
        auto& inner = depth.back();
        std::int64_t t = r * 1000;
        for (std::int64_t i = 0; i < per_lane; ++i) {
            TraceEvent e;
            e.rank = r;
            e.kind = EventKind::Marker;
            e.name = host_ops[static_cast<std::size_t>(i) % 5];
            e.step = static_cast<int>(i / 20000);
            e.start_ns = t;
            e.end_ns = t + static_cast<std::int64_t>(std::pow(10.0, log_dur(rng)));
            inner.push_back(e);
            // Room for the enclosing slices' 100 ns a side at every depth above.
            t = e.end_ns + 200 * shape.host_depth + static_cast<std::int64_t>(std::pow(10.0, log_gap(rng)));
        }
        for (int d = shape.host_depth - 2; d >= 0; --d) {
            const auto& below = depth[static_cast<std::size_t>(d) + 1];
            auto& here = depth[static_cast<std::size_t>(d)];
            for (std::size_t i = 0; i < below.size(); i += kHostFanout) {
                const std::size_t last = std::min(below.size(), i + kHostFanout) - 1;
                TraceEvent e = below[i];
                e.name = d == 0 ? "nn.Module: block" : "aten::" + std::string(d == 1 ? "matmul" : "op");
                e.start_ns = below[i].start_ns - 100 * (shape.host_depth - 1 - d);
                e.end_ns = below[last].end_ns + 100 * (shape.host_depth - 1 - d);
                here.push_back(e);
            }
        }
        for (int d = 0; d < shape.host_depth; ++d) {
            const std::string name = d == 0 ? std::string("host") : "host · depth " + std::to_string(d);
            const int lane = add_lane(r, TrackKind::Host, d, name.c_str());
            for (auto& e : depth[static_cast<std::size_t>(d)]) {
                e.track = lane;
                add_event(lane, e);
            }
        }
    }
}

}  // namespace

std::shared_ptr<MemoryTimelineSource> make_synthetic_trace(const SyntheticTraceShape& shape) {
    auto source = std::make_shared<MemoryTimelineSource>();
    const auto per_lane = static_cast<std::size_t>(shape.events / (shape.ranks * 3));  // a hint only
    generate(
        shape,
        [&](int rank, TrackKind kind, int, const char* name) {
            const int lane = source->add_lane({rank, kind, name});
            source->reserve(lane, per_lane);
            return lane;
        },
        [&](int lane, const TraceEvent& e) { source->add_event(lane, e); });
    return source;
}

void write_synthetic_trace(const SyntheticTraceShape& shape, const std::string& path) {
    auto writer = profiler::TraceWriter::create(path);
    TraceRunInfo info;
    info.source = "synthetic";
    info.world_size = shape.ranks;
    writer->set_run_info(info);
    generate(
        shape,
        [&](int rank, TrackKind kind, int index, const char* name) { return writer->add_track({rank, kind, index, name}); },
        [&](int, const TraceEvent& e) { writer->add_event(e); });
    writer->close();
}

}  // namespace meshwork::gui::test
