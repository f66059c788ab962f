// meshwork-cli compare: predicted vs measured trace, per category and per pipeline stage.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "profiler/analysis/memory_compare.h"
#include "profiler/analysis/trace_compare.h"
#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "app/cli/exit_codes.h"
#include "app/cli/format.h"
#include "core/layout/layout_json.h"
#include "profiler/analysis/trace_layout.h"
#include "profiler/store/trace_reader.h"
#include "app/cli/verb.h"
#include "app/cli/warmup_flag.h"

namespace meshwork::cli {

namespace {

// The layout that says which stage each rank is in: --layout, else the one a trace carries.
std::optional<Layout> layout_for(const std::string& flag, const profiler::TraceReader& a,
                                 const profiler::TraceReader& b) {
    if (!flag.empty()) return load_layout(flag);
    return profiler::first_trace_layout({&a, &b});
}

void print_rows(const std::vector<profiler::CategoryError>& rows) {
    for (const auto& c : rows) {
        std::ostringstream err;
        err << std::showpos << std::fixed << std::setprecision(1) << 100 * c.error << "%";
        std::cout << "  " << pad_right(c.category, 23) << pad_left(human_seconds(c.predicted_s), 11)
                  << pad_left(human_seconds(c.measured_s), 11) << pad_left(err.str(), 10)
                  << (c.checked ? "" : "  (not checked)") << "\n";
    }
}

// Predicted per-kind memory beside the measured peak, per rank.
void print_memory(const profiler::MemoryComparison& c) {
    std::cout << "\nmemory per rank: predicted by kind (the cost model, the rank's stage) beside the measured peak\n";
    if (!c.has_memory || std::none_of(c.ranks.begin(), c.ranks.end(), [](const auto& r) { return r.measured; })) {
        std::cout << "  not compared: " << c.note << "\n";
        return;
    }
    std::cout << "  rank stage    weights  gradients  optimizer activations    buffers    reserve  predicted"
                 "   measured     error\n";
    for (const auto& r : c.ranks) {
        const auto b = [](std::int64_t v) { return pad_left(human_bytes(static_cast<double>(v)), 11); };
        std::cout << "  " << pad_left(std::to_string(r.rank), 4) << pad_left(std::to_string(r.stage), 6)
                  << b(r.predicted.weights) << b(r.predicted.gradients) << b(r.predicted.optimizer)
                  << pad_left(human_bytes(static_cast<double>(r.predicted.activations)), 12) << b(r.predicted.buffers)
                  << b(r.predicted.reserve) << b(r.predicted.peak);
        if (!r.measured) {
            std::cout << "  (no memory events)\n";
            continue;
        }
        std::ostringstream err;
        err << std::showpos << std::fixed << std::setprecision(1) << 100 * r.error << "%";
        std::cout << b(r.measured_peak_bytes) << pad_left(err.str(), 10) << "\n";
        std::cout << "            measured at the peak:";
        for (const auto& [category, bytes] : r.at_peak_by_category) {
            std::cout << " " << category << " " << human_bytes(static_cast<double>(bytes)) << ";";
        }
        std::cout << " allocated peak " << human_bytes(static_cast<double>(r.allocated_peak_bytes))
                  << ", reserved peak " << human_bytes(static_cast<double>(r.reserved_peak_bytes)) << "\n";
    }
    std::cout << "  memory max |error| " << std::fixed << std::setprecision(1) << 100 * c.max_abs_error << "%\n";
}

}  // namespace

Verb add_compare_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("compare", "Compare a predicted trace with a measured one, per time "
                                              "category and per pipeline stage");
    auto predicted = std::make_shared<std::string>();
    auto measured = std::make_shared<std::string>();
    auto layout = std::make_shared<std::string>();
    auto max_error = std::make_shared<double>(-1);
    auto json = std::make_shared<bool>(false);
    auto warmup_steps = std::make_shared<int>();
    auto cluster = std::make_shared<std::string>();
    cmd->add_option("PREDICTED", *predicted, "The predicted trace (meshwork-cli simulate --trace)")->required();
    cmd->add_option("MEASURED", *measured, "The measured trace (run --profile, import-trace, merge)")->required();
    cmd->add_option("--layout", *layout, "Layout for the rank -> stage mapping (default: the one in a trace)");
    cmd->add_option("--max-error", *max_error,
                    "Fail (exit 3) when any checked category (step, compute, communication), overall "
                    "or per stage, is off by more than this fraction (0.1 = 10%)");
    cmd->add_option("--cluster", *cluster, "Cluster preset or JSON the memory is predicted on, e.g. one written by "
                                           "calibrate (default: the layout's)");
    add_warmup_steps_flag(cmd, *warmup_steps);
    cmd->add_flag("--json", *json, "Print JSON: warmup_steps, categories[] (category, predicted_s, measured_s, error, "
                                   "checked), stages[], max_abs_error, passed, memory (has_memory, note, max_abs_error, "
                                   "ranks[]: rank, stage, predicted{weights_bytes, gradients_bytes, optimizer_bytes, "
                                   "activations_bytes, buffers_bytes, reserve_bytes, peak_bytes}, measured, "
                                   "measured_peak_bytes, allocated_peak_bytes, reserved_peak_bytes, "
                                   "at_peak_by_category, error)");
    cmd->footer(
        "Per-rank means of one step of each trace (a trace of several steps: the mean over its "
        "steps after the warm-up ones, --warmup-steps); error = (predicted - measured) / measured.\n"
        "Memory, when the measured trace has memory events (run --profile, an imported memory snapshot or "
        "profile_memory=True trace) and a layout is known: per rank the cost model's predicted kinds "
        "beside the measured peak (reserved, else allocated); it does not count towards --max-error.\n"
        "Exit codes: 0 success, 1 runtime failure, 2 bad input (the message names the file), "
        "3 --max-error not met.");
    return {cmd, [predicted, measured, layout, max_error, json, warmup_steps, cluster]() {
                const auto p = profiler::TraceReader::open(*predicted);
                const auto m = profiler::TraceReader::open(*measured);
                const auto lay = layout_for(*layout, p, m);
                std::optional<DeviceMesh> mesh;
                if (lay) mesh.emplace(lay->mesh());
                const auto stage_of = [&](int rank) {
                    return mesh && rank < mesh->world_size() ? mesh->coords(rank).pp : rank;
                };
                const auto c = profiler::compare_traces(p, m, stage_of, *warmup_steps);
                std::optional<profiler::MemoryComparison> memory;
                if (lay) {
                    Layout l = *lay;
                    if (!cluster->empty()) l.cluster = load_cluster(*cluster);
                    memory = profiler::compare_memory(l, m);
                } else if (!cluster->empty()) {
                    throw InputError("<flags>", "--cluster", "no layout to predict memory with (pass --layout)");
                }
                const bool check = *max_error >= 0;
                const bool passed = !check || c.max_abs_error <= *max_error;
                if (*json) {
                    auto j = profiler::comparison_to_json(c);
                    j["warmup_steps"] = *warmup_steps;
                    j["predicted"] = *predicted;
                    j["measured"] = *measured;
                    j["stage_mapping"] = mesh ? "layout" : "rank";
                    if (check) j["max_error"] = *max_error;
                    j["memory"] = memory ? profiler::memory_comparison_to_json(*memory)
                                         : nlohmann::json{{"has_memory", false},
                                                          {"note", "no layout known: pass --layout to predict memory"}};
                    j["passed"] = passed;
                    std::cout << j.dump(2) << "\n";
                } else {
                    std::cout << "predicted " << *predicted << "\nmeasured  " << *measured
                              << "\nwarm-up   the first " << *warmup_steps
                              << " step(s) of a trace of several left out\n\n"
                              << "  category                 predicted   measured     error\n";
                    print_rows(c.categories);
                    for (const auto& s : c.stages) {
                        std::cout << (mesh ? "stage " : "rank ") << s.stage << " (" << s.predicted_ranks
                                  << " predicted, " << s.measured_ranks << " measured ranks)\n";
                        print_rows(s.categories);
                    }
                    if (memory) print_memory(*memory);
                    else std::cout << "\nmemory: not compared (no layout known: pass --layout)\n";
                    std::cout << "max |error| " << std::fixed << std::setprecision(1) << 100 * c.max_abs_error
                              << "%" << (check ? (passed ? " <= " : " > ") + std::to_string(*max_error) : "")
                              << "\n";
                }
                if (!passed) {
                    std::cerr << "error: max |error| " << c.max_abs_error << " exceeds --max-error " << *max_error
                              << "\n";
                    return kExitCheckFailed;
                }
                return kExitOk;
            }};
}

namespace {
Verb make_compare_verb(CLI::App& app) { return add_compare_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(90, make_compare_verb);

}  // namespace meshwork::cli
