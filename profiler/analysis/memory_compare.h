// Predicted memory beside measured, per rank: the cost model's per-kind memory of the rank's
// pipeline stage (core/cost/estimate.h StageMemory) against the trace's measured peaks
// (memory_stats.h), and the fit of the cost model's memory reserve (ClusterSpec::
// memory_reserve: fixed bytes + a fragmentation share of activations and buffers) to what
// the measurement holds beyond the predicted kinds. Rules: docs/profiler.md "Predicted
// memory beside measured".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/cluster/cluster_spec.h"
#include "core/layout/layout.h"

namespace meshwork::profiler {

class TraceReader;

struct PredictedMemory {
    std::int64_t weights = 0, gradients = 0, optimizer = 0, activations = 0, buffers = 0;
    std::int64_t reserve = 0;  // fixed overhead + fragmentation (the cluster's memory_reserve)
    std::int64_t peak = 0;     // the sum of the above
    [[nodiscard]] std::int64_t kinds() const { return weights + gradients + optimizer + activations + buffers; }
    [[nodiscard]] std::int64_t dynamic() const { return activations + buffers; }  // what fragmentation scales
};

struct RankMemoryComparison {
    int rank = 0;
    int stage = 0;
    PredictedMemory predicted;
    bool measured = false;          // the trace has memory events for this rank
    int device = 0;                 // the measured device (-1 the host)
    std::int64_t allocated_peak_bytes = 0;
    std::int64_t reserved_peak_bytes = 0;
    // What the predicted peak is held against: the reserved peak (what the allocator held
    // from the device: tensors and its cache), or the allocated peak where the source records
    // no reserved totals.
    std::int64_t measured_peak_bytes = 0;
    std::map<std::string, std::int64_t> at_peak_by_category;  // memory_stats' categories
    double error = 0;               // (predicted.peak − measured_peak) / measured_peak
};

struct MemoryComparison {
    bool has_memory = false;        // the measured trace has memory events
    std::string note;               // why there is nothing to compare, in words (when !has_memory)
    std::vector<RankMemoryComparison> ranks;  // every rank of the layout, measured or not
    double max_abs_error = 0;       // over measured ranks
};

// `layout`: the layout that ran, with the cluster to predict on (its memory_reserve).
MemoryComparison compare_memory(const Layout& layout, const TraceReader& measured);
nlohmann::json memory_comparison_to_json(const MemoryComparison& c);

struct MemoryReserveFit {
    bool fitted = false;
    int ranks = 0;                  // measured ranks the fit used
    std::int64_t fixed_bytes = 0;   // the fitted MemoryReserve::fixed_bytes
    double fragmentation = 0;       // the fitted MemoryReserve::fragmentation
    std::string rule;               // which rule of the fit applied, in words
    double max_abs_error_before = 0, max_abs_error_after = 0;  // of the peaks, over the ranks
};
// Least squares of (measured peak − predicted kinds) = fixed + fragmentation · (activations
// + buffers) over the measured ranks; see docs/profiler.md for the rules when the ranks do
// not tell the two apart and when a term comes out negative. Not fitted without memory.
MemoryReserveFit fit_memory_reserve(const Layout& layout, const TraceReader& measured);
ClusterSpec apply_memory_reserve(ClusterSpec cluster, const MemoryReserveFit& fit);
nlohmann::json memory_reserve_fit_to_json(const MemoryReserveFit& fit);

}  // namespace meshwork::profiler
