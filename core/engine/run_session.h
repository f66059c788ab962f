// One run of a layout, the same for meshwork-cli run and the GUI's run dialog: everything
// that can be refused is refused before any rank starts (the flags, the layout, the
// backend, memory, the token file), then the unsharded reference (with a check), the ranks
// (in this process, or this process's rank of an MPI job), the profile, and the comparison.
// A stop is requested through a std::stop_token whose source the caller owns (the CLI's
// signal handler, the GUI's Stop button).
//
// The profile is written by the profiler (TraceWriter, and on the CUDA backend the CUPTI
// collector), which the engine does not link: the caller passes a ProfileOpener
// (profiler/collect/run_profile.h) and the session sees only the RunProfile interface.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/engine/engine_run.h"
#include "core/engine/memory_estimate.h"
#include "core/engine/precision.h"
#include "core/engine/run_kinds.h"
#include "core/layout/layout.h"
#include "core/trace/trace_event.h"

namespace meshwork::engine {

struct RunRequest {
    Layout layout;
    std::string source;     // the layout's file, named in errors about it; empty: flags
    EngineOptions options;  // backend, steps, seed, tokens, timeouts, injected faults
    Launcher launcher = Launcher::Local;
    bool check = false;     // run the unsharded reference and compare
    std::optional<double> tolerance;  // the check's, losses and weights; else the precision's
    std::optional<std::size_t> memory_limit_bytes;  // per rank; else the host-memory policy
    std::string profile_path;  // empty: no profile; under MPI one file per rank (OUT.rankN.sqlite)
    int mpi_abort_exit_code = 1;  // every process's exit code when a rank of an MPI job fails
};

// The trace a run writes: this process's file, what it records, and for the CUDA backend
// which rank each of this process's devices belongs to.
struct ProfileSpec {
    std::string path;
    TraceRunInfo info;
    bool gpu = false;
    int rank = 0;                     // this process's rank (MPI), or 0
    std::vector<int> rank_of_device;  // local launcher: rank r on device r; MPI: empty
};

class RunProfile {
public:
    virtual ~RunProfile() = default;
    [[nodiscard]] virtual TraceSink& sink() = 0;
    // Writes the GPU records, if any, and closes the trace; returns a warning or "".
    virtual std::string close() = 0;
};

// Opens the profile before the run (throws when it cannot, leaving no file behind).
using ProfileOpener = std::function<std::unique_ptr<RunProfile>(const ProfileSpec&)>;

enum class RunPhase { Reference, Ranks };

struct RunEvents {
    std::function<void(RunPhase)> on_phase;          // on the root process
    std::function<void(const StepResult&)> on_step;  // on world rank 0, per step
    std::function<void(const std::string&)> on_warning;  // e.g. an incomplete GPU profile
};

enum class CheckStatus { NotRun, Passed, Failed };

struct RunReport {
    RunResult result;
    CheckTolerance tolerance;    // what the check compared with
    CheckStatus check = CheckStatus::NotRun;
    std::string profile_path;    // the trace this process wrote; empty when none
};

// The host memory a run holds in this process against what the machine has.
struct HostMemoryNeed {
    double need_bytes = 0;
    double host_bytes = 0;  // 0: unknown (nothing is refused)
    std::string scope;      // "all ranks", "one rank", "the --check reference"
    [[nodiscard]] bool fits() const { return host_bytes <= 0 || need_bytes <= host_bytes; }
};

// The one host-memory policy: the ranks this process holds (every rank with the local
// launcher, one under MPI, none on the CUDA backend, whose tensors are on the GPUs), plus
// the reference's model state with a check (on the host whatever the backend), against the
// machine's physical memory.
[[nodiscard]] HostMemoryNeed host_memory_need(const std::vector<RankMemory>& predicted, BackendKind backend,
                                              Launcher launcher, bool check);

// The checks of RunSession's constructor that need no MPI job: throws InputError naming the
// file and field; returns each rank's predicted memory.
std::vector<RankMemory> preflight(const RunRequest& request);

// The tolerances of `request` (its own, or its layout's precision's).
[[nodiscard]] CheckTolerance check_tolerance(const RunRequest& request);

class RunSession {
public:
    // preflight(), then with the MPI launcher joins the job (InputError when this process
    // was not started by mpirun/srun or the job's size is not the layout's).
    RunSession(RunRequest request, ProfileOpener open_profile = {});
    ~RunSession();
    RunSession(const RunSession&) = delete;
    RunSession& operator=(const RunSession&) = delete;

    [[nodiscard]] const RunRequest& request() const { return request_; }
    [[nodiscard]] const std::vector<RankMemory>& predicted_memory() const { return predicted_; }
    [[nodiscard]] int world_rank() const { return world_rank_; }
    [[nodiscard]] bool root() const { return world_rank_ == 0; }

    // The reference (with a check), then the ranks. The profile is closed on every way out.
    // Throws StopRequested after a stop, RuntimeError when a rank fails; under MPI a failing
    // rank ends the job (MPI_Abort with request.mpi_abort_exit_code).
    RunReport run(std::stop_token stop, const RunEvents& events = {});

private:
    struct Mpi;
    // This process's profile (nullptr without one); `path` receives its file.
    std::unique_ptr<RunProfile> open_profile(std::string& path) const;
    RunRequest request_;
    ProfileOpener open_profile_;
    std::vector<RankMemory> predicted_;
    int world_rank_ = 0;
    std::unique_ptr<Mpi> mpi_;
};

}  // namespace meshwork::engine
