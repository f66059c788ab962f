// meshwork-cli calibrate: fit GEMM efficiency and link bandwidths to a measured trace and
// write the calibrated cluster JSON; with a layout, show the prediction error before/after.
#include <unistd.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "profiler/analysis/calibrate.h"
#include "profiler/analysis/memory_compare.h"
#include "core/engine/cpu/gemm_pace.h"
#include "profiler/analysis/trace_compare.h"
#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "app/cli/exit_codes.h"
#include "core/layout/layout_json.h"
#include "profiler/analysis/trace_layout.h"
#include "core/sim/simulate.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "app/cli/verb.h"
#include "app/cli/warmup_flag.h"

namespace meshwork::cli {

namespace {

// Simulates `layout` into a scratch trace and compares it with `measured`.
profiler::TraceComparison prediction_error(const Layout& layout, const profiler::TraceReader& measured,
                                           int warmup_steps) {
    const auto dir = std::filesystem::temp_directory_path();
    const std::string path =
        (dir / ("meshwork-calibrate-" + std::to_string(::getpid()) + ".sqlite")).string();
    struct Cleanup {
        std::string p;
        ~Cleanup() {
            std::error_code ec;
            for (const char* s : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(p + s, ec);
        }
    } cleanup{path};
    {
        auto w = profiler::TraceWriter::create(path);
        simulate_layout(layout, w.get());
        w->close();
    }
    const auto predicted = profiler::TraceReader::open(path);
    const DeviceMesh mesh = layout.mesh();
    return profiler::compare_traces(predicted, measured, [&](int rank) {
        return rank < mesh.world_size() ? mesh.coords(rank).pp : rank;
    }, warmup_steps);
}

std::string percent(double f) {
    std::ostringstream os;
    os << std::showpos << std::fixed << std::setprecision(1) << 100 * f << "%";
    return os.str();
}

}  // namespace

Verb add_calibrate_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("calibrate", "Fit the cost model's GEMM efficiency and link bandwidths "
                                                "to a measured trace; write a cluster JSON");
    auto trace_path = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto layout_path = std::make_shared<std::string>();
    auto cluster_name = std::make_shared<std::string>();
    auto dtype_name = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto warmup_steps = std::make_shared<int>();
    auto measure_gemm = std::make_shared<bool>(false);
    cmd->add_option("MEASURED", *trace_path, "A measured trace with FLOPs on compute events and bytes and "
                                             "group sizes on collectives")->required();
    cmd->add_option("--out", *out, "The calibrated cluster JSON to write")->required();
    cmd->add_option("--layout", *layout_path, "The layout that ran (default: the one in the trace); "
                                              "enables the before/after prediction error");
    cmd->add_option("--cluster", *cluster_name, "Cluster preset or JSON to start from (default: the layout's)");
    cmd->add_option("--dtype", *dtype_name, "Precision whose peak the GEMM efficiency refers to "
                                            "(default: the layout's, else bf16)");
    add_warmup_steps_flag(cmd, *warmup_steps);
    cmd->add_flag("--measure-gemm", *measure_gemm,
                  "CPU runs: time the host's sgemm over a grid of shapes (d = min(m, n, k) from 16 to 256, "
                  "about a second) and take the GEMM curve's shape (gemm_half_dim) from it; the trace sets "
                  "the level. Needs the layout (or --layout) and a cluster whose device is the host's CPU");
    cmd->add_flag("--json", *json, "Print JSON: out, warmup_steps, fit (gemm_efficiency, gemm_half_dim, gemm_size_fit, gemm_curve, "
                                   "compute_scale, host_cores, host_cpu_per_layer_pass_s, scheduler, intra_node, "
                                   "inter_node), memory (fitted, ranks, fixed_bytes, fragmentation, rule, "
                                   "max_abs_error_before, max_abs_error_after), cluster, "
                                   "error_before, error_after");
    cmd->footer("With the layout that ran, the GEMM efficiency and its half size (gemm_half_dim) are "
                "fitted to the measured operations' sizes; with fewer than two sizes, one scale. With "
                "--measure-gemm the half size is the one timed on this host and one scale sets the level.\n"
                "A CPU run's scheduler counters give the compute (its threads' CPU time in compute ops), "
                "the host cores (the recorded ones less what other processes at nice <= 0 used "
                "meanwhile) and the threads' CPU outside compute ops and collectives per layer-pass.\n"
                "Collectives within one node's GPU count fit the intra-node link, larger groups the "
                "inter-node link.\nWith the layout that ran and memory events in the trace (run --profile, a "
                "memory snapshot), the memory reserve (memory_reserve: fixed_bytes + fragmentation x "
                "(activations + buffers)) is fitted to each rank's measured peak less the predicted kinds "
                "(docs/profiler.md, \"Predicted memory beside measured\").\nExit codes: 0 success, 1 runtime failure, 2 bad input (the message "
                "names the file and what is wrong).");
    return {cmd, [=]() {
                const auto measured = profiler::TraceReader::open(*trace_path);
                std::optional<Layout> layout;
                if (!layout_path->empty()) {
                    layout = load_layout(*layout_path);
                } else {
                    layout = profiler::trace_layout(measured);
                }
                ClusterSpec cluster;
                if (!cluster_name->empty()) cluster = load_cluster(*cluster_name);
                else if (layout) cluster = layout->cluster;
                else throw InputError("<flags>", "--cluster", "needed: the trace carries no layout and --layout is not given");
                DType dtype = layout ? layout->training.dtype : DType::Bf16;
                if (!dtype_name->empty() && !parse_dtype(*dtype_name, dtype)) {
                    throw InputError("<flags>", "--dtype", "unknown precision '" + *dtype_name + "'");
                }
                std::optional<cost::GemmCurve> curve;
                if (*measure_gemm) {
                    if (!layout) throw InputError("<flags>", "--measure-gemm", "needs the layout that ran (--layout)");
                    if (cluster.gpu.kind != "cpu") {
                        throw InputError("<flags>", "--measure-gemm",
                                         "the cluster's device is '" + cluster.gpu.kind +
                                             "', not the host's CPU: its GEMMs cannot be timed here");
                    }
                    const auto timings = engine::measure_sgemm(engine::sgemm_grid());
                    curve = cost::fit_gemm_curve(timings, cluster.gpu.peak_flops(dtype));
                }
                const auto fit = profiler::fit_calibration(measured, cluster, dtype,
                                                           layout ? &*layout : nullptr, *warmup_steps,
                                                           curve ? &*curve : nullptr);
                // Memory: the reserve beyond the predicted kinds, with the layout that ran
                // (profiler/analysis/memory_compare.h).
                profiler::MemoryReserveFit memory_fit;
                if (layout) {
                    Layout l = *layout;
                    l.cluster = cluster;
                    memory_fit = profiler::fit_memory_reserve(l, measured);
                } else {
                    memory_fit.rule = "not fitted: the layout that ran is needed (--layout)";
                }
                if (fit.gemm_efficiency <= 0 && !fit.intra_node.fitted && !fit.inter_node.fitted && !memory_fit.fitted) {
                    throw InputError(*trace_path, "events",
                                     "nothing to fit: no compute event carries FLOPs, no collective carries "
                                     "bytes and a group size, and no memory events with the layout that ran");
                }
                ClusterSpec calibrated = profiler::apply_memory_reserve(profiler::apply_calibration(cluster, fit), memory_fit);
                calibrated.description = cluster.description + " (calibrated from " + *trace_path + ")";
                std::optional<profiler::TraceComparison> before, after;
                if (layout) {
                    Layout l = *layout;
                    l.cluster = cluster;
                    before = prediction_error(l, measured, *warmup_steps);
                    l.cluster = calibrated;
                    after = prediction_error(l, measured, *warmup_steps);
                }
                save_json_file(cluster_to_json(calibrated), *out);
                if (*json) {
                    nlohmann::json j{{"out", *out}, {"warmup_steps", *warmup_steps},
                                     {"fit", profiler::calibration_to_json(fit)},
                                     {"memory", profiler::memory_reserve_fit_to_json(memory_fit)},
                                     {"cluster", cluster_to_json(calibrated)}};
                    j["error_before"] = before ? profiler::comparison_to_json(*before) : nlohmann::json();
                    j["error_after"] = after ? profiler::comparison_to_json(*after) : nlohmann::json();
                    std::cout << j.dump(2) << "\n";
                } else {
                    std::cout << std::setprecision(4);
                    std::cout << "GEMM efficiency    " << cluster.efficiency.gemm << " -> "
                              << calibrated.efficiency.gemm << " (" << fit.compute_samples
                              << " compute events, " << fit.achieved_flops_per_s / 1e12
                              << " TFLOP/s achieved)\n";
                    const auto& gs = fit.gemm_sizes;
                    if (curve) {
                        const auto& gc = *curve;
                        if (gc.fitted) {
                            std::cout << "GEMM half size     " << cluster.efficiency.gemm_half_dim << " -> "
                                      << calibrated.efficiency.gemm_half_dim << " (measured on this host: "
                                      << gc.samples << " sgemm shapes of " << gc.sizes
                                      << " sizes d = 16 .. 256, asymptote " << gc.gemm_efficiency
                                      << " of peak; rms error of the curve " << 100 * gc.rms_error
                                      << " %, worst " << 100 * gc.worst_error << " %)\n";
                        } else {
                            std::cout << "GEMM half size     " << cluster.efficiency.gemm_half_dim
                                      << " kept (host curve not fitted: " << gc.reason << ")\n";
                        }
                    } else if (gs.fitted) {
                        std::cout << "GEMM half size     " << cluster.efficiency.gemm_half_dim << " -> "
                                  << calibrated.efficiency.gemm_half_dim << " (" << gs.op_events
                                  << " operations in " << gs.op_classes << " classes of " << gs.sizes
                                  << " sizes d = " << gs.min_size << " .. " << gs.max_size
                                  << "; rms error of the curve " << 100 * gs.rms_error << " %)\n";
                    } else if (layout) {
                        std::cout << "GEMM half size     " << cluster.efficiency.gemm_half_dim
                                  << " kept (size curve not fitted: " << gs.reason
                                  << "; one scale for all compute instead)\n";
                    }
                    if (fit.compute_scale > 0) {
                        std::cout << "compute pace       one step's compute predicted "
                                  << fit.predicted_compute_s * 1e3 << " ms, measured "
                                  << fit.measured_compute_s * 1e3 << " ms: "
                                  << (gs.fitted ? "attention and memory efficiencies x"
                                                : "GEMM, attention and memory efficiencies x")
                                  << fit.compute_scale;
                        if (gs.fitted) {
                            std::cout << " (GEMMs on the fitted curve " << fit.predicted_gemm_s * 1e3
                                      << " ms of it)";
                        }
                        std::cout << "\n";
                    }
                    if (fit.host_cores > 0 && fit.sched.recorded) {
                        const auto& sc = fit.sched;
                        std::cout << "host cores         " << cluster.host_cores << " -> " << calibrated.host_cores
                                  << " (the host has " << fit.recorded_host_cores << "; ";
                        if (sc.host_recorded) {
                            std::cout << "over " << sc.interval_s * 1e3 << " ms of steps this run used "
                                      << sc.process_cores << " cores, other processes " << sc.others_cores
                                      << " and " << sc.niced_cores << " more at a positive nice, which yield";
                        } else {
                            std::cout << "no host CPU accounting in the trace: all of them";
                        }
                        std::cout << ")\n";
                        if (fit.host_cpu_per_layer_pass_s > 0) {
                            std::cout << "host CPU per layer " << cluster.host_cpu_per_layer_pass_s * 1e6 << " -> "
                                      << calibrated.host_cpu_per_layer_pass_s * 1e6
                                      << " us (a rank thread's CPU outside compute ops and collectives per layer's "
                                         "forward and backward of one micro-batch)\n";
                        }
                        std::cout << "scheduler          a rank thread per step: " << sc.on_cpu_s * 1e3
                                  << " ms on a core (" << sc.compute_on_cpu_s * 1e3 << " ms computing, "
                                  << sc.comm_on_cpu_s * 1e3 << " ms in collectives), "
                                  << sc.run_queue_wait_s * 1e3 << " ms waiting for one (" << sc.compute_core_wait_s * 1e3
                                  << " ms of it while computing; shared cores explain " << sc.predicted_core_wait_s * 1e3
                                  << " ms), " << sc.timeslices << " timeslices\n";
                    } else if (fit.host_cores > 0) {
                        std::cout << "host cores         " << cluster.host_cores << " -> " << calibrated.host_cores
                                  << " (no scheduler counters: ranks' compute of one step " << fit.measured_compute_s * 1e3
                                  << " ms each over a " << fit.measured_step_s * 1e3 << " ms step; the host has "
                                  << fit.recorded_host_cores << ")\n";
                    }
                    auto link = [](const char* name, const profiler::LinkFit& f, double was, double now) {
                        std::cout << name << was << " -> " << now;
                        if (f.fitted) {
                            std::cout << " (" << f.samples << " collectives, busbw "
                                      << (f.bus_bandwidth_bytes_per_s > 0
                                              ? std::to_string(f.bus_bandwidth_bytes_per_s / 1e9) +
                                                    " GB/s"
                                              : std::string("not limiting (nominal kept)"))
                                      << (f.latency_fitted
                                              ? ", latency " + std::to_string(f.latency_s * 1e6) +
                                                    " us per step"
                                              : "")
                                      << ")";
                        } else {
                            std::cout << " (not fitted: no collectives)";
                        }
                        std::cout << "\n";
                    };
                    link("intra-node link   ", fit.intra_node, cluster.efficiency.intra_node_link,
                         calibrated.efficiency.intra_node_link);
                    link("inter-node link   ", fit.inter_node, cluster.efficiency.inter_node_link,
                         calibrated.efficiency.inter_node_link);
                    if (memory_fit.fitted) {
                        std::cout << "memory reserve     fixed " << static_cast<double>(cluster.memory_reserve.fixed_bytes) / (1 << 20)
                                  << " -> " << static_cast<double>(calibrated.memory_reserve.fixed_bytes) / (1 << 20)
                                  << " MiB, fragmentation " << cluster.memory_reserve.fragmentation << " -> "
                                  << calibrated.memory_reserve.fragmentation << " (" << memory_fit.rule
                                  << "; peak max |error| " << percent(memory_fit.max_abs_error_before) << " -> "
                                  << percent(memory_fit.max_abs_error_after) << ")\n";
                    } else {
                        std::cout << "memory reserve     kept (" << memory_fit.rule << ")\n";
                    }
                    if (before && after) {
                        std::cout << "prediction error   step " << percent(before->categories[0].error) << " -> "
                                  << percent(after->categories[0].error) << ", max |error| "
                                  << percent(before->max_abs_error) << " -> " << percent(after->max_abs_error) << "\n";
                    } else {
                        std::cout << "prediction error   not shown (no layout: pass --layout)\n";
                    }
                    std::cout << "wrote " << *out << "\n";
                }
                return kExitOk;
            }};
}

namespace {
Verb make_calibrate_verb(CLI::App& app) { return add_calibrate_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(100, make_calibrate_verb);

}  // namespace meshwork::cli
