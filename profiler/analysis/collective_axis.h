// The mesh axis a Meshwork communication event names: "all_reduce(dp)", "recv(pp)",
// "send(pp).activation" -> the axis in the parentheses. The one reader of that part of a
// name: the rank × step matrix (which ranks form a collective's group) and the timeline's
// flows between ranks (which ranks a transfer or a collective joins) use it.
#pragma once

#include <optional>
#include <string_view>

#include "core/mesh/device_mesh.h"

namespace meshwork::profiler {

// The axis named between the first '(' and the next ')'; none when there is no such pair or
// it holds no axis name (an NCCL kernel name, "cudaLaunchKernel(...)").
[[nodiscard]] std::optional<Axis> axis_of_name(std::string_view event_name);

}  // namespace meshwork::profiler
