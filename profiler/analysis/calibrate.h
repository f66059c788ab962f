// Fitting the cost model to a measured trace: GEMM efficiency from compute events' FLOPs
// over their time, and per link tier the bus bandwidth (and latency, when message sizes
// vary) of an alpha-beta model t = latency + S_bus / B from communication events' bytes.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "cluster/cluster_spec.h"
#include "store/trace_reader.h"

namespace meshwork::profiler {

struct LinkFit {
    int samples = 0;
    bool fitted = false;
    bool latency_fitted = false;          // enough distinct sizes for a regression
    double bus_bandwidth_bytes_per_s = 0; // B
    double latency_s = 0;
    double efficiency = 0;                // B / nominal link bandwidth, at most 1
};

struct CalibrationFit {
    std::int64_t compute_samples = 0;
    double achieved_flops_per_s = 0;
    double gemm_efficiency = 0;  // achieved / peak of `dtype`; 0 when not fitted
    LinkFit intra_node, inter_node;
};

// Collectives whose group fits in one node (group_size <= gpus_per_node) count as
// intra-node, the others as inter-node; events without bytes or group size are skipped.
CalibrationFit fit_calibration(const TraceReader& measured, const ClusterSpec& cluster, DType dtype);
// The cluster with the fitted figures applied (unfitted ones left as they were).
ClusterSpec apply_calibration(ClusterSpec cluster, const CalibrationFit& fit);
nlohmann::json calibration_to_json(const CalibrationFit& fit);

}  // namespace meshwork::profiler
