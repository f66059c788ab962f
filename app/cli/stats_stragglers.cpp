#include "app/cli/stats_stragglers.h"

#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/format.h"
#include "profiler/analysis/rank_step_bound.h"
#include "profiler/analysis/rank_steps.h"
#include "profiler/analysis/stragglers.h"
#include "profiler/analysis/trace_layout.h"

namespace meshwork::cli {

namespace {

nlohmann::json to_json(const profiler::RankStepMatrix& m, const profiler::StragglerReport& report, bool by_stage) {
    nlohmann::json cells = nlohmann::json::array();
    for (std::size_t r = 0; r < m.ranks.size(); ++r) {
        for (std::size_t s = 0; s < m.steps.size(); ++s) {
            const auto& c = m.at(r, s);
            if (!c.present) continue;
            cells.push_back({{"rank", m.ranks[r]},
                             {"step", m.steps[s]},
                             {"step_s", c.step_s},
                             {"compute_s", c.compute_s},
                             {"compute_on_cpu_s", c.compute_on_cpu_s >= 0 ? nlohmann::json(c.compute_on_cpu_s)
                                                                          : nlohmann::json(nullptr)},
                             {"exposed_comm_s", c.exposed_comm_s},
                             {"collective_wait_s", c.collective_wait_s},
                             {"waited_for_rank", c.waited_for_rank >= 0 ? nlohmann::json(c.waited_for_rank)
                                                                        : nlohmann::json(nullptr)}});
        }
    }
    auto list = [](const std::vector<profiler::Straggler>& v) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& st : v) {
            out.push_back({{"rank", st.rank},
                           {"step", st.step},
                           {"slowdown", st.slowdown},
                           {"slowdown_basis", st.slowdown_on_cpu ? "cpu_time" : "wall_time"},
                           {"reason", profiler::to_string(st.reason)},
                           {"peers", st.peers},
                           {"waited_by", st.waited_by},
                           {"peer_wait_s", st.peer_wait_s},
                           {"wait_s", st.own_wait_s},
                           {"stage_step_s", st.step_s}});
        }
        return out;
    };
    return {{"steps", m.steps},
            {"steps_checked", report.steps_checked},
            {"peers_by_pipeline_stage", by_stage},
            {"cells", cells},
            {"stragglers", list(report.stragglers)},
            {"transient", list(report.transient)}};
}

std::string times(double v) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(2) << v << "x";
    return os.str();
}

void print_human(const profiler::RankStepMatrix& m, const profiler::StragglerReport& report, bool by_stage) {
    std::cout << "\nper rank and step: " << m.ranks.size() << " ranks, " << m.steps.size() << " steps";
    if (m.steps.size() > report.steps_checked.size()) {
        std::cout << " (step " << m.steps.front() << " is warm-up, not judged)";
    }
    std::cout << "\n";
    if (m.steps.empty()) {
        std::cout << "no event carries a step number: per-step figures and stragglers need steps "
                     "(docs/profiler.md)\n";
        return;
    }
    std::cout << "\nrank  step   step time     compute     exposed   coll wait  waited for\n";
    for (std::size_t r = 0; r < m.ranks.size(); ++r) {
        for (std::size_t s = 0; s < m.steps.size(); ++s) {
            const auto& c = m.at(r, s);
            if (!c.present) continue;
            std::cout << pad_left(std::to_string(m.ranks[r]), 4) << pad_left(std::to_string(m.steps[s]), 6)
                      << pad_left(human_seconds(c.step_s), 12) << pad_left(human_seconds(c.compute_s), 12)
                      << pad_left(human_seconds(c.exposed_comm_s), 12)
                      << pad_left(human_seconds(c.collective_wait_s), 12)
                      << pad_left(c.waited_for_rank >= 0 ? std::to_string(c.waited_for_rank) : "-", 12) << "\n";
        }
    }
    std::cout << "\nstragglers (peers: " << (by_stage ? "the ranks of the same pipeline stage" : "every rank")
              << "):\n";
    auto print = [](const profiler::Straggler& st) {
        std::cout << "  rank " << st.rank << "  step " << st.step << "  " << profiler::to_string(st.reason)
                  << "  compute " << times(st.slowdown) << " its peers' median"
                  << (st.slowdown_on_cpu ? " (CPU time)" : "") << "; " << st.waited_by << " of "
                  << st.peers << " peers waited for it, median wait " << human_seconds(st.peer_wait_s)
                  << " (its own " << human_seconds(st.own_wait_s) << ") of a " << human_seconds(st.step_s)
                  << " step\n";
    };
    if (report.stragglers.empty()) std::cout << "  none: no rank held its peers back in half the steps or more\n";
    for (const auto& st : report.stragglers) print(st);
    if (!report.transient.empty()) {
        std::cout << "\none-off delays (a rank held its peers back in fewer than half the steps):\n";
        for (const auto& st : report.transient) print(st);
    }
}

}  // namespace

namespace {

struct Report {
    profiler::RankStepMatrix matrix;
    profiler::StragglerReport stragglers;
    bool by_stage = false;
};

Report report_of(const profiler::TraceReader& trace) {
    Report r;
    r.matrix = profiler::compute_rank_steps_bounded(trace);
    std::optional<DeviceMesh> mesh;
    if (const auto layout = profiler::trace_layout(trace)) mesh = layout->mesh();
    r.stragglers = profiler::find_stragglers(r.matrix, mesh);
    r.by_stage = mesh.has_value();
    return r;
}

}  // namespace

void add_straggler_report(const profiler::TraceReader& trace, nlohmann::json& out) {
    const Report r = report_of(trace);
    out.update(to_json(r.matrix, r.stragglers, r.by_stage));
}

void print_straggler_report(const profiler::TraceReader& trace) {
    const Report r = report_of(trace);
    print_human(r.matrix, r.stragglers, r.by_stage);
}

}  // namespace meshwork::cli
