// The GPU path as a plugin: the CUDA backend, the NCCL communicators and the CUPTI collector
// live in libmeshwork_cuda.so, which meshwork-cli and meshwork load with dlopen only when a
// run asks for the CUDA backend or GPU profiling. This header is all the rest of the
// program knows of it: CUDA-free, compiled in every build (also without CUDA), so a binary
// starts on a node without any CUDA library and says what is missing when asked for one.
//
// The boundary is one abstract class, CudaPlugin. The plugin is built from the same sources
// as the executable and resolves the core and profiler functions it calls (errors, the stop
// flag, range names, kernel classes) from the executable that loads it: one copy of every
// global, and exceptions that cross the boundary as the types they are. The loader refuses
// a plugin of another ABI or Meshwork version.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "core/engine/backend.h"
#include "core/engine/communicator.h"
#include "core/engine/nccl/nccl_factory.h"
#include "core/trace/trace_event.h"

namespace meshwork::engine {

// Bumped whenever CudaPlugin, CudaBackendOptions or GpuActivityOptions change.
inline constexpr int kCudaPluginAbi = 2;
// The plugin's file name, looked for beside the executable (and installed there).
inline constexpr const char* kCudaPluginFile = "libmeshwork_cuda.so";
// Overrides the place: the full path of the plugin file.
inline constexpr const char* kCudaPluginEnv = "MESHWORK_CUDA_PLUGIN";

// How Backend::gemm (fp32 in and out) computes on the GPU.
enum class CudaGemmMode {
    Fp32,  // exact fp32 (CUBLAS_COMPUTE_32F): the mode the GPU tests compare with the CPU in
    Tf32,  // fp32 storage, TF32 tensor cores (default)
    Bf16,  // inputs rounded to bf16, fp32 accumulation and output: bf16 tensor-core rates
};

struct CudaBackendOptions {
    CudaGemmMode gemm = CudaGemmMode::Tf32;
    std::size_t gemm_workspace_bytes = std::size_t{32} << 20;  // cuBLASLt's split-K scratch
    // This rank's peak memory as the engine predicts it (engine/memory_estimate.h), quoted
    // beside the measured figures in an out-of-memory message; 0 when not known.
    std::size_t predicted_peak_bytes = 0;
    // The run's stop request, checked while the host waits on the GPU (and by the NCCL
    // communicators on this backend); a default token never stops.
    std::stop_token stop;
};

// What the GPU activity collector (CUPTI) records and for which ranks.
struct GpuActivityOptions {
    std::size_t buffer_bytes = std::size_t{4} << 20;  // CUPTI recommends 1-10 MB
    bool runtime_api = true;  // launches: they tie kernels to the host ranges around them
    bool nvtx = true;         // the engine's ranges (step, micro-batch, layer, collective)
    // The rank of each CUDA device of this process (index = device ordinal). Empty: every
    // device's activity belongs to `rank` (one rank per process, under MPI).
    std::vector<int> rank_of_device;
    int rank = 0;
};

// GPU activity of this process (kernels, copies, sets, NVTX ranges) into a trace: start()
// before the run, stop() after it writes every record to the sink given at creation.
class GpuActivityCollector {
public:
    virtual ~GpuActivityCollector() = default;
    virtual void start() = 0;
    virtual void stop() = 0;
    [[nodiscard]] virtual std::int64_t dropped_records() const = 0;
};

class CudaPlugin {
public:
    virtual ~CudaPlugin() = default;

    // The defaults, with MESHWORK_CUDA_GEMM=fp32|tf32|bf16 from the environment applied.
    [[nodiscard]] virtual CudaBackendOptions options_from_env() const = 0;
    // Usable GPUs of this process; 0 with `why` set to one line when there are none.
    [[nodiscard]] virtual int device_count(std::string* why) const = 0;
    // Empty when this process can use `gpus_needed` GPUs, else the reason.
    [[nodiscard]] virtual std::string unavailable_reason(int gpus_needed) const = 0;
    // "NVIDIA H200 (cc 9.0, 140 GiB, 132 SMs), driver 13.0, runtime 13.0".
    [[nodiscard]] virtual std::string device_summary(int device) const = 0;

    [[nodiscard]] virtual std::unique_ptr<Backend> make_backend(int device, const CudaBackendOptions& options) const = 0;
    // See nccl_factory.h.
    [[nodiscard]] virtual std::shared_ptr<NcclInprocWorld> make_nccl_inproc_world(int size, double timeout_s) const = 0;
    // Throws RuntimeError when the plugin was built without MPI.
    [[nodiscard]] virtual std::unique_ptr<Communicator> make_nccl_mpi_world(Backend& backend, double timeout_s) const = 0;
    [[nodiscard]] virtual int mpi_node_local_rank() const = 0;

    // True when CUPTI can record on this machine; otherwise `why` says why not.
    [[nodiscard]] virtual bool activity_available(std::string* why) const = 0;
    [[nodiscard]] virtual std::unique_ptr<GpuActivityCollector> make_activity_collector(
        TraceSink& sink, const GpuActivityOptions& options) const = 0;
};

// Where the plugin is looked for: $MESHWORK_CUDA_PLUGIN, else libmeshwork_cuda.so in the
// folder of the running executable (/proc/self/exe).
[[nodiscard]] std::string cuda_plugin_path();

// The plugin, loaded on the first call (thread-safe; later calls return the same result).
// nullptr when it cannot be loaded, with `why` naming what is missing: the plugin file, a
// library it needs (libcudart, libnccl, libcupti...) or a mismatched build.
[[nodiscard]] const CudaPlugin* load_cuda_plugin(std::string* why);

// Whether load_cuda_plugin has been called and succeeded in this process (tests use it to
// show that CPU work loads no CUDA library).
[[nodiscard]] bool cuda_plugin_loaded() noexcept;

// Empty when the CUDA backend can run `gpus_needed` GPUs in this process; else the one line
// to print before exiting with code 2: the missing plugin or library, the driver, the GPUs.
[[nodiscard]] std::string cuda_backend_unavailable(int gpus_needed);

// The loaded plugin; throws InputError(<flags>, --backend, why) when it cannot be loaded.
[[nodiscard]] const CudaPlugin& require_cuda_plugin();

}  // namespace meshwork::engine

// The plugin's entry points (C linkage, looked up with dlsym).
extern "C" {
int meshwork_cuda_plugin_abi(void);
const char* meshwork_cuda_plugin_version(void);
const meshwork::engine::CudaPlugin* meshwork_cuda_plugin_instance(void);
}
