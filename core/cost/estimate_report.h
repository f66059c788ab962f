// The human-readable form of an Estimate (`meshwork-cli estimate` without --json): the
// headline metrics, a table of stages with memory bars and the time breakdown.
#pragma once

#include <string>

#include "core/cost/estimate.h"

namespace meshwork {

// `hbm_bytes` scales the memory bars (a full bar is the device's memory).
std::string format_estimate_report(const Estimate& e, double hbm_bytes);

}  // namespace meshwork
