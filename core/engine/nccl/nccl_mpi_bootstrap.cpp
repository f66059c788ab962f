// NCCL across processes and nodes: MPI carries rank 0's ncclUniqueId to every rank, then
// each process initialises its rank on its own GPU. A fault on one rank ends the whole job
// through MPI_Abort with the error text, as the MPI communicator does.
#include <mpi.h>
#include <nccl.h>

#include "core/common/error.h"
#include "core/engine/comm/mpi_communicator.h"
#include "core/engine/cuda/cuda_backend.h"
#include "core/engine/nccl/nccl_communicator.h"
#include "core/engine/nccl/nccl_factory.h"

namespace meshwork::engine {

std::unique_ptr<Communicator> make_nccl_mpi_world(Backend& backend, double timeout_s) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) throw RuntimeError("NCCL over MPI: MPI is not initialised");
    auto* cuda = dynamic_cast<CudaBackend*>(&backend);
    if (cuda == nullptr) {
        throw RuntimeError("NCCL communicator: this rank runs on " + backend.name() +
                           ", NCCL needs the CUDA backend");
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ncclUniqueId id{};
    ncclResult_t made = ncclSuccess;
    if (rank == 0) made = ncclGetUniqueId(&id);
    // Rank 0's failure travels with the id so that no rank waits for an id that never comes.
    int ok = made == ncclSuccess ? 1 : 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) throw RuntimeError(std::string("ncclGetUniqueId failed on rank 0"));
    MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD);

    auto fault = std::make_shared<nccl_detail::NcclFault>();
    fault->escalate = [](const std::string& reason) { MpiSession::abort_job(reason, 1); };
    return nccl_detail::NcclCommunicator::create_world(*cuda, size, id, rank, timeout_s,
                                                       std::move(fault));
}

int mpi_node_local_rank() {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int local = 0;
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    return local;
}

}  // namespace meshwork::engine
