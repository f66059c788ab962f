// meshwork-cli stats: per-rank time breakdown, top kernels and collective bandwidths of a trace.
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>
#include <sstream>

#include "profiler/analysis/kernel_name.h"
#include "profiler/analysis/memory_stats.h"
#include "profiler/analysis/trace_stats.h"
#include "app/cli/exit_codes.h"
#include "app/cli/format.h"
#include "app/cli/stats_stragglers.h"
#include "profiler/store/trace_reader.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

namespace {

// The width of a kernel's name in the text table (a terminal line beside the figures).
constexpr std::size_t kKernelNameChars = 100;

std::string fixed(double v, int digits) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(digits) << v;
    return os.str();
}

std::string mib(std::int64_t bytes) { return fixed(static_cast<double>(bytes) / (1 << 20), 1) + " MiB"; }

// Measured memory (memory snapshots, Kineto [memory] events): the peak per rank and device.
void print_memory(const profiler::MemoryStats& m) {
    if (m.devices.empty()) return;
    std::cout << "\nmemory rank device      events  allocated peak   reserved peak  cache at peak\n";
    for (const auto& d : m.devices) {
        std::cout << pad_left(std::to_string(d.rank), 11) << pad_left(d.device < 0 ? "host" : std::to_string(d.device), 7)
                  << pad_left(std::to_string(d.events), 12) << pad_left(mib(d.allocated_peak_bytes), 16)
                  << pad_left(mib(d.reserved_peak_bytes), 16) << pad_left(mib(d.cache_at_peak_bytes), 15) << "\n";
        for (const auto& [category, bytes] : d.at_peak_by_category) {
            std::cout << "    at the peak: " << pad_left(mib(bytes), 14) << "  " << category << "\n";
        }
    }
}

void print_human(const profiler::TraceReader& trace, const profiler::TraceStats& s) {
    std::cout << trace.path() << ": " << trace.event_count() << " events, source "
              << (trace.run_info().source.empty() ? "?" : trace.run_info().source) << "\n\n";
    std::cout << "rank      span   compute      comm      idle  exposed  overlap  bubble  steps  "
                 "one step\n";
    for (const auto& r : s.ranks) {
        std::cout << pad_left(std::to_string(r.rank), 4) << pad_left(human_seconds(r.span_s), 10)
                  << pad_left(human_seconds(r.compute_s), 10) << pad_left(human_seconds(r.comm_s), 10)
                  << pad_left(human_seconds(r.idle_s), 10) << pad_left(human_seconds(r.exposed_comm_s), 9)
                  << pad_left(fixed(100 * r.overlap_fraction, 1) + "%", 9)
                  << pad_left(fixed(100 * r.bubble_fraction, 1) + "%", 8)
                  << pad_left(std::to_string(r.steps), 7) << pad_left(human_seconds(r.step_s), 10)
                  << "\n";
    }
    if (s.ranks.empty()) {
        // The table is of device work; say so rather than print it empty.
        std::cout << "(no rank figures: the trace holds no device work, no kernel, copy or memset; "
                     "its "
                  << trace.event_count()
                  << " events are host activity, markers or waits. Was the device traced, e.g. "
                     "nsys --trace=cuda or torch.profiler with ProfilerActivity.CUDA?)\n";
    }
    for (const auto& r : s.ranks) {
        if (r.outside_steps_events == 0) continue;
        std::cout << "rank " << r.rank << ": " << r.outside_steps_events << " device events ("
                  << human_seconds(r.outside_steps_s)
                  << ") are in no step: launched before the profiler started or outside every step "
                     "window; they count above, in no step\n";
    }
    if (!s.kernels.empty()) {
        std::cout << "\ntop kernels            count       total        mean  name\n";
        for (const auto& k : s.kernels) {
            // Template names run to kilobytes: shortened here, whole in --json.
            std::cout << pad_right(to_string(k.kind), 14) << pad_left(std::to_string(k.count), 13)
                      << pad_left(human_seconds(k.total_s), 12) << pad_left(human_seconds(k.mean_s), 12)
                      << "  " << profiler::abbreviate_kernel_name(k.name, kKernelNameChars) << "\n";
        }
    }
    if (!s.collectives.empty()) {
        std::cout << "\ncollective          size  ranks   count        mean  algbw GB/s  busbw GB/s\n";
        for (const auto& c : s.collectives) {
            const bool sized = c.bytes > 0;
            std::cout << pad_right(std::string(profiler::collective_label(c.collective)), 15)
                      << pad_left(sized ? human_bytes(static_cast<double>(c.bytes)) : "unknown", 9)
                      << pad_left(c.group_size ? std::to_string(c.group_size) : "?", 7)
                      << pad_left(std::to_string(c.count), 8) << pad_left(human_seconds(c.mean_s), 12)
                      << pad_left(sized ? fixed(c.algbw_gbps, 1) : "-", 12)
                      << pad_left(sized ? fixed(c.busbw_gbps, 1) : "-", 12) << "\n";
        }
    }
}

}  // namespace

Verb add_stats_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("stats", "Metrics of a trace: time breakdown, overlap, bubble, kernels, "
                                            "collective bandwidth");
    auto path = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto top = std::make_shared<std::size_t>(20);
    auto stragglers = std::make_shared<bool>(false);
    cmd->add_option("TRACE", *path, "A Meshwork trace (.sqlite)")->required();
    cmd->add_flag("--json", *json,
                  "Print JSON: ranks[] (rank, compute_s, comm_s, idle_s, overlap_fraction, "
                  "bubble_fraction, ..., outside_steps_events and outside_steps_s: device work in no "
                  "step), kernels[] (full names), collectives[] (bytes, size_known, algbw_gbps and "
                  "busbw_gbps: null when the trace has no message size), memory[] (rank, device: -1 host, events, "
                  "allocated_peak_bytes, allocated_peak_time_ns, reserved_peak_bytes, cache_at_peak_bytes, "
                  "at_peak_by_category: measured memory, docs/profiler.md)");
    cmd->add_option("--top", *top, "How many kernels to list (by total time)")->capture_default_str();
    cmd->add_flag("--stragglers", *stragglers,
                  "Also per rank and step the step time, compute, exposed communication, collective wait "
                  "(time in collectives waiting for the last rank to arrive) and the rank waited for, and "
                  "the stragglers: the ranks that held their peers back in half the steps or more (rule: "
                  "docs/profiler.md). With --json adds steps[], steps_checked[], cells[] (rank, step, step_s, "
                  "compute_s, exposed_comm_s, collective_wait_s, waited_for_rank), stragglers[] and transient[] "
                  "(rank, step, slowdown, reason, ...)");
    cmd->footer("Definitions: docs/profiler.md. Exit codes: 0 success, 1 runtime failure, "
                "2 bad input (the message names the file and what is wrong).");
    return {cmd, [path, json, top, stragglers]() {
                const auto trace = profiler::TraceReader::open(*path);
                if (!trace.complete()) {
                    std::cerr << "warning: " << *path
                              << ": incomplete trace (its writer never closed it); figures cover the "
                                 "events up to its last commit\n";
                }
                if (*json) {
                    auto j = profiler::stats_report_json(trace, *top);
                    if (*stragglers) add_straggler_report(trace, j);
                    std::cout << j.dump(2) << "\n";
                } else {
                    print_human(trace, profiler::compute_stats(trace, *top));
                    print_memory(profiler::memory_stats(trace));
                    if (*stragglers) print_straggler_report(trace);
                }
                return kExitOk;
            }};
}

namespace {
Verb make_stats_verb(CLI::App& app) { return add_stats_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(80, make_stats_verb);

}  // namespace meshwork::cli
