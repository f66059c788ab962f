// The host's sgemm pace, measured: the CPU engine's GEMMs (OpenBLAS cblas_sgemm, one BLAS
// thread, as CpuBackend runs them) timed over a grid of shapes on the calling thread's CPU
// clock, for `calibrate --measure-gemm` to fit the cost model's GEMM curve on the machine
// itself (core/cost/gemm_curve_fit.h). Thread CPU time, not wall time: on a shared host the
// wall clock also counts the time other processes hold the core, and calibrate reads a
// run's compute as CPU time too. The pace is measured on this machine at the time of the
// call: calibrate takes only the curve's shape from it, the level from the trace.
#pragma once

#include <vector>

#include "core/cost/gemm_curve_fit.h"

namespace meshwork::engine {

// The grid: rows m in {64, 256} (micro-batch × sequence of small CPU workloads), n and k in
// {16, 32, 64, 128, 256} (head dims, tensor-parallel shards and hidden sizes of the models
// the CPU engine runs): d = min(m, n, k) from 16 to 256.
std::vector<cost::GemmTiming> sgemm_grid();

// Times every shape of `grid` (forward calls, row-major, no transposes, beta 0), each for
// at least `min_cpu_s` of CPU after a warm-up, and returns the median seconds of one call
// over batches. Sets OpenBLAS to one thread (the CPU engine's setting) for the process.
std::vector<cost::GemmTiming> measure_sgemm(std::vector<cost::GemmTiming> grid, double min_cpu_s = 0.01);

}  // namespace meshwork::engine
