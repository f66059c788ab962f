#include "core/layout/layout_run_info.h"

#include "core/layout/layout_json.h"

namespace meshwork {

TraceRunInfo layout_run_info(const Layout& layout, std::string source, std::string clock_domain) {
    TraceRunInfo info;
    info.tool_version = MESHWORK_VERSION;
    info.source = std::move(source);
    info.layout_json = layout_to_json(layout).dump();
    info.cluster = layout.cluster.name;
    info.clock_domain = std::move(clock_domain);
    info.world_size = layout.gpus;
    return info;
}

}  // namespace meshwork
