#include "profiler/analysis/gemm_size_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <vector>

#include "core/common/weighted_line_fit.h"
#include "core/cost/block_cost.h"
#include "core/cost/gemm_shapes.h"
#include "core/cost/model_profile.h"

namespace meshwork::profiler {

namespace {

using cost::GemmShape;

// One operation of the model: its GEMMs, forward (the backward runs each twice).
struct OpGemms {
    std::vector<GemmShape> gemms;
    [[nodiscard]] double flops() const {
        double f = 0;
        for (const auto& g : gemms) f += g.flops();
        return f;
    }
    // Σ F_g / d_g: the FLOPs weighted by 1/size, the regressor of the half size.
    [[nodiscard]] double flops_over_size() const {
        double x = 0;
        for (const auto& g : gemms) x += g.present() ? g.flops() / g.size() : 0.0;
        return x;
    }
};

// The model's GEMMs of an operation the engine names `op` (the name without "block.N."),
// from the block shapes `b` (dense or MoE block) or the head; empty when the model times
// it otherwise.
OpGemms op_gemms(std::string_view op, const cost::BlockGemms& b, const GemmShape& head) {
    auto pick = [](std::initializer_list<GemmShape> gs) {
        OpGemms o;
        for (const auto& g : gs) {
            if (g.present()) o.gemms.push_back(g);
        }
        return o;
    };
    if (op == "attention.qkv") return pick({b.qkv});
    if (op == "attention.proj") return pick({b.proj});
    // Not the unfused core attention: its measured span holds the masked softmax between
    // its GEMMs, which the model times as memory traffic (it would bend the curve).
    if (op == "mlp") return pick({b.fc1, b.fc2});
    if (op == "lm_head") return pick({head});
    return {};
}

// Operations with FLOPs that the model does not time as GEMMs alone (see fit_gemm_sizes).
bool left_out(std::string_view op) {
    return op == "attention.core" || op.substr(0, 4) == "moe.";
}

// "block.3.attention.qkv.fwd" -> {"attention.qkv", backward = false}; false when the name
// has no .fwd/.bwd suffix.
bool split_name(std::string_view name, std::string_view& op, bool& backward) {
    if (name.size() < 5) return false;
    const std::string_view dir = name.substr(name.size() - 4);
    if (dir != ".fwd" && dir != ".bwd") return false;
    backward = dir == ".bwd";
    name.remove_suffix(4);
    if (name.substr(0, 6) == "block.") {
        const auto dot = name.find('.', 6);
        if (dot == std::string_view::npos) return false;
        name.remove_prefix(dot + 1);
    }
    op = name;
    return true;
}

struct Class {
    double flops = 0;            // model FLOPs of one instance
    double flops_over_size = 0;  // Σ F_g / d_g of one instance
    std::vector<double> seconds; // of every instance
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Beyond this weighted relative rms the straight line does not describe the operations: the
// fit is refused rather than applied (the caller keeps one scale).
constexpr double kMaxRmsError = 0.25;

}  // namespace

GemmSizeFit fit_gemm_sizes(const TraceReader& measured, const Layout& layout, DType dtype,
                           int first_step) {
    GemmSizeFit fit;
    const cost::ModelProfile profile = cost::build_model_profile(layout.model);
    cost::LayoutCosts costs;
    cost::prepare_layout_costs(profile, layout.cluster, layout.parallel, layout.training, costs);
    const double peak = cost::kernel_model(layout.cluster, dtype).peak_flops_per_s;
    std::vector<cost::BlockGemms> blocks;  // the shapes of the model's block kinds
    if (profile.dense.present) blocks.push_back(cost::block_gemms(profile, profile.dense, costs, layout.training));
    if (profile.moe.present) blocks.push_back(cost::block_gemms(profile, profile.moe, costs, layout.training));
    const GemmShape head = cost::head_gemm(profile, costs);

    // Keyed by operation and the block kind whose shapes matched its FLOPs.
    std::map<std::pair<std::string, int>, Class> classes;
    measured.for_each_event([&](const TraceEvent& e) {
        if (e.kind != EventKind::Compute || e.flops <= 0 || e.end_ns <= e.start_ns) return;
        if (first_step >= 0 && e.step >= 0 && e.step < first_step) return;
        std::string_view op;
        bool backward = false;
        if (!split_name(e.name, op, backward)) {
            ++fit.unmatched;
            return;
        }
        if (left_out(op)) {
            ++fit.left_out;
            return;
        }
        const double factor = backward ? 2.0 : 1.0;  // input and weight gradients
        // The block kind whose GEMMs have the event's FLOPs (a model with dense and MoE
        // blocks names their attention alike).
        for (int k = 0; k < static_cast<int>(std::max<std::size_t>(1, blocks.size())); ++k) {
            const OpGemms g = op_gemms(op, blocks.empty() ? cost::BlockGemms{} : blocks[k], head);
            const double f = factor * g.flops();
            if (f <= 0 || std::abs(f - e.flops) > 1e-6 * f + 1) continue;
            auto& c = classes[{std::string(op) + (backward ? ".bwd" : ".fwd"), k}];
            c.flops = f;
            c.flops_over_size = factor * g.flops_over_size();
            c.seconds.push_back(static_cast<double>(e.end_ns - e.start_ns) * 1e-9);
            ++fit.op_events;
            return;
        }
        ++fit.unmatched;
    });

    // Points (u = 1/d effective, r = peak · t / F) at the median time of each class (an
    // operation preempted by another thread of a shared host moves a mean, not a median),
    // weighted by their share of the measured time: the line reproduces best the
    // operations a step spends its time in.
    std::vector<WeightedPoint> pts;  // x = u, y = r
    std::vector<double> sizes;
    for (const auto& [key, c] : classes) {
        const double t = median(c.seconds);
        pts.push_back({.x = c.flops_over_size / c.flops, .y = peak * t / c.flops,
                       .w = t * static_cast<double>(c.seconds.size())});
        sizes.push_back(c.flops / c.flops_over_size);
    }
    fit.op_classes = static_cast<int>(pts.size());
    std::sort(sizes.begin(), sizes.end());
    // Sizes within 5 % of each other count as one.
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (i == 0 || sizes[i] > sizes[i - 1] * 1.05) ++fit.sizes;
    }
    if (!sizes.empty()) fit.min_size = sizes.front(), fit.max_size = sizes.back();
    if (fit.op_events == 0) {
        fit.reason = "no compute event names an operation of the model's GEMMs with matching FLOPs";
        return fit;
    }
    if (fit.sizes < 2) {
        fit.reason = "the measured GEMMs have " + std::to_string(fit.sizes) +
                     " distinct size; the curve needs two or more";
        return fit;
    }
    const WeightedLine line = fit_weighted_line(pts);
    const double slope = line.slope;          // gemm_half_dim / gemm
    const double intercept = line.intercept;  // 1 / gemm
    if (!(intercept > 0) || !(slope >= 0)) {
        fit.reason = "the measured times do not fall with size as the model's curve does (1/gemm = " +
                     std::to_string(intercept) + ", half/gemm = " + std::to_string(slope) + ")";
        return fit;
    }
    double se = 0;
    for (const auto& p : pts) {
        const double rel = (intercept + slope * p.x) / p.y - 1;
        se += p.w * rel * rel;
    }
    fit.rms_error = std::sqrt(se / line.weight_sum);
    if (fit.rms_error > kMaxRmsError) {
        fit.reason = "the curve misses the measured operations by " +
                     std::to_string(static_cast<int>(std::lround(100 * fit.rms_error))) +
                     " % rms (more than " + std::to_string(static_cast<int>(100 * kMaxRmsError)) + " %)";
        return fit;
    }
    // The cluster reader's ranges: gemm in (0, 1], gemm_half_dim in [0, 1e6].
    fit.gemm_efficiency = std::clamp(1.0 / intercept, 1e-3, 1.0);
    fit.gemm_half_dim = std::clamp(slope / intercept, 0.0, 1e6);
    fit.fitted = true;
    return fit;
}

nlohmann::json gemm_size_fit_to_json(const GemmSizeFit& f) {
    return {{"fitted", f.fitted},
            {"reason", f.reason},
            {"op_events", f.op_events},
            {"unmatched_events", f.unmatched},
            {"left_out_events", f.left_out},
            {"op_classes", f.op_classes},
            {"sizes", f.sizes},
            {"min_size", f.min_size},
            {"max_size", f.max_size},
            {"gemm_efficiency", f.gemm_efficiency},
            {"gemm_half_dim", f.gemm_half_dim},
            {"rms_error", f.rms_error}};
}

}  // namespace meshwork::profiler
