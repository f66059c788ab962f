#include "profiler/analysis/trace_layout.h"

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/layout/layout_json.h"

namespace meshwork::profiler {

std::optional<Layout> trace_layout(const TraceReader& trace) { return trace_layout(trace.path(), trace.run_info()); }

std::optional<Layout> trace_layout(const std::string& file, const TraceRunInfo& info) {
    const std::string& text = info.layout_json;
    if (text.empty()) return std::nullopt;
    return layout_from_json(parse_json_text(text, file), file + " (meta.layout_json)");
}

TraceMesh trace_mesh(const std::string& file, const TraceRunInfo& info) {
    TraceMesh out;
    try {
        if (const auto layout = trace_layout(file, info)) out.mesh = layout->mesh();
    } catch (const InputError& e) {
        out.error = e.what();
    }
    return out;
}

std::optional<Layout> first_trace_layout(std::initializer_list<const TraceReader*> traces) {
    for (const TraceReader* t : traces) {
        if (auto layout = trace_layout(*t)) return layout;
    }
    return std::nullopt;
}

}  // namespace meshwork::profiler
