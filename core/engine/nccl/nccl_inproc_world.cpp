// NcclInprocWorld: one process, one thread per GPU, every rank initialised with
// ncclCommInitRank from one shared ncclUniqueId (what ncclCommInitAll does from a single
// thread, but here each rank's thread owns its communicator, as NCCL wants for concurrent
// use).
#include <nccl.h>

#include "core/common/error.h"
#include "core/engine/cuda/cuda_backend.h"
#include "core/engine/nccl/nccl_communicator.h"
#include "core/engine/nccl/nccl_factory.h"

namespace meshwork::engine {

namespace {

class NcclInprocWorldImpl final : public NcclInprocWorld {
public:
    NcclInprocWorldImpl(int size, double timeout_s)
        : size_(size), timeout_s_(timeout_s), fault_(std::make_shared<nccl_detail::NcclFault>()) {
        const ncclResult_t r = ncclGetUniqueId(&id_);
        if (r != ncclSuccess) {
            throw RuntimeError(std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(r));
        }
    }

    std::unique_ptr<Communicator> communicator(int rank, Backend& backend) override {
        auto* cuda = dynamic_cast<CudaBackend*>(&backend);
        if (cuda == nullptr) {
            throw RuntimeError("NCCL communicator: rank " + std::to_string(rank) + " runs on " +
                               backend.name() + ", NCCL needs the CUDA backend");
        }
        if (rank < 0 || rank >= size_) {
            throw RuntimeError("NCCL communicator: rank " + std::to_string(rank) +
                               " outside a world of " + std::to_string(size_));
        }
        return nccl_detail::NcclCommunicator::create_world(*cuda, size_, id_, rank, timeout_s_,
                                                           fault_);
    }

private:
    int size_;
    double timeout_s_;
    ncclUniqueId id_{};
    std::shared_ptr<nccl_detail::NcclFault> fault_;
};

}  // namespace

std::shared_ptr<NcclInprocWorld> NcclInprocWorld::create(int size, double timeout_s) {
    if (size < 1) throw RuntimeError("NCCL world of " + std::to_string(size) + " ranks");
    return std::make_shared<NcclInprocWorldImpl>(size, timeout_s);
}

}  // namespace meshwork::engine
