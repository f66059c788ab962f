#include "profiler/analysis/calibrate.h"
#include "profiler/analysis/memory_compare.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "profiler/analysis/intervals.h"
#include "profiler/analysis/trace_stats.h"
#include "core/common/error.h"
#include "core/cost/gemm_efficiency.h"
#include "core/cost/host_sharing.h"
#include "core/sim/simulate.h"
#include "profiler/store/trace_writer.h"

namespace meshwork::profiler {

namespace {

struct Sample {
    double steps;      // latency-bound steps of the collective in the cost model
    double bus_bytes;  // S · bus factor
    double seconds;    // mean over the class's instances
    double weight;     // instances in the class
};

// The cost model's latency steps (core/cost/collective_time.cpp): ring phases × (n − 1).
double latency_steps(Collective collective, int n) {
    if (collective == Collective::AllReduce) return 2.0 * (n - 1);
    if (collective == Collective::AllGather || collective == Collective::ReduceScatter) return n - 1.0;
    return 1.0;  // all_to_all (messages posted together), send, broadcast
}

// Least squares of t = a·steps + x·bus_bytes (a = latency, x = 1/B) over the classes (one
// collective, size and group each) at their mean times, weighted by their instance counts:
// the fit reproduces the total time spent in collectives, which is what a step's
// prediction adds up, while per-event noise averages out in the means. Non-negative: when
// the free fit gives a negative latency it is refitted as bandwidth only, when it gives no
// positive 1/B as latency only (the bandwidth then stays the nominal one).
LinkFit fit_link(const std::vector<Sample>& classes, int events, double nominal_bandwidth) {
    LinkFit f;
    f.samples = events;
    if (classes.empty()) return f;
    double kk = 0, kx = 0, xx = 0, kt = 0, xt = 0;
    std::set<std::pair<double, double>> shapes;
    for (const auto& c : classes) {
        const double w = c.weight;
        kk += w * c.steps * c.steps, kx += w * c.steps * c.bus_bytes,
            xx += w * c.bus_bytes * c.bus_bytes;
        kt += w * c.steps * c.seconds, xt += w * c.bus_bytes * c.seconds;
        shapes.insert({c.steps, c.bus_bytes});
    }
    double latency = -1, inv_bw = -1;
    const double det = kk * xx - kx * kx;
    if (shapes.size() >= 2 && det > 1e-12 * kk * xx) {
        latency = (kt * xx - kx * xt) / det;
        inv_bw = (kk * xt - kx * kt) / det;
    }
    if (latency >= 0 && inv_bw > 0) {
        f.latency_fitted = true;
    } else if (xx > 0 && (latency < 0 || shapes.size() < 2)) {
        latency = 0, inv_bw = xt / xx;  // bandwidth only
    } else if (kk > 0) {
        latency = kt / kk, inv_bw = 0;  // latency only
        f.latency_fitted = true;
    }
    f.latency_s = std::max(0.0, latency);
    if (inv_bw > 0) f.bus_bandwidth_bytes_per_s = 1.0 / inv_bw;
    f.fitted = f.bus_bandwidth_bytes_per_s > 0 || f.latency_fitted;
    if (f.bus_bandwidth_bytes_per_s > 0 && nominal_bandwidth > 0) {
        // The cluster reader's range for a link efficiency: [0.01, 1].
        f.efficiency = std::clamp(f.bus_bandwidth_bytes_per_s / nominal_bandwidth, 0.01, 1.0);
    }
    return f;
}

double mean_step_compute_s(const TraceStats& st) {
    double sum = 0;
    for (const auto& r : st.ranks) sum += r.step_compute_s;
    return st.ranks.empty() ? 0 : sum / static_cast<double>(st.ranks.size());
}

double mean_step_s(const TraceStats& st) {
    double sum = 0;
    for (const auto& r : st.ranks) sum += r.step_s;
    return st.ranks.empty() ? 0 : sum / static_cast<double>(st.ranks.size());
}

// The cores of the host that recorded the trace (run info "host_cores"); 0 when absent.
double recorded_host_cores(const TraceReader& trace) {
    const auto& extra = trace.run_info().extra;
    const auto it = extra.find("host_cores");
    if (it == extra.end()) return 0;
    try {
        const double v = std::stod(it->second);
        return std::isfinite(v) && v > 0 ? v : 0;
    } catch (const std::exception&) {
        return 0;  // an unreadable annotation: not fitted
    }
}

// The simulated compute time of one step of `layout` on `cluster` (mean over ranks).
double predicted_step_compute_s(Layout layout, const ClusterSpec& cluster) {
    layout.cluster = cluster;
    // Keeps only the compute intervals of each rank: no trace file is needed.
    struct Sink final : TraceSink {
        void set_run_info(const TraceRunInfo&) override {}
        int add_track(const TrackInfo&) override { return tracks++; }
        void add_event(const TraceEvent& e) override {
            if (e.kind == EventKind::Compute) by_rank[e.rank].push_back({e.start_ns, e.end_ns});
        }
        void add_counter(int, int, const std::string&, std::int64_t, double) override {}
        void close() override {}
        int tracks = 0;
        std::map<int, std::vector<Interval>> by_rank;
    } sink;
    simulate_layout(layout, &sink);
    double sum = 0;
    for (auto& [rank, ivs] : sink.by_rank)
        sum += static_cast<double>(length_ns(union_of(std::move(ivs)))) * 1e-9;
    return sink.by_rank.empty() ? 0 : sum / static_cast<double>(sink.by_rank.size());
}

// The scheduler counters of the trace's rank threads, per rank in time order (one sample at
// the end of each step); the warm-up steps' samples are left out (as compare leaves out
// those steps).
SchedulerEvidence scheduler_evidence(const TraceReader& trace, int warmup_steps) {
    std::map<int, int> rank_of_track;
    for (const auto& t : trace.tracks()) rank_of_track[t.id] = t.info.rank;
    std::map<std::pair<int, std::string>, std::vector<std::pair<std::int64_t, double>>> series;
    trace.for_each_counter([&](const CounterSample& c) {
        if (c.name.rfind("thread.", 0) != 0 && c.name.rfind("host.", 0) != 0 && c.name != "process.cpu_s") return;
        const auto it = rank_of_track.find(c.track);
        if (it != rank_of_track.end()) series[{it->second, c.name}].emplace_back(c.time_ns, c.value);
    });
    SchedulerEvidence ev;
    auto mean_of = [&](const std::string& name, int* count) {
        double sum = 0;
        int n = 0;
        for (auto& [key, v] : series) {
            if (key.second != name) continue;
            std::sort(v.begin(), v.end());
            for (std::size_t i = warmup_items(v.size(), warmup_steps); i < v.size(); ++i, ++n) sum += v[i].second;
        }
        if (count) *count = n;
        return n > 0 ? sum / n : 0.0;
    };
    int n = 0;
    ev.compute_on_cpu_s = mean_of("thread.compute_on_cpu_s", &n);
    ev.recorded = n > 0;
    ev.steps = n;
    int m = 0;
    ev.on_cpu_s = mean_of("thread.on_cpu_s", &m);
    ev.run_queue_wait_s = mean_of("thread.run_queue_wait_s", nullptr);
    ev.timeslices = mean_of("thread.timeslices", nullptr);
    int c = 0;
    ev.comm_on_cpu_s = mean_of("thread.comm_on_cpu_s", &c);
    ev.comm_recorded = c > 0;
    ev.schedstat = m > 0;
    // The host's accounting: cumulative, on the recording rank; from its sample at the end of
    // the last warm-up step (the first sample with the default one) to its last.
    for (const auto& [key, busy] : series) {
        if (key.second != "host.busy_cpu_s") continue;
        const auto own = series.find({key.first, "process.cpu_s"});
        if (own == series.end() || own->second.size() != busy.size() || busy.size() < 2) continue;
        auto b = busy, p = own->second;
        std::sort(b.begin(), b.end());
        std::sort(p.begin(), p.end());
        // Cumulative samples: the one ending the last warm-up step starts the interval.
        const std::size_t from = std::max<std::size_t>(warmup_items(b.size(), warmup_steps), 1) - 1;
        const double wall = static_cast<double>(b.back().first - b[from].first) * 1e-9;
        if (wall <= 0) continue;
        ev.host_recorded = true;
        ev.interval_s = wall;
        ev.process_cores = (p.back().second - p[from].second) / wall;
        // Processes at a positive nice (host.niced_cpu_s, when recorded) yield a core to the
        // run's nice-0 threads when they want one: they fill the cores the run leaves idle
        // and are not others' use (measured: builds at nice 19 counted so took 0.4 of the 2
        // cores from a quiet-host fit; docs/BENCHMARKS.md).
        double niced_cores = 0;
        if (const auto nc = series.find({key.first, "host.niced_cpu_s"}); nc != series.end() && nc->second.size() == busy.size()) {
            auto v = nc->second;
            std::sort(v.begin(), v.end());
            niced_cores = (v.back().second - v[from].second) / wall;
        }
        ev.niced_cores = niced_cores;
        ev.others_cores = std::max(0.0, (b.back().second - b[from].second) / wall - ev.process_cores - niced_cores);
        break;
    }
    return ev;
}

// The mean time a rank's compute waits for a core in one simulated step of `layout` with
// the ranks sharing `cores` cores (core/sim/simulate.h).
double simulated_core_wait_s(Layout layout, const ClusterSpec& cluster, double cores) {
    layout.cluster = cluster;
    layout.cluster.host_cores = cores;
    return simulate_layout(layout, nullptr).host_core_wait_s;
}

nlohmann::json link_json(const LinkFit& f) {
    return {{"samples", f.samples}, {"fitted", f.fitted}, {"latency_fitted", f.latency_fitted},
            {"bus_bandwidth_bytes_per_s", f.bus_bandwidth_bytes_per_s}, {"latency_s", f.latency_s},
            {"efficiency", f.efficiency}};
}

}  // namespace

CalibrationFit fit_calibration(const TraceReader& measured, const ClusterSpec& given, DType dtype,
                               const Layout* layout, int warmup_steps, const cost::GemmCurve* gemm_curve) {
    CalibrationFit fit;
    // With a measured curve, every prediction below starts from its shape.
    ClusterSpec cluster = given;
    if (layout && gemm_curve && gemm_curve->fitted) {
        fit.gemm_curve = *gemm_curve;
        fit.gemm_half_dim = gemm_curve->gemm_half_dim;
        cluster.efficiency.gemm_half_dim = gemm_curve->gemm_half_dim;
        cluster.efficiency.gemm = gemm_curve->gemm_efficiency;
    }
    double flops = 0, seconds = 0;
    // The warm-up steps are left out (as compare leaves them out): events before `first`.
    std::set<int> steps;
    measured.for_each_event([&](const TraceEvent& e) {
        if (e.kind == EventKind::Communication && e.step >= 0) steps.insert(e.step);
    });
    const int first = steps.empty() ? -1 : *std::next(steps.begin(), static_cast<std::ptrdiff_t>(
                                                                      warmup_items(steps.size(), warmup_steps)));
    const auto warm_up = [first](const TraceEvent& e) { return e.step >= 0 && e.step < first; };

    // Per tier, (collective, bytes, group size) -> the sum and count of event times. Each
    // event counts with its whole duration, waiting for late peers included: that wait is
    // time the rank spends in the collective on this machine (on a CPU host with more ranks
    // than cores, a peer is late because it is not running).
    struct Class {
        double steps = 0, bus_bytes = 0, sum = 0;
        int count = 0;
    };
    // Keyed by the collective's name: the classes are summed in the same order as ever.
    std::map<std::tuple<bool, std::string_view, std::int64_t, int>, Class> classes;
    int intra_events = 0, inter_events = 0;
    measured.for_each_event([&](const TraceEvent& e) {
        const double d = static_cast<double>(e.end_ns - e.start_ns) * 1e-9;
        if (d <= 0) return;
        if (warm_up(e)) return;
        if (e.kind == EventKind::Compute && e.flops > 0) {
            flops += e.flops;
            seconds += d;
            ++fit.compute_samples;
            return;
        }
        if (e.kind != EventKind::Communication || e.bytes <= 0 || e.group_size <= 1) return;
        const Collective coll = e.collective;
        if (coll == Collective::None || coll == Collective::Recv) return;
        const bool intra = e.group_size <= cluster.gpus_per_node;
        auto& c = classes[{intra, to_string(coll), e.bytes, e.group_size}];
        c.steps = latency_steps(coll, e.group_size);
        c.bus_bytes = static_cast<double>(e.bytes) * bus_factor(coll, e.group_size);
        c.sum += d;
        ++c.count;
        ++(intra ? intra_events : inter_events);
    });
    std::vector<Sample> intra, inter;
    for (const auto& [key, c] : classes) {
        (std::get<0>(key) ? intra : inter)
            .push_back({c.steps, c.bus_bytes, c.sum / c.count, static_cast<double>(c.count)});
    }
    if (seconds > 0) {
        fit.achieved_flops_per_s = flops / seconds;
        const double peak = cluster.gpu.peak_flops(dtype);
        if (peak > 0) fit.gemm_efficiency = std::min(1.0, fit.achieved_flops_per_s / peak);
    }
    if (layout && fit.compute_samples > 0) {
        const TraceStats st = compute_stats(measured, 0, warmup_steps);
        fit.measured_compute_s = mean_step_compute_s(st);
        fit.measured_step_s = mean_step_s(st);
        fit.recorded_host_cores = recorded_host_cores(measured);
        fit.sched = scheduler_evidence(measured, warmup_steps);
        fit.sched.compute_span_s = fit.measured_compute_s;
        if (fit.sched.recorded && fit.sched.compute_on_cpu_s > 0) {
            // The compute of a rank on a core of its own: its CPU time inside compute ops
            // (the spans' wall time also holds its waits for a core, fitted below).
            fit.sched.compute_core_wait_s = std::max(0.0, fit.measured_compute_s - fit.sched.compute_on_cpu_s);
            fit.measured_compute_s = fit.sched.compute_on_cpu_s;
        }
        const int ranks = cost::ranks_per_node(cluster, layout->gpus);
        // Only ranks that compute on the host's cores share them (the CPU engine); GPU
        // ranks each compute on a device of their own.
        const bool host_computes = cluster.gpu.kind == "cpu";
        if (host_computes && fit.recorded_host_cores > 0 && ranks > fit.recorded_host_cores &&
            fit.measured_step_s > 0 && !fit.sched.recorded) {
            fit.host_cores = std::clamp(ranks * fit.measured_compute_s / fit.measured_step_s, 0.01,
                                        fit.recorded_host_cores);
        }
        ClusterSpec unbounded = cluster;  // compute is fitted on the ranks' own timelines
        unbounded.host_cores = 0;
        fit.predicted_compute_s = predicted_step_compute_s(*layout, unbounded);
        Layout ran = *layout;  // on the cluster being calibrated
        ran.cluster = cluster;
        if (fit.gemm_curve.fitted) {
            fit.gemm_sizes.reason = "not used: the curve was measured on the host (--measure-gemm)";
        } else {
            fit.gemm_sizes = fit_gemm_sizes(measured, ran, dtype, first);
        }
        if (fit.gemm_sizes.fitted && fit.measured_compute_s > 0) {
            fit.gemm_efficiency = fit.gemm_sizes.gemm_efficiency;
            fit.gemm_half_dim = fit.gemm_sizes.gemm_half_dim;
            ClusterSpec curve = unbounded;
            curve.efficiency.gemm = fit.gemm_efficiency;
            curve.efficiency.gemm_half_dim = fit.gemm_half_dim;
            // The rest of the compute (attention kernels, memory-bound kernels), separated by
            // the simulator itself: at half their efficiencies they take twice their time.
            const double at_curve = predicted_step_compute_s(*layout, curve);
            ClusterSpec slow = curve;
            slow.efficiency.attention /= 2;
            slow.efficiency.memory /= 2;
            const double rest = predicted_step_compute_s(*layout, slow) - at_curve;
            fit.predicted_gemm_s = at_curve - rest;
            if (rest > 0) {
                // The measured compute left to the rest; when the GEMMs alone already take it,
                // the rest runs as fast as the reader allows (efficiencies clamp at 1).
                fit.compute_scale =
                    rest / std::max(fit.measured_compute_s - fit.predicted_gemm_s, 1e-3 * rest);
            }
        } else if (fit.measured_compute_s > 0 && fit.predicted_compute_s > 0) {
            // Too few GEMM sizes for the curve: one scale for the whole compute.
            fit.compute_scale = fit.predicted_compute_s / fit.measured_compute_s;
            fit.gemm_efficiency =
                std::clamp(cost::gemm_efficiency(cluster, dtype, layout->training.fp8_recipe) * fit.compute_scale,
                           1e-3, 1.0);
        }
    }
    fit.intra_node = fit_link(intra, intra_events, cluster.intra_node.bandwidth_bytes_per_s);
    fit.inter_node = fit_link(inter, inter_events, cluster.inter_node.bandwidth_bytes_per_s);
    if (layout && fit.sched.recorded && cluster.gpu.kind == "cpu" && fit.recorded_host_cores > 0 &&
        cost::ranks_per_node(cluster, layout->gpus) > fit.recorded_host_cores) {
        // The cores the run could have: the recorded ones less what other processes used
        // meanwhile. Waiting for peers (collectives, receives) is not part of it: those spans
        // go to the links above; the run's threads waiting for each other's cores is what
        // the simulator's processor sharing adds (predicted_core_wait_s, beside the measured
        // compute_core_wait_s).
        const double recorded = fit.recorded_host_cores;
        fit.host_cores = fit.sched.host_recorded ? std::clamp(recorded - fit.sched.others_cores, 0.05, recorded)
                                                 : recorded;
        // The threads' CPU outside compute ops grows with the ops they run, one layer's
        // forward and backward of a micro-batch at a time, not with the ops' size
        // (docs/BENCHMARKS.md, "Calibration on the CPU engine"). Less the CPU inside
        // collectives: the collectives' spans hold it, and the links fitted above on those
        // spans carry it into every prediction already (counted twice, a TP2xPP2 source
        // re-predicted itself 9-16 % slow).
        const double layer_passes = static_cast<double>(layout->model.num_layers) / layout->parallel.mesh.pp *
                                    layout->num_micro_batches();
        if (fit.sched.schedstat && layer_passes > 0) {
            fit.host_cpu_per_layer_pass_s =
                std::max(0.0, fit.sched.on_cpu_s - fit.sched.compute_on_cpu_s - fit.sched.comm_on_cpu_s) /
                layer_passes;
        }
        fit.sched.predicted_core_wait_s =
            simulated_core_wait_s(*layout, apply_calibration(cluster, fit), fit.host_cores);
    }
    return fit;
}

ClusterSpec apply_calibration(ClusterSpec c, const CalibrationFit& fit) {
    if (fit.gemm_efficiency > 0) c.efficiency.gemm = fit.gemm_efficiency;
    if (fit.gemm_sizes.fitted || fit.gemm_curve.fitted) c.efficiency.gemm_half_dim = fit.gemm_half_dim;
    if (fit.host_cores > 0) c.host_cores = fit.host_cores;
    if (fit.host_cpu_per_layer_pass_s > 0) c.host_cpu_per_layer_pass_s = fit.host_cpu_per_layer_pass_s;
    if (fit.compute_scale > 0) {
        // The rest of the device runs at the fitted pace: attention and memory-bound kernels.
        c.efficiency.attention = std::clamp(c.efficiency.attention * fit.compute_scale, 1e-3, 1.0);
        c.efficiency.memory = std::clamp(c.efficiency.memory * fit.compute_scale, 1e-3, 1.0);
    }
    // Bandwidth and latency each when fitted: a latency-only fit keeps the nominal bandwidth.
    if (fit.intra_node.efficiency > 0) c.efficiency.intra_node_link = fit.intra_node.efficiency;
    if (fit.intra_node.latency_fitted) c.intra_node.latency_s = fit.intra_node.latency_s;
    if (fit.inter_node.efficiency > 0) c.efficiency.inter_node_link = fit.inter_node.efficiency;
    if (fit.inter_node.latency_fitted) c.inter_node.latency_s = fit.inter_node.latency_s;
    return c;
}

Reprediction calibrate_and_repredict(const TraceReader& measured, const Layout& layout,
                                     const std::string& predicted_out, int warmup_steps) {
    Reprediction r;
    r.fit = fit_calibration(measured, layout.cluster, layout.training.dtype, &layout, warmup_steps);
    r.memory = fit_memory_reserve(layout, measured);
    if (r.fit.gemm_efficiency <= 0 && !r.fit.intra_node.fitted && !r.fit.inter_node.fitted && !r.memory.fitted) {
        throw InputError(measured.path(), "events",
                         "nothing to fit: no compute event carries FLOPs, no collective carries "
                         "bytes and a group size, and there are no memory events");
    }
    r.cluster = apply_memory_reserve(apply_calibration(layout.cluster, r.fit), r.memory);
    r.cluster.description =
        layout.cluster.description + " (calibrated from " + measured.path() + ")";
    Layout calibrated = layout;
    calibrated.cluster = r.cluster;
    calibrated.cluster_ref.clear();  // the trace's layout carries the calibrated figures inline
    auto writer = TraceWriter::create(predicted_out);
    simulate_layout(calibrated, writer.get());
    writer->close();
    return r;
}

nlohmann::json calibration_to_json(const CalibrationFit& f) {
    return {{"compute_samples", f.compute_samples},
            {"achieved_flops_per_s", f.achieved_flops_per_s},
            {"gemm_efficiency", f.gemm_efficiency},
            {"gemm_half_dim", f.gemm_half_dim},
            {"gemm_size_fit", gemm_size_fit_to_json(f.gemm_sizes)},
            {"gemm_curve",
             {{"fitted", f.gemm_curve.fitted},
              {"reason", f.gemm_curve.reason},
              {"samples", f.gemm_curve.samples},
              {"sizes", f.gemm_curve.sizes},
              {"gemm_efficiency", f.gemm_curve.gemm_efficiency},
              {"gemm_half_dim", f.gemm_curve.gemm_half_dim},
              {"rms_error", f.gemm_curve.rms_error},
              {"worst_error", f.gemm_curve.worst_error}}},
            {"compute_scale", f.compute_scale},
            {"predicted_gemm_s", f.predicted_gemm_s},
            {"predicted_compute_s", f.predicted_compute_s},
            {"measured_compute_s", f.measured_compute_s},
            {"measured_step_s", f.measured_step_s},
            {"host_cores", f.host_cores},
            {"host_cpu_per_layer_pass_s", f.host_cpu_per_layer_pass_s},
            {"recorded_host_cores", f.recorded_host_cores},
            {"scheduler",
             {{"recorded", f.sched.recorded},
              {"schedstat", f.sched.schedstat},
              {"rank_steps", f.sched.steps},
              {"on_cpu_s", f.sched.on_cpu_s},
              {"run_queue_wait_s", f.sched.run_queue_wait_s},
              {"timeslices", f.sched.timeslices},
              {"compute_on_cpu_s", f.sched.compute_on_cpu_s},
              {"comm_on_cpu_s", f.sched.comm_on_cpu_s},
              {"compute_span_s", f.sched.compute_span_s},
              {"compute_core_wait_s", f.sched.compute_core_wait_s},
              {"predicted_core_wait_s", f.sched.predicted_core_wait_s},
              {"host_recorded", f.sched.host_recorded},
              {"interval_s", f.sched.interval_s},
              {"process_cores", f.sched.process_cores},
              {"others_cores", f.sched.others_cores},
              {"niced_cores", f.sched.niced_cores}}},
            {"intra_node", link_json(f.intra_node)},
            {"inter_node", link_json(f.inter_node)}};
}

}  // namespace meshwork::profiler
