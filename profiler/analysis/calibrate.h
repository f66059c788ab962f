// Fitting the cost model to a measured trace: GEMM efficiency from compute events' FLOPs
// over their time, and per link tier the bus bandwidth (and latency, when message sizes
// vary) of an alpha-beta model t = latency + S_bus / B from communication events' bytes.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/cluster/cluster_spec.h"
#include "core/cost/gemm_curve_fit.h"
#include "core/layout/layout.h"
#include "profiler/analysis/gemm_size_fit.h"
#include "profiler/analysis/memory_compare.h"
#include "profiler/analysis/warmup_steps.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

struct LinkFit {
    int samples = 0;  // collective events (receives left out)
    bool fitted = false;
    bool latency_fitted = false;          // enough distinct sizes for a regression
    double bus_bandwidth_bytes_per_s = 0; // B
    double latency_s = 0;
    double efficiency = 0;                // B / nominal link bandwidth, at most 1
};

// A CPU run's scheduler counters (the CPU engine's "scheduler" track, docs/trace-format.md):
// means over ranks of one step (the steps after the warm-up ones, warmup_steps.h).
struct SchedulerEvidence {
    bool recorded = false;          // the trace has thread.compute_on_cpu_s counters
    bool schedstat = false;         // ... and thread.on_cpu_s / thread.run_queue_wait_s
    int steps = 0;                  // rank-steps averaged
    double on_cpu_s = 0;            // a rank thread's time on a core in one step
    double run_queue_wait_s = 0;    // ... runnable but waiting for a core (all of it)
    double timeslices = 0;          // ... times it was put on a core
    double compute_on_cpu_s = 0;    // ... CPU time inside compute ops
    // ... CPU time inside collectives, sends and receives (thread.comm_on_cpu_s; 0 in traces
    // recorded before it): the links are fitted on those spans, which hold it already.
    bool comm_recorded = false;
    double comm_on_cpu_s = 0;
    double compute_span_s = 0;      // ... wall time of its compute spans (trace stats)
    // Waiting for a core while computing: compute spans' wall time beyond their CPU time
    // (a thread inside a compute op never blocks, so the difference is run-queue wait).
    double compute_core_wait_s = 0;
    // The host's CPU accounting over the steps after the warm-up ones (host.busy_cpu_s and
    // process.cpu_s counters): the cores other processes used meanwhile, on average.
    bool host_recorded = false;
    double interval_s = 0;          // the interval the accounting spans
    double process_cores = 0;       // this run's process
    double others_cores = 0;        // every other process of the host at nice <= 0
    double niced_cores = 0;         // processes at a positive nice (not counted in others)
    // The simulated compute wait of the layout that ran at the fitted cores: what the
    // run's threads make each other wait (0 when not simulated).
    double predicted_core_wait_s = 0;
};

struct CalibrationFit {
    std::int64_t compute_samples = 0;
    double achieved_flops_per_s = 0;
    double gemm_efficiency = 0;  // the fitted Efficiency::gemm; 0 when not fitted
    // With the layout that ran, from the operations' GEMM shapes (gemm_size_fit.h): the
    // fitted Efficiency::gemm_half_dim; 0 when the size curve was not fitted.
    GemmSizeFit gemm_sizes;
    // The curve's shape measured on the host (calibrate --measure-gemm,
    // core/engine/cpu/gemm_pace.h); when fitted it sets gemm_half_dim and the trace's compute
    // sets the level (compute_scale), in place of the size fit from the trace.
    cost::GemmCurve gemm_curve;
    double gemm_half_dim = 0;
    // With the layout that ran: the factor applied to the attention and memory efficiencies
    // so that the cost model's compute time of one step equals the measured one, after the
    // GEMM efficiency curve is fitted. When the curve could not be fitted (too few sizes),
    // the single scale of the GEMM efficiency too (the size dependence, d/(d +
    // gemm_half_dim), then kept as it was); 0 when not used.
    double compute_scale = 0;
    double predicted_compute_s = 0, measured_compute_s = 0;  // one step, before the fit
    double predicted_gemm_s = 0;  // one step's GEMM time with the fitted curve (size fit only)
    // Ranks sharing a host's cores (ClusterSpec::host_cores): with the layout that ran, on a
    // host whose trace records fewer cores than the node has ranks, the cores the ranks got;
    // 0 when not fitted. With the host's CPU accounting (`sched.host_recorded`): the recorded
    // cores less those other processes used during the run's steps (a quiet host keeps
    // them all). With scheduler counters but no accounting: the recorded cores. Without
    // either (older traces): ranks per node × a rank's compute of one step / the measured
    // step, at most the recorded cores.
    double host_cores = 0;
    // With host_cores and schedstat counters: a rank thread's CPU outside compute ops per
    // layer-pass (one layer's forward and backward of one micro-batch): (on_cpu_s −
    // compute_on_cpu_s) / (layers per rank × micro-batches); 0 when not fitted
    // (ClusterSpec::host_cpu_per_layer_pass_s).
    double host_cpu_per_layer_pass_s = 0;
    SchedulerEvidence sched;
    double recorded_host_cores = 0;  // the trace's run info "host_cores"; 0 when absent
    double measured_step_s = 0;      // mean over ranks of one step
    LinkFit intra_node, inter_node;
};

// Links: the cost model's own alpha-beta form t = steps·latency + S·busfactor / B
// (steps = 2(n−1) for an all-reduce, n−1 for all-gather and reduce-scatter, 1 for
// all-to-all and send), fitted by least squares over the classes of collectives (one
// collective, size and group each) at their mean event times, weighted by their counts.
// Receives are left out (their time is mostly waiting for the sender), and so are the
// warm-up steps (`warmup_steps`, warmup_steps.h; as compare leaves them out), of the
// compute events too. Collectives whose group fits in one node
// (group_size <= gpus_per_node) fit the intra-node tier, the others the inter-node tier;
// events without bytes or group size are skipped. Each event counts with its whole
// duration, waiting for late peers included: that wait is time the rank spends in the
// collective on that machine (on a CPU host with more ranks than cores, a peer is late
// because it is not running).
//
// Compute, with `layout` (the one that ran): the GEMM efficiency curve (gemm and
// gemm_half_dim) from the operations' shapes, then `compute_scale` for the rest of the
// compute from simulating the layout (or, when the curve cannot be fitted, one scale for
// all of it); on a CPU host with more ranks than cores, `host_cores` as above.
// Without one: Efficiency::gemm = FLOPs / time of compute events / peak of `dtype`.
// With `gemm_curve` (fitted, with the layout that ran): the GEMM curve's shape is the
// measured one (its gemm_half_dim, and its asymptote as the starting efficiency), and one
// scale fitted to the trace's compute sets the level of every compute rate; the trace's
// own size fit is not used (the host's grid spans the sizes other workloads reach, one
// run's operations do not).
CalibrationFit fit_calibration(const TraceReader& measured, const ClusterSpec& cluster, DType dtype,
                               const Layout* layout = nullptr, int warmup_steps = kDefaultWarmupSteps,
                               const cost::GemmCurve* gemm_curve = nullptr);
// The cluster with the fitted figures applied (unfitted ones left as they were).
ClusterSpec apply_calibration(ClusterSpec cluster, const CalibrationFit& fit);

struct Reprediction {
    CalibrationFit fit;
    MemoryReserveFit memory;  // the memory reserve, when the trace has memory events
    ClusterSpec cluster;  // the calibrated cluster
};
// Closes the loop in one call (the GUI's compare view): fits `layout`'s cluster to the
// measured trace (its memory reserve too, fit_memory_reserve) (in `layout`'s precision, with `layout` as the layout that ran) and
// simulates the layout on the calibrated cluster into a new trace at `predicted_out`.
// Throws InputError when there is nothing to fit.
Reprediction calibrate_and_repredict(const TraceReader& measured, const Layout& layout,
                                     const std::string& predicted_out,
                                     int warmup_steps = kDefaultWarmupSteps);
nlohmann::json calibration_to_json(const CalibrationFit& fit);

}  // namespace meshwork::profiler
