// The layout a trace carries (meta.layout_json), parsed once for every reader of it: compare,
// calibrate, the rank overview and the straggler report all group ranks by its mesh.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include "core/layout/layout.h"
#include "core/mesh/device_mesh.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

// None when the trace carries no layout (imported traces usually don't). Throws InputError
// naming the file and "meta.layout_json" when the layout it carries does not parse.
std::optional<Layout> trace_layout(const TraceReader& trace);
// The same from a trace's run info, for a trace read through serve-trace (the hello carries
// it); `file` names the trace in errors.
std::optional<Layout> trace_layout(const std::string& file, const TraceRunInfo& info);

// The mesh that groups a trace's ranks (timeline lanes, the rank overview). A layout that
// does not parse leaves no mesh and says why in `error`: the trace still opens, its ranks in
// rank order.
struct TraceMesh {
    std::optional<DeviceMesh> mesh;
    std::string error;  // empty when the layout was read or there is none

    [[nodiscard]] const DeviceMesh* get() const { return mesh ? &*mesh : nullptr; }
};
TraceMesh trace_mesh(const std::string& file, const TraceRunInfo& info);

// The layout of the first of `traces` that carries one.
std::optional<Layout> first_trace_layout(std::initializer_list<const TraceReader*> traces);

}  // namespace meshwork::profiler
