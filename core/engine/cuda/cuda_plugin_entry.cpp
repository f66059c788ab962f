// The entry points of libmeshwork_cuda.so: the one CudaPlugin of the process, forwarding to
// the CUDA backend, the NCCL communicators and the CUPTI collector built into the plugin.
#include "profiler/collect/cupti_activity.h"
#include "core/common/error.h"
#include "core/engine/cuda/cuda_runtime_probe.h"
#include "core/engine/cuda_plugin.h"
#include "core/engine/nccl/nccl_factory.h"

namespace meshwork::engine {

namespace {

class CudaPluginImpl final : public CudaPlugin {
public:
    CudaBackendOptions options_from_env() const override { return cuda_options_from_env(); }
    int device_count(std::string* why) const override { return cuda_device_count(why); }
    std::string unavailable_reason(int gpus_needed) const override { return cuda_unavailable_reason(gpus_needed); }
    std::string device_summary(int device) const override { return cuda_device_summary(device); }

    std::unique_ptr<Backend> make_backend(int device, const CudaBackendOptions& options) const override {
        return make_cuda_backend(device, options);
    }
    std::shared_ptr<NcclInprocWorld> make_nccl_inproc_world(int size, double timeout_s) const override {
        return NcclInprocWorld::create(size, timeout_s);
    }
    std::unique_ptr<Communicator> make_nccl_mpi_world(Backend& backend, double timeout_s) const override {
#ifdef MESHWORK_HAVE_MPI
        return engine::make_nccl_mpi_world(backend, timeout_s);
#else
        (void)backend;
        (void)timeout_s;
        throw RuntimeError("the CUDA plugin was built without MPI (configure with MESHWORK_MPI=ON)");
#endif
    }
    int mpi_node_local_rank() const override {
#ifdef MESHWORK_HAVE_MPI
        return engine::mpi_node_local_rank();
#else
        throw RuntimeError("the CUDA plugin was built without MPI (configure with MESHWORK_MPI=ON)");
#endif
    }

    bool activity_available(std::string* why) const override { return profiler::cupti_available(why); }
    std::unique_ptr<GpuActivityCollector> make_activity_collector(TraceSink& sink,
                                                                  const GpuActivityOptions& options) const override {
        return profiler::make_cupti_collector(sink, options);
    }
};

}  // namespace

}  // namespace meshwork::engine

extern "C" {

int meshwork_cuda_plugin_abi(void) { return meshwork::engine::kCudaPluginAbi; }

const char* meshwork_cuda_plugin_version(void) { return MESHWORK_VERSION; }

const meshwork::engine::CudaPlugin* meshwork_cuda_plugin_instance(void) {
    static const meshwork::engine::CudaPluginImpl plugin;
    return &plugin;
}

}
