#include "profiler/analysis/trace_compare.h"

#include <cmath>
#include <map>

#include "profiler/analysis/trace_stats.h"

namespace meshwork::profiler {

namespace {

struct Means {
    double step = 0, compute = 0, comm = 0, exposed = 0, idle = 0;
    int ranks = 0;
    // One step of each rank (RankStats' per-step means), so that a run of several steps
    // compares with a prediction of one.
    void add(const RankStats& r) {
        step += r.step_s;
        compute += r.step_compute_s;
        comm += r.step_comm_s;
        exposed += r.step_exposed_comm_s;
        idle += r.step_idle_s;
        ++ranks;
    }
    [[nodiscard]] Means mean() const {
        Means m = *this;
        if (ranks > 0) {
            const double n = ranks;
            m.step /= n, m.compute /= n, m.comm /= n, m.exposed /= n, m.idle /= n;
        }
        return m;
    }
};

double relative_error(double predicted, double measured) {
    if (measured > 0) return (predicted - measured) / measured;
    return predicted > 0 ? 1.0 : 0.0;
}

std::vector<CategoryError> categories(const Means& p, const Means& m) {
    auto row = [](const char* name, double pv, double mv, bool checked) {
        return CategoryError{name, pv, mv, relative_error(pv, mv), checked};
    };
    return {row("step", p.step, m.step, true), row("compute", p.compute, m.compute, true),
            row("communication", p.comm, m.comm, true),
            row("exposed_communication", p.exposed, m.exposed, false), row("idle", p.idle, m.idle, false)};
}

double max_abs(const std::vector<CategoryError>& v) {
    double e = 0;
    for (const auto& c : v) {
        if (c.checked) e = std::max(e, std::fabs(c.error));
    }
    return e;
}

nlohmann::json rows_json(const std::vector<CategoryError>& v) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& c : v) {
        out.push_back({{"category", c.category}, {"predicted_s", c.predicted_s}, {"measured_s", c.measured_s},
                       {"error", c.error}, {"checked", c.checked}});
    }
    return out;
}

}  // namespace

TraceComparison compare_traces(const TraceReader& predicted, const TraceReader& measured,
                               const std::function<int(int)>& stage_of, int warmup_steps) {
    const auto ps = compute_stats(predicted, 0, warmup_steps);
    const auto ms = compute_stats(measured, 0, warmup_steps);
    Means p_all, m_all;
    std::map<int, std::pair<Means, Means>> by_stage;
    for (const auto& r : ps.ranks) {
        p_all.add(r);
        by_stage[stage_of(r.rank)].first.add(r);
    }
    for (const auto& r : ms.ranks) {
        m_all.add(r);
        by_stage[stage_of(r.rank)].second.add(r);
    }
    TraceComparison out;
    out.categories = categories(p_all.mean(), m_all.mean());
    out.max_abs_error = max_abs(out.categories);
    for (const auto& [stage, pm] : by_stage) {
        // A stage only one side has cannot be compared (the simulator writes one
        // representative rank per stage; a measured trace may hold a subset of ranks).
        if (pm.first.ranks == 0 || pm.second.ranks == 0) continue;
        StageComparison s;
        s.stage = stage;
        s.predicted_ranks = pm.first.ranks;
        s.measured_ranks = pm.second.ranks;
        s.categories = categories(pm.first.mean(), pm.second.mean());
        out.max_abs_error = std::max(out.max_abs_error, max_abs(s.categories));
        out.stages.push_back(std::move(s));
    }
    return out;
}

nlohmann::json comparison_to_json(const TraceComparison& c) {
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& s : c.stages) {
        stages.push_back({{"stage", s.stage}, {"predicted_ranks", s.predicted_ranks},
                          {"measured_ranks", s.measured_ranks}, {"categories", rows_json(s.categories)}});
    }
    return {{"categories", rows_json(c.categories)}, {"stages", stages}, {"max_abs_error", c.max_abs_error}};
}

}  // namespace meshwork::profiler
