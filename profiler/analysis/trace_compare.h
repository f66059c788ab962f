// Predicted vs measured: the per-rank time categories of two traces (any two: a simulated
// timeline and a measured one, or two measured runs), overall and per pipeline stage.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/analysis/warmup_steps.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

struct CategoryError {
    std::string category;  // step, compute, communication, exposed_communication, idle
    double predicted_s = 0;
    double measured_s = 0;
    double error = 0;      // (predicted - measured) / measured; 0 when both are 0
    bool checked = false;  // counts towards max_abs_error (step, compute, communication)
};

struct StageComparison {
    int stage = 0;
    int predicted_ranks = 0, measured_ranks = 0;
    std::vector<CategoryError> categories;
};

struct TraceComparison {
    std::vector<CategoryError> categories;  // means over ranks of each trace
    std::vector<StageComparison> stages;
    double max_abs_error = 0;               // over checked categories, overall and per stage
};

// `stage_of(rank)`: the pipeline stage of a rank (identity when no layout is known).
// `warmup_steps`: the first steps of each trace left out of its per-step means
// (warmup_steps.h; a one-step trace, as simulate writes, keeps its step).
TraceComparison compare_traces(const TraceReader& predicted, const TraceReader& measured,
                               const std::function<int(int)>& stage_of,
                               int warmup_steps = kDefaultWarmupSteps);
nlohmann::json comparison_to_json(const TraceComparison& c);

}  // namespace meshwork::profiler
