#include "profiler/analysis/trace_stats.h"

#include "profiler/analysis/memory_stats.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "profiler/analysis/event_classify.h"
#include "profiler/analysis/intervals.h"
#include "profiler/analysis/step_times.h"

namespace meshwork::profiler {

namespace {

constexpr double kNsPerS = 1e9;

struct StepIntervals {
    std::vector<Interval> all, compute, comm;
};

struct RankAccumulator {
    std::vector<Interval> compute, comm, mem, all, outside_steps;
    std::map<int, StepIntervals> by_step;
    std::int64_t events = 0;
};

}  // namespace

std::string_view collective_label(Collective c) { return c == Collective::None ? "other" : to_string(c); }

TraceStats compute_stats(const TraceReader& trace, std::size_t top_kernels, int warmup_steps) {
    std::map<int, RankAccumulator> ranks;
    std::unordered_map<std::string, KernelStats> kernels;
    struct CollKey {
        Collective collective;
        std::int64_t bytes;
        int group;
        // By the collective's name ("other" for None), as the report lists them.
        bool operator<(const CollKey& o) const {
            const auto a = collective_label(collective), b = collective_label(o.collective);
            return std::tie(a, bytes, group) < std::tie(b, o.bytes, o.group);
        }
    };
    std::map<CollKey, std::pair<std::int64_t, std::int64_t>> colls;  // count, total ns

    trace.for_each_event([&](const TraceEvent& e) {
        if (!is_device_work(e.kind)) return;
        auto& r = ranks[e.rank];
        ++r.events;
        const Interval iv{e.start_ns, e.end_ns};
        r.all.push_back(iv);
        if (e.kind == EventKind::Compute) r.compute.push_back(iv);
        else if (e.kind == EventKind::Communication) r.comm.push_back(iv);
        else r.mem.push_back(iv);
        if (e.step < 0) {
            r.outside_steps.push_back(iv);
        } else {
            auto& st = r.by_step[e.step];
            st.all.push_back(iv);
            if (e.kind == EventKind::Compute)
                st.compute.push_back(iv);
            else if (e.kind == EventKind::Communication)
                st.comm.push_back(iv);
        }

        auto& k = kernels[e.name];
        if (k.count == 0) {
            k.name = e.name;
            k.kind = e.kind;
        }
        const double d = static_cast<double>(e.end_ns - e.start_ns) / kNsPerS;
        ++k.count;
        k.total_s += d;
        k.max_s = std::max(k.max_s, d);
        k.flops += e.flops;

        // Every communication event is a collective call, sized or not: a trace without
        // message sizes still shows its collectives, with the size unknown.
        if (e.kind == EventKind::Communication) {
            auto& slot = colls[{e.collective, std::max<std::int64_t>(e.bytes, 0), e.group_size}];
            ++slot.first;
            slot.second += e.end_ns - e.start_ns;
        }
    });

    TraceStats out;
    for (auto& [rank, acc] : ranks) {
        RankStats s;
        s.rank = rank;
        s.events = acc.events;
        // Per step first; the whole-trace figures below then consume the rank's intervals.
        std::int64_t step_span = 0, step_idle = 0;
        StepTimes sum;
        std::size_t warmup_left = warmup_items(acc.by_step.size(), warmup_steps);
        for (auto& [step, ivs] : acc.by_step) {
            const StepTimes t =
                step_times(std::move(ivs.all), std::move(ivs.compute), std::move(ivs.comm));
            step_span += t.span;
            step_idle += t.idle;
            if (warmup_left > 0) {
                --warmup_left;
                continue;
            }
            if (t.span <= 0) continue;
            sum.span += t.span, sum.compute += t.compute, sum.comm += t.comm;
            sum.exposed += t.exposed, sum.idle += t.idle;
            ++s.steps_averaged;
        }
        s.steps = static_cast<int>(acc.by_step.size());
        if (s.steps > 0) {
            s.outside_steps_events = static_cast<std::int64_t>(acc.outside_steps.size());
            s.outside_steps_s = static_cast<double>(length_ns(union_of(std::move(acc.outside_steps)))) / kNsPerS;
        }

        const auto all = union_of(std::move(acc.all));
        const auto compute = union_of(std::move(acc.compute));
        const auto comm = union_of(std::move(acc.comm));
        const auto mem = union_of(std::move(acc.mem));
        const std::int64_t span = all.empty() ? 0 : all.back().second - all.front().first;
        const std::int64_t busy = length_ns(all);
        const std::int64_t comm_ns = length_ns(comm);
        const std::int64_t overlap = intersection_ns(compute, comm);
        s.span_s = static_cast<double>(span) / kNsPerS;
        s.compute_s = static_cast<double>(length_ns(compute)) / kNsPerS;
        s.comm_s = static_cast<double>(comm_ns) / kNsPerS;
        s.memcpy_s = static_cast<double>(length_ns(mem)) / kNsPerS;
        s.idle_s = static_cast<double>(span - busy) / kNsPerS;
        s.exposed_comm_s = static_cast<double>(comm_ns - overlap) / kNsPerS;
        if (s.steps_averaged == 0) {
            // No step numbers: the whole trace is the one step.
            sum = {span, length_ns(compute), comm_ns, comm_ns - overlap, span - busy};
        }
        const double per_step = std::max(1, s.steps_averaged) * kNsPerS;
        s.step_s = static_cast<double>(sum.span) / per_step;
        s.step_compute_s = static_cast<double>(sum.compute) / per_step;
        s.step_comm_s = static_cast<double>(sum.comm) / per_step;
        s.step_exposed_comm_s = static_cast<double>(sum.exposed) / per_step;
        s.step_idle_s = static_cast<double>(sum.idle) / per_step;
        s.overlap_fraction = comm_ns > 0 ? static_cast<double>(overlap) / static_cast<double>(comm_ns) : 0;
        // Bubble: idle time inside each step's extent, so gaps between steps (data loading,
        // host work) do not count; without step numbers, the whole trace is one step.
        if (step_span > 0) {
            s.bubble_fraction = static_cast<double>(step_idle) / static_cast<double>(step_span);
        } else if (span > 0) {
            s.bubble_fraction = static_cast<double>(span - busy) / static_cast<double>(span);
        }
        out.ranks.push_back(s);
    }
    for (auto& [name, k] : kernels) {
        k.mean_s = k.total_s / static_cast<double>(k.count);
        out.kernels.push_back(std::move(k));
    }
    std::sort(out.kernels.begin(), out.kernels.end(), [](const KernelStats& a, const KernelStats& b) {
        return a.total_s != b.total_s ? a.total_s > b.total_s : a.name < b.name;
    });
    if (out.kernels.size() > top_kernels) out.kernels.resize(top_kernels);
    for (const auto& [key, v] : colls) {
        CollectiveStats c;
        c.collective = key.collective;
        c.bytes = key.bytes;
        c.group_size = key.group;
        c.count = v.first;
        c.mean_s = static_cast<double>(v.second) / static_cast<double>(v.first) / kNsPerS;
        c.algbw_gbps = c.mean_s > 0 ? static_cast<double>(c.bytes) / c.mean_s / 1e9 : 0;
        c.busbw_gbps = c.algbw_gbps * bus_factor(c.collective, c.group_size);
        out.collectives.push_back(c);
    }
    return out;
}

nlohmann::json stats_to_json(const TraceStats& s) {
    nlohmann::json ranks = nlohmann::json::array(), kernels = nlohmann::json::array(),
                   colls = nlohmann::json::array();
    for (const auto& r : s.ranks) {
        ranks.push_back({{"rank", r.rank},
                         {"span_s", r.span_s},
                         {"compute_s", r.compute_s},
                         {"comm_s", r.comm_s},
                         {"memcpy_s", r.memcpy_s},
                         {"idle_s", r.idle_s},
                         {"exposed_comm_s", r.exposed_comm_s},
                         {"overlap_fraction", r.overlap_fraction},
                         {"bubble_fraction", r.bubble_fraction},
                         {"events", r.events},
                         {"steps", r.steps},
                         {"steps_averaged", r.steps_averaged},
                         {"step_s", r.step_s},
                         {"step_compute_s", r.step_compute_s},
                         {"step_comm_s", r.step_comm_s},
                         {"step_exposed_comm_s", r.step_exposed_comm_s},
                         {"step_idle_s", r.step_idle_s},
                         {"outside_steps_events", r.outside_steps_events},
                         {"outside_steps_s", r.outside_steps_s}});
    }
    for (const auto& k : s.kernels) {
        kernels.push_back({{"name", k.name}, {"kind", to_string(k.kind)}, {"count", k.count},
                           {"total_s", k.total_s}, {"mean_s", k.mean_s}, {"max_s", k.max_s},
                           {"flops", k.flops}});
    }
    for (const auto& c : s.collectives) {
        const bool sized = c.bytes > 0;
        colls.push_back({{"collective", collective_label(c.collective)}, {"bytes", c.bytes}, {"size_known", sized},
                         {"group_size", c.group_size}, {"count", c.count}, {"mean_s", c.mean_s},
                         {"algbw_gbps", sized ? nlohmann::json(c.algbw_gbps) : nlohmann::json(nullptr)},
                         {"busbw_gbps", sized ? nlohmann::json(c.busbw_gbps) : nlohmann::json(nullptr)}});
    }
    return {{"ranks", ranks}, {"kernels", kernels}, {"collectives", colls}};
}

nlohmann::json stats_report_json(const TraceReader& trace, std::size_t top_kernels) {
    auto j = stats_to_json(compute_stats(trace, top_kernels));
    j["trace"] = trace.path();
    j["source"] = trace.run_info().source;
    j["complete"] = trace.complete();
    j["events"] = trace.event_count();
    // Measured memory (memory_stats.h): the same figures for the CLI and serve-trace.
    j["memory"] = memory_stats_json(memory_stats(trace));
    return j;
}

}  // namespace meshwork::profiler
