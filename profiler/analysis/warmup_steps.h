// Warm-up steps: the first steps of a measured run, which its per-step figures leave out
// (compare, calibrate). A run's first step allocates, touches its pages for the first time
// and initialises lazily; on some hosts the first tens of steps are slower for longer: on
// the 2-vCPU Firecracker VM of docs/BENCHMARKS.md ("Warm-up of a fresh process") the CPU
// engine's steps run 1.3-1.7x their steady time for the first 100-150 ms of every run. A
// user measuring there says how many steps to leave out, as Megatron-LM's and torchtitan's
// own timings do.
#pragma once

#include <cstddef>

namespace meshwork::profiler {

// The default: the first step only.
inline constexpr int kDefaultWarmupSteps = 1;

// How many of `count` per-step items in step order (a rank's steps, or its per-step counter
// samples) are warm-up: the first `warmup_steps`, but never all of them (one is kept), and
// none of a single step (a simulated trace, or a one-step run).
std::size_t warmup_items(std::size_t count, int warmup_steps);

}  // namespace meshwork::profiler
