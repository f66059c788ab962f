// The JSON form of an Estimate: the keys of CLI.md (`estimate --json`, `simulate --json`).
#pragma once

#include <nlohmann/json.hpp>

#include "core/cost/estimate.h"

namespace meshwork {

// step_time_s, tokens_per_s, model_tflops_per_gpu, hardware_tflops_per_gpu, mfu,
// bubble_fraction, exposed_comm_s, fits, micro_batches, worst_stage, max_overflow_bytes,
// stages[] (stage, layers, in_flight, params_bytes, grads_bytes, optimizer_bytes,
// activations_bytes, buffers_bytes, reserved_bytes, peak_bytes, fits, overflow_bytes,
// forward_s, backward_s) and time{} (the TimeBreakdown fields).
nlohmann::json estimate_to_json(const Estimate& e);

}  // namespace meshwork
