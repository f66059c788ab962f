#include "core/engine/run_kinds.h"

namespace meshwork::engine {

std::string to_string(BackendKind kind) {
    switch (kind) {
        case BackendKind::Cpu: return "cpu";
        case BackendKind::Cuda: return "cuda";
    }
    return "?";
}

std::string to_string(Launcher launcher) {
    switch (launcher) {
        case Launcher::Local: return "local";
        case Launcher::Mpi: return "mpi";
    }
    return "?";
}

std::string to_string(FaultKind kind) {
    switch (kind) {
        case FaultKind::Throw: return "throw";
        case FaultKind::Hang: return "hang";
    }
    return "?";
}

std::optional<BackendKind> parse_backend(std::string_view text) {
    for (BackendKind k : {BackendKind::Cpu, BackendKind::Cuda}) {
        if (text == to_string(k)) return k;
    }
    return std::nullopt;
}

std::optional<Launcher> parse_launcher(std::string_view text) {
    for (Launcher l : {Launcher::Local, Launcher::Mpi}) {
        if (text == to_string(l)) return l;
    }
    return std::nullopt;
}

std::optional<FaultKind> parse_fault_kind(std::string_view text) {
    for (FaultKind k : {FaultKind::Throw, FaultKind::Hang}) {
        if (text == to_string(k)) return k;
    }
    return std::nullopt;
}

}  // namespace meshwork::engine
