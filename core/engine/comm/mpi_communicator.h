// The MPI communicator: one process per rank (launched by mpirun or srun). Built when
// MESHWORK_HAVE_MPI is defined. Collectives are MPI's non-blocking ones completed by a
// polling loop, so that a peer that died or hangs turns into a CommError after timeout_s and
// Ctrl-C is noticed while waiting; send is buffered (returns before the matching recv).
#pragma once

#include <memory>
#include <stop_token>
#include <string>

#include "core/engine/communicator.h"

namespace meshwork::engine {

// MPI_Init at construction, MPI_Finalize at destruction (one per process).
class MpiSession {
public:
    MpiSession(int* argc, char*** argv);
    ~MpiSession();
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;

    [[nodiscard]] int world_rank() const { return rank_; }
    [[nodiscard]] int world_size() const { return size_; }
    // The world communicator.
    // The world communicator; its waits (and those of its splits) check `stop`.
    [[nodiscard]] std::unique_ptr<Communicator> world(double timeout_s, std::stop_token stop = {}) const;
    // Whether this process was started by an MPI launcher (env of mpirun/srun).
    static bool launched_by_mpi();
    // Terminates every rank of the job (MPI_Abort) after printing `reason` once.
    [[noreturn]] static void abort_job(const std::string& reason, int exit_code);

private:
    int rank_ = 0;
    int size_ = 1;
};

}  // namespace meshwork::engine
