// Which side of a comparison a trace takes, from what the trace says about itself rather
// than from the order in which the files were chosen: a simulation (the run info's source
// "meshwork-sim" or its clock "simulated", core/sim/simulate.cpp) is a prediction, anything
// else (a CPU or CUDA run, an nsys or Kineto import) a measurement.
#pragma once

#include <QString>

#include "core/trace/trace_event.h"

namespace meshwork::gui {

enum class TraceRole { Prediction, Measurement };

[[nodiscard]] TraceRole role_of(const TraceRunInfo& info);

// True when the traces given as (first, second) must be swapped so that the simulated one is
// the prediction: the first is measured and the second simulated. When both or neither are
// simulated the order given stands (the first is the reference drawn on top).
[[nodiscard]] bool needs_role_swap(const TraceRunInfo& first, const TraceRunInfo& second);

// The title of the file dialog that picks a trace to compare with the open one, `open_name`
// of role `open_role`: it says which role the chosen file takes.
[[nodiscard]] QString comparison_prompt(const QString& open_name, TraceRole open_role);

}  // namespace meshwork::gui
