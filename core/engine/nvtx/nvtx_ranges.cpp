#include "core/engine/nvtx/nvtx_ranges.h"

#include <nvtx3/nvToolsExt.h>

namespace meshwork::engine::nvtx {

namespace {
// One domain for the process; NVTX makes creation thread-safe and cheap when no tool is
// attached (the calls are then no-ops).
nvtxDomainHandle_t domain() {
    static const nvtxDomainHandle_t d = nvtxDomainCreateA("meshwork");
    return d;
}
}  // namespace

void push(const std::string& name) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name.c_str();
    nvtxDomainRangePushEx(domain(), &a);
}

void pop() { nvtxDomainRangePop(domain()); }

}  // namespace meshwork::engine::nvtx
