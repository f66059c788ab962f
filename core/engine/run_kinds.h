// The closed choices of a run, as types: the compute backend, the launcher and the kind of
// an injected fault. Text ("cuda", "mpi", "hang") exists only at the edges: parsed once
// where the CLI's flags or the GUI's fields are read, printed in JSON and trace metadata.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace meshwork::engine {

enum class BackendKind {
    Cpu,   // one emulated device per rank (OpenBLAS)
    Cuda,  // one GPU per rank (the CUDA plugin: cuBLASLt, NCCL)
};
enum class Launcher {
    Local,  // every rank a thread of this process
    Mpi,    // one process per rank under mpirun/srun
};
enum class FaultKind {
    Throw,  // the rank throws
    Hang,   // the rank stalls for 3 × the communication timeout
};

[[nodiscard]] std::string to_string(BackendKind kind);  // "cpu", "cuda"
[[nodiscard]] std::string to_string(Launcher launcher); // "local", "mpi"
[[nodiscard]] std::string to_string(FaultKind kind);    // "throw", "hang"
[[nodiscard]] std::optional<BackendKind> parse_backend(std::string_view text);
[[nodiscard]] std::optional<Launcher> parse_launcher(std::string_view text);
[[nodiscard]] std::optional<FaultKind> parse_fault_kind(std::string_view text);

}  // namespace meshwork::engine
