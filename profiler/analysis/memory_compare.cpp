#include "profiler/analysis/memory_compare.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/cost/cost_model.h"
#include "core/mesh/device_mesh.h"
#include "profiler/analysis/memory_stats.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

namespace {

PredictedMemory predicted_of(const StageMemory& s) {
    PredictedMemory p;
    p.weights = s.params_bytes;
    p.gradients = s.grads_bytes;
    p.optimizer = s.optimizer_bytes;
    p.activations = s.activations_bytes;
    p.buffers = s.buffers_bytes;
    p.reserve = s.reserved_bytes;
    p.peak = s.peak_bytes;
    return p;
}

double relative_error(double predicted, double measured) {
    if (measured > 0) return (predicted - measured) / measured;
    return predicted > 0 ? 1.0 : 0.0;
}

// The device of a rank that is compared: its device with the highest allocated peak, a
// device before the host (-1) when the rank has both.
const DeviceMemoryStats* device_of(const MemoryStats& stats, int rank) {
    const DeviceMemoryStats* best = nullptr;
    for (const auto& d : stats.devices) {
        if (d.rank != rank) continue;
        if (!best || (best->device < 0 && d.device >= 0) ||
            ((best->device < 0) == (d.device < 0) && d.allocated_peak_bytes > best->allocated_peak_bytes)) {
            best = &d;
        }
    }
    return best;
}

}  // namespace

MemoryComparison compare_memory(const Layout& layout, const TraceReader& measured) {
    MemoryComparison out;
    const Estimate e = estimate_layout(layout);
    const DeviceMesh mesh = layout.mesh();
    MemoryStats stats;
    if (!measured.has_memory_tables()) {
        out.note = "the measured trace is of format 1, which has no memory tables (import it again, or record "
                   "it with run --profile)";
    } else {
        stats = memory_stats(measured);
        if (stats.devices.empty()) {
            out.note = "the measured trace has no memory events (a profile recorded without memory: PyTorch's "
                       "profile_memory=True, a memory snapshot, or meshwork-cli run --profile records them)";
        }
    }
    out.has_memory = !stats.devices.empty();
    for (int r = 0; r < mesh.world_size(); ++r) {
        RankMemoryComparison c;
        c.rank = r;
        c.stage = mesh.coords(r).pp;
        c.predicted = predicted_of(e.stages.at(static_cast<std::size_t>(c.stage)));
        if (const DeviceMemoryStats* d = device_of(stats, r)) {
            c.measured = true;
            c.device = d->device;
            c.allocated_peak_bytes = d->allocated_peak_bytes;
            c.reserved_peak_bytes = d->reserved_peak_bytes;
            c.measured_peak_bytes = d->reserved_peak_bytes > 0 ? d->reserved_peak_bytes : d->allocated_peak_bytes;
            c.at_peak_by_category = d->at_peak_by_category;
            c.error = relative_error(static_cast<double>(c.predicted.peak), static_cast<double>(c.measured_peak_bytes));
            out.max_abs_error = std::max(out.max_abs_error, std::fabs(c.error));
        }
        out.ranks.push_back(std::move(c));
    }
    if (out.has_memory && std::none_of(out.ranks.begin(), out.ranks.end(), [](const auto& c) { return c.measured; })) {
        out.note = "the measured trace's memory events are of ranks the layout does not have";
    }
    return out;
}

nlohmann::json memory_comparison_to_json(const MemoryComparison& c) {
    nlohmann::json j;
    j["has_memory"] = c.has_memory;
    if (!c.note.empty()) j["note"] = c.note;
    j["max_abs_error"] = c.max_abs_error;
    auto ranks = nlohmann::json::array();
    for (const auto& r : c.ranks) {
        nlohmann::json row = {{"rank", r.rank},
                              {"stage", r.stage},
                              {"predicted",
                               {{"weights_bytes", r.predicted.weights},
                                {"gradients_bytes", r.predicted.gradients},
                                {"optimizer_bytes", r.predicted.optimizer},
                                {"activations_bytes", r.predicted.activations},
                                {"buffers_bytes", r.predicted.buffers},
                                {"reserve_bytes", r.predicted.reserve},
                                {"peak_bytes", r.predicted.peak}}},
                              {"measured", r.measured}};
        if (r.measured) {
            row["device"] = r.device;
            row["allocated_peak_bytes"] = r.allocated_peak_bytes;
            row["reserved_peak_bytes"] = r.reserved_peak_bytes;
            row["measured_peak_bytes"] = r.measured_peak_bytes;
            row["at_peak_by_category"] = r.at_peak_by_category;
            row["error"] = r.error;
        }
        ranks.push_back(std::move(row));
    }
    j["ranks"] = std::move(ranks);
    return j;
}

MemoryReserveFit fit_memory_reserve(const Layout& layout, const TraceReader& measured) {
    MemoryReserveFit fit;
    const MemoryComparison before = compare_memory(layout, measured);
    fit.max_abs_error_before = before.max_abs_error;
    // One point per measured rank: what it held beyond the predicted kinds, and the dynamic
    // memory (activations and buffers) the fragmentation share scales.
    std::vector<std::pair<double, double>> points;  // dynamic, residual
    for (const auto& r : before.ranks) {
        if (!r.measured) continue;
        points.emplace_back(static_cast<double>(r.predicted.dynamic()),
                            static_cast<double>(r.measured_peak_bytes - r.predicted.kinds()));
    }
    fit.ranks = static_cast<int>(points.size());
    if (points.empty()) {
        fit.rule = "not fitted: " + (before.note.empty() ? std::string("no measured rank") : before.note);
        return fit;
    }
    const double n = static_cast<double>(points.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0, lo = points.front().first, hi = lo;
    for (const auto& [x, y] : points) {
        sx += x, sy += y, sxx += x * x, sxy += x * y;
        lo = std::min(lo, x), hi = std::max(hi, x);
    }
    // Ranks whose dynamic memory differs by less than this share of the largest do not tell a
    // fixed term from a proportional one (one equation, two unknowns).
    constexpr double kDistinctDynamicShare = 0.05;
    double fixed = 0, frag = 0;
    const auto proportional_only = [&] { return sxx > 0 ? std::clamp(sxy / sxx, 0.0, 1.0) : 0.0; };
    if (hi - lo > kDistinctDynamicShare * hi) {
        const double det = n * sxx - sx * sx;
        frag = (n * sxy - sx * sy) / det;
        fixed = (sy - frag * sx) / n;
        fit.rule = "fixed and fragmentation by least squares over " + std::to_string(points.size()) + " ranks";
        if (frag < 0) {
            frag = 0;
            fixed = sy / n;
            fit.rule += "; fragmentation came out negative: 0, fixed the mean residual";
        }
        if (fixed < 0) {
            fixed = 0;
            frag = proportional_only();
            fit.rule += "; fixed came out negative: 0, fragmentation alone";
        }
    } else {
        // One distinct size: the whole residual as the proportional share, the cluster's fixed
        // term dropped (on a CPU host there is no device context to reserve; on a GPU, state
        // the fixed term and fit from ranks of several sizes).
        frag = proportional_only();
        fit.rule = "fragmentation alone (the ranks' activations and buffers differ by under 5%: a fixed term "
                   "cannot be told apart)";
    }
    frag = std::clamp(frag, 0.0, 1.0);
    fixed = std::max(0.0, fixed);
    fit.fitted = true;
    fit.fixed_bytes = static_cast<std::int64_t>(std::llround(fixed));
    fit.fragmentation = frag;
    Layout calibrated = layout;
    calibrated.cluster = apply_memory_reserve(layout.cluster, fit);
    fit.max_abs_error_after = compare_memory(calibrated, measured).max_abs_error;
    return fit;
}

ClusterSpec apply_memory_reserve(ClusterSpec cluster, const MemoryReserveFit& fit) {
    if (!fit.fitted) return cluster;
    cluster.memory_reserve.fixed_bytes = fit.fixed_bytes;
    cluster.memory_reserve.fragmentation = fit.fragmentation;
    return cluster;
}

nlohmann::json memory_reserve_fit_to_json(const MemoryReserveFit& fit) {
    return {{"fitted", fit.fitted},
            {"ranks", fit.ranks},
            {"fixed_bytes", fit.fixed_bytes},
            {"fragmentation", fit.fragmentation},
            {"rule", fit.rule},
            {"max_abs_error_before", fit.max_abs_error_before},
            {"max_abs_error_after", fit.max_abs_error_after}};
}

}  // namespace meshwork::profiler
