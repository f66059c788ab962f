// What the comparison view shows: two traces opened for drawing, where each one's time axis
// starts (its first step), the statistics of each (`meshwork-cli stats`) and the
// predicted-vs-measured comparison (`meshwork-cli compare`). Computed off the UI thread by
// ComparisonLoader; the profiler's analysis does the arithmetic.
#pragma once

#include <QString>

#include <memory>

#include "profiler/analysis/memory_compare.h"
#include "profiler/analysis/memory_series.h"
#include "profiler/analysis/trace_compare.h"
#include "profiler/analysis/trace_stats.h"
#include "gui/timeline/timeline_source.h"

namespace meshwork::gui {

struct ComparedTrace {
    QString path;
    QString source_name;  // run_info().source: "meshwork-sim", "meshwork-cpu", "nsys", ...
    bool simulated = false;  // the trace says it is a simulation (trace_roles.h)
    std::shared_ptr<const TimelineSource> timeline;
    double origin_ns = 0;       // the time shown as zero: the start of the first step
    QString origin_label;       // "step 0 start" or "first event" when no step is known
    profiler::TraceStats stats;
};

struct ComparisonData {
    ComparedTrace predicted;
    ComparedTrace measured;
    profiler::TraceComparison comparison;
    bool stages_from_layout = false;  // else each rank is its own "stage"
    // Predicted memory by kind beside the measured peak per rank (`compare`'s memory part),
    // with the layout the prediction carries (else the measurement's); `memory.note` says
    // why there is nothing to compare.
    profiler::MemoryComparison memory;
    // The measured trace's memory over time per rank and device, for the memory timeline.
    std::vector<profiler::MemorySeries> memory_series;
    // The first steps of each trace left out of its per-step figures (warmup_steps.h).
    int warmup_steps = profiler::kDefaultWarmupSteps;
    // Set when the prediction was re-made on a cluster calibrated to the measured trace:
    // what was fitted, and where the calibrated cluster JSON was written.
    QString calibration_note;
    QString calibrated_cluster_path;
};

}  // namespace meshwork::gui
