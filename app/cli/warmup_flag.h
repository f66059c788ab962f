// --warmup-steps, shared by the verbs that take one step of a measured trace (compare,
// calibrate): one text and one check for both.
#pragma once

#include <CLI/CLI.hpp>

#include "profiler/analysis/warmup_steps.h"

namespace meshwork::cli {

inline CLI::Option* add_warmup_steps_flag(CLI::App* cmd, int& warmup_steps) {
    warmup_steps = profiler::kDefaultWarmupSteps;
    return cmd->add_option("--warmup-steps", warmup_steps,
                           "The first steps of a measured trace to leave out of its per-step means "
                           "(default 1; at least one step is always kept; a simulated one-step "
                           "trace keeps its step)")
        ->check(CLI::NonNegativeNumber);
}

}  // namespace meshwork::cli
