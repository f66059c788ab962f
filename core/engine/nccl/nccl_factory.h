// NCCL communicators for CUDA backends. C++20-safe, free of CUDA and NCCL headers. The
// functions are defined in the CUDA plugin (libmeshwork_cuda.so); the rest of the program
// reaches them through CudaPlugin (engine/cuda_plugin.h), which uses the class below.
//
// One process, several GPUs: create one NcclInprocWorld, then each rank thread calls
// communicator(rank, its CudaBackend) — every rank must call it, concurrently, since NCCL's
// initialisation is collective. Several processes (one GPU each, any number of nodes): every
// process calls make_nccl_mpi_world() after MPI is initialised (MpiSession); rank 0's
// ncclUniqueId reaches the others through MPI_Bcast.
//
// Differences from the in-process and MPI communicators (docs/gpu.md):
//  * each recv reads a small header (tag, count) with a host wait before its payload,
//    which is how tags are matched over NCCL;
//  * a fault or timeout is noticed while the host waits on the backend (synchronize,
//    copy_to_host, a recv) or at the next call, then every rank's communicators are
//    aborted (ncclCommAbort); across processes the job is ended with MPI_Abort.
#pragma once

#include <memory>

#include "core/engine/backend.h"
#include "core/engine/communicator.h"

namespace meshwork::engine {

class NcclInprocWorld {
public:
    virtual ~NcclInprocWorld() = default;
    // `size` ranks, one per GPU (NCCL refuses two ranks on one GPU); `timeout_s` bounds every
    // collective, recv and the initialisation itself.
    static std::shared_ptr<NcclInprocWorld> create(int size, double timeout_s);
    // The world communicator of `rank`; `backend` must be a CUDA backend and must outlive it
    // (and every communicator split from it).
    virtual std::unique_ptr<Communicator> communicator(int rank, Backend& backend) = 0;
};

#ifdef MESHWORK_HAVE_MPI
// The world communicator of this MPI process over NCCL (MPI must be initialised).
std::unique_ptr<Communicator> make_nccl_mpi_world(Backend& backend, double timeout_s);
// This process's index among the ranks on its node: the GPU it should use.
int mpi_node_local_rank();
#endif

}  // namespace meshwork::engine
