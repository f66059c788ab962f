// The compute backends a run can use, each with whether it can run here and, if not, why:
// the one place that knows how to ask (the CPU backend always can; the CUDA backend asks its
// plugin, which names the missing plugin file, CUDA library, driver or GPUs). The CLI, the
// GUI and the engine itself ask here instead of testing for CUDA on their own.
#pragma once

#include <string>
#include <vector>

#include "core/engine/run_kinds.h"

namespace meshwork::engine {

struct BackendInfo {
    BackendKind kind = BackendKind::Cpu;
    std::string description;  // "one emulated device per rank (OpenBLAS)"
    bool available = false;
    std::string reason;       // why not, when not available: one line
};

// The backends of this build, without probing (nothing is loaded): for menus.
[[nodiscard]] std::vector<BackendKind> backend_kinds();
[[nodiscard]] std::string backend_description(BackendKind kind);

// One backend probed for `gpus_needed` devices in this process (CUDA: loads the plugin).
[[nodiscard]] BackendInfo probe_backend(BackendKind kind, int gpus_needed);
// Every backend, probed.
[[nodiscard]] std::vector<BackendInfo> available_backends(int gpus_needed);
// Throws InputError(<flags>, --backend, reason) when `kind` cannot run `gpus_needed` devices.
void require_backend(BackendKind kind, int gpus_needed);

}  // namespace meshwork::engine
