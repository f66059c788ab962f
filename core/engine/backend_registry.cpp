#include "core/engine/backend_registry.h"

#include "core/common/error.h"
#include "core/engine/cuda_plugin.h"

namespace meshwork::engine {

std::vector<BackendKind> backend_kinds() { return {BackendKind::Cpu, BackendKind::Cuda}; }

std::string backend_description(BackendKind kind) {
    switch (kind) {
        case BackendKind::Cpu: return "one emulated device per rank (OpenBLAS)";
        case BackendKind::Cuda: return "one GPU per rank (cuBLAS, NCCL)";
    }
    return {};
}

BackendInfo probe_backend(BackendKind kind, int gpus_needed) {
    BackendInfo info;
    info.kind = kind;
    info.description = backend_description(kind);
    switch (kind) {
        case BackendKind::Cpu:
            info.available = true;
            break;
        case BackendKind::Cuda:
            // The plugin is built only in a CUDA build; its loader says so otherwise.
            info.reason = cuda_backend_unavailable(gpus_needed);
            info.available = info.reason.empty();
            break;
    }
    return info;
}

std::vector<BackendInfo> available_backends(int gpus_needed) {
    std::vector<BackendInfo> out;
    for (BackendKind kind : backend_kinds()) out.push_back(probe_backend(kind, gpus_needed));
    return out;
}

void require_backend(BackendKind kind, int gpus_needed) {
    const BackendInfo info = probe_backend(kind, gpus_needed);
    if (!info.available) throw InputError("<flags>", "--backend", info.reason);
}

}  // namespace meshwork::engine
