// The profile of an engine run (engine/run_session.h's RunProfile): the run's events in a
// TraceWriter and, for a CUDA run, CUPTI's record of the GPUs (kernels, NCCL kernels as
// communication, copies, sets, NVTX ranges) beside them. meshwork-cli run and the GUI's run
// dialog pass open_run_profile to the engine's RunSession, which does not link the profiler.
#pragma once

#include <memory>

#include "core/engine/run_session.h"

namespace meshwork::profiler {

// Creates the trace and, for spec.gpu, starts the GPU collector; when that fails nothing
// has run, so the file is removed before the error propagates.
[[nodiscard]] std::unique_ptr<engine::RunProfile> open_run_profile(const engine::ProfileSpec& spec);

}  // namespace meshwork::profiler
