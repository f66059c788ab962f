#include "analysis/calibrate.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "analysis/trace_stats.h"

namespace meshwork::profiler {

namespace {

struct Sample {
    double bus_bytes, seconds;
};

LinkFit fit_link(const std::vector<Sample>& samples, double nominal_bandwidth) {
    LinkFit f;
    f.samples = static_cast<int>(samples.size());
    if (samples.empty()) return f;
    std::set<double> sizes;
    double sx = 0, sy = 0;
    for (const auto& s : samples) {
        sizes.insert(s.bus_bytes);
        sx += s.bus_bytes;
        sy += s.seconds;
    }
    const double n = static_cast<double>(samples.size());
    // Least squares t = a + x / B needs two sizes at least; else bytes over time.
    if (sizes.size() >= 2) {
        const double mx = sx / n, my = sy / n;
        double sxx = 0, sxy = 0;
        for (const auto& s : samples) {
            sxx += (s.bus_bytes - mx) * (s.bus_bytes - mx);
            sxy += (s.bus_bytes - mx) * (s.seconds - my);
        }
        const double slope = sxx > 0 ? sxy / sxx : 0;
        const double intercept = my - slope * mx;
        if (slope > 0 && intercept >= 0) {
            f.bus_bandwidth_bytes_per_s = 1.0 / slope;
            f.latency_s = intercept;
            f.latency_fitted = true;
        }
    }
    if (!f.latency_fitted && sy > 0) f.bus_bandwidth_bytes_per_s = sx / sy;
    f.fitted = f.bus_bandwidth_bytes_per_s > 0;
    if (f.fitted && nominal_bandwidth > 0) {
        f.efficiency = std::min(1.0, f.bus_bandwidth_bytes_per_s / nominal_bandwidth);
    }
    return f;
}

nlohmann::json link_json(const LinkFit& f) {
    return {{"samples", f.samples}, {"fitted", f.fitted}, {"latency_fitted", f.latency_fitted},
            {"bus_bandwidth_bytes_per_s", f.bus_bandwidth_bytes_per_s}, {"latency_s", f.latency_s},
            {"efficiency", f.efficiency}};
}

}  // namespace

CalibrationFit fit_calibration(const TraceReader& measured, const ClusterSpec& cluster, DType dtype) {
    CalibrationFit fit;
    double flops = 0, seconds = 0;
    std::vector<Sample> intra, inter;
    measured.for_each_event([&](const TraceEvent& e) {
        const double d = static_cast<double>(e.end_ns - e.start_ns) * 1e-9;
        if (d <= 0) return;
        if (e.kind == EventKind::Compute && e.flops > 0) {
            flops += e.flops;
            seconds += d;
            ++fit.compute_samples;
        } else if (e.kind == EventKind::Communication && e.bytes > 0 && e.group_size > 1) {
            const auto coll = collective_of_event(e.name);
            if (coll.empty()) return;
            const Sample s{static_cast<double>(e.bytes) * bus_factor(coll, e.group_size), d};
            (e.group_size <= cluster.gpus_per_node ? intra : inter).push_back(s);
        }
    });
    if (seconds > 0) {
        fit.achieved_flops_per_s = flops / seconds;
        const double peak = cluster.gpu.peak_flops(dtype);
        if (peak > 0) fit.gemm_efficiency = std::min(1.0, fit.achieved_flops_per_s / peak);
    }
    fit.intra_node = fit_link(intra, cluster.intra_node.bandwidth_bytes_per_s);
    fit.inter_node = fit_link(inter, cluster.inter_node.bandwidth_bytes_per_s);
    return fit;
}

ClusterSpec apply_calibration(ClusterSpec c, const CalibrationFit& fit) {
    if (fit.gemm_efficiency > 0) c.efficiency.gemm = fit.gemm_efficiency;
    if (fit.intra_node.fitted && fit.intra_node.efficiency > 0) {
        c.efficiency.intra_node_link = fit.intra_node.efficiency;
        if (fit.intra_node.latency_fitted) c.intra_node.latency_s = fit.intra_node.latency_s;
    }
    if (fit.inter_node.fitted && fit.inter_node.efficiency > 0) {
        c.efficiency.inter_node_link = fit.inter_node.efficiency;
        if (fit.inter_node.latency_fitted) c.inter_node.latency_s = fit.inter_node.latency_s;
    }
    return c;
}

nlohmann::json calibration_to_json(const CalibrationFit& f) {
    return {{"compute_samples", f.compute_samples}, {"achieved_flops_per_s", f.achieved_flops_per_s},
            {"gemm_efficiency", f.gemm_efficiency}, {"intra_node", link_json(f.intra_node)},
            {"inter_node", link_json(f.inter_node)}};
}

}  // namespace meshwork::profiler
