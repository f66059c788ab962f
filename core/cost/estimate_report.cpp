#include "core/cost/estimate_report.h"

#include <algorithm>
#include <cstdio>

namespace meshwork {

namespace {

std::string gib(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", bytes / 1073741824.0);
    return buf;
}

std::string seconds(double s) {
    char buf[32];
    if (s >= 1.0) {
        std::snprintf(buf, sizeof buf, "%.3f s", s);
    } else if (s >= 1e-3) {
        std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
    } else {
        std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
    }
    return buf;
}

// A bar of `width` cells: '#' weights, '+' gradients and optimizer, '=' activations,
// '.' buffers and reserve; '!' marks cells beyond the device memory.
std::string memory_bar(const StageMemory& s, double hbm, int width) {
    std::string bar;
    const double cell = std::max(1.0, hbm) / width;
    auto add = [&](double bytes, char ch) {
        const int n = static_cast<int>(bytes / cell + 0.5);
        for (int i = 0; i < n; ++i) bar += static_cast<int>(bar.size()) < width ? ch : '!';
    };
    add(static_cast<double>(s.params_bytes), '#');
    add(static_cast<double>(s.grads_bytes + s.optimizer_bytes), '+');
    add(static_cast<double>(s.activations_bytes), '=');
    add(static_cast<double>(s.buffers_bytes + s.reserved_bytes), '.');
    if (static_cast<int>(bar.size()) > width + 10) bar.resize(static_cast<std::size_t>(width + 10));
    while (static_cast<int>(bar.size()) < width) bar += ' ';
    return bar;
}

}  // namespace

std::string format_estimate_report(const Estimate& e, double hbm) {
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line,
                  "Step %s  |  %.0f tokens/s  |  MFU %.1f%%  |  %.1f model / %.1f hardware TFLOP/s per GPU\n",
                  seconds(e.step_time_s).c_str(), e.tokens_per_s, 100.0 * e.mfu, e.model_tflops_per_gpu,
                  e.hardware_tflops_per_gpu);
    out += line;
    std::snprintf(line, sizeof line, "Bubble %.1f%% of the pipeline  |  exposed communication %s  |  %d micro-batches\n",
                  100.0 * e.bubble_fraction, seconds(e.exposed_comm_s).c_str(), e.micro_batches);
    out += line;
    if (e.fits) {
        out += "Memory: every stage fits (" + gib(hbm) + " GiB per GPU)\n";
    } else {
        out += "Memory: DOES NOT FIT: stage " + std::to_string(e.worst_stage) + " needs " +
               gib(static_cast<double>(e.stages[static_cast<std::size_t>(e.worst_stage)].peak_bytes)) +
               " GiB, " + gib(static_cast<double>(e.max_overflow_bytes)) + " GiB over " + gib(hbm) + " GiB\n";
    }
    out += "\nstage layers in-flight  weights  grads  optim  activ  other   peak GiB  "
           "(# weights + grads/optimizer = activations . other, ! over)\n";
    for (const auto& s : e.stages) {
        std::snprintf(line, sizeof line, "%5d %6d %9d %8s %6s %6s %6s %6s %9s%s  %s\n", s.stage, s.layers,
                      s.in_flight, gib(static_cast<double>(s.params_bytes)).c_str(),
                      gib(static_cast<double>(s.grads_bytes)).c_str(),
                      gib(static_cast<double>(s.optimizer_bytes)).c_str(),
                      gib(static_cast<double>(s.activations_bytes)).c_str(),
                      gib(static_cast<double>(s.buffers_bytes + s.reserved_bytes)).c_str(),
                      gib(static_cast<double>(s.peak_bytes)).c_str(), s.fits ? " " : "!",
                      memory_bar(s, hbm, 40).c_str());
        out += line;
    }
    const auto& t = e.time;
    out += "\nTime on the busiest stage (" + std::to_string(e.busiest_stage) + ") per step\n";
    auto row = [&](const char* name, double s) {
        std::snprintf(line, sizeof line, "  %-34s %12s  %5.1f%%\n", name, seconds(s).c_str(),
                      e.step_time_s > 0 ? 100.0 * s / e.step_time_s : 0.0);
        out += line;
    };
    row("compute (incl. recompute)", t.compute_s);
    row("  of which recomputation", t.recompute_s);
    row("pipeline bubble", t.bubble_s);
    row("tensor-parallel comm (exposed)", t.tp_comm_s);
    row("context-parallel comm (exposed)", t.cp_comm_s);
    row("expert all-to-all", t.ep_comm_s);
    row("pipeline send/recv", t.pp_comm_s);
    row("data-parallel comm (exposed)", t.dp_comm_s);
    row("optimizer step", t.optimizer_s);
    if (t.host_launch_s > 0) row("host launches and syncs", t.host_launch_s);
    if (t.activation_offload_s > 0) row("activation copies to and from the host", t.activation_offload_s);
    if (t.host_sharing_s > 0) row("waiting for a shared host core", t.host_sharing_s);
    row("step", e.step_time_s);
    return out;
}

}  // namespace meshwork
