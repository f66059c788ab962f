#include "core/engine/run_session.h"

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <sstream>

#include "core/common/error.h"
#include "core/engine/backend_registry.h"
#include "core/engine/stop.h"
#include "core/layout/layout_validate.h"
#ifdef MESHWORK_HAVE_MPI
#include "core/engine/comm/mpi_communicator.h"
#endif

namespace meshwork::engine {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string gib(std::size_t bytes) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(3) << static_cast<double>(bytes) / kGiB << " GiB";
    return o.str();
}

void refuse_over_limit(const std::vector<RankMemory>& mem, std::size_t limit) {
    for (const auto& m : mem) {
        if (m.peak_bytes <= limit) continue;
        throw InputError("<flags>", "--memory-limit",
                         "rank " + std::to_string(m.rank) + " is predicted to need " +
                             std::to_string(m.peak_bytes) + " bytes (" + gib(m.peak_bytes) +
                             ": params " + std::to_string(m.params_bytes) + ", grads " +
                             std::to_string(m.grads_bytes) + ", optimizer " +
                             std::to_string(m.optimizer_bytes) + ", activations " +
                             std::to_string(m.activations_bytes) + "), over the limit of " +
                             std::to_string(limit) + " bytes");
    }
}

// Without a memory limit, the limit is the memory of this machine: a layout whose tensors
// cannot fit (a hostile or mistyped file declaring gigabyte-sized dimensions) is refused
// with the predicted figures instead of failing in the allocator or waking the OOM killer.
void refuse_beyond_host_memory(const RunRequest& r, const std::vector<RankMemory>& mem) {
    const HostMemoryNeed n = host_memory_need(mem, r.options.backend, r.launcher, r.check);
    if (n.fits()) return;
    const bool on_gpu = r.options.backend == BackendKind::Cuda;
    std::ostringstream what;
    what << "the layout is predicted to need " << std::fixed << std::setprecision(1) << n.need_bytes / kGiB
         << " GiB of host memory in this process (" << n.scope << ")"
         << (r.check && !on_gpu ? " with --check" : "") << ", more than the " << n.host_bytes / kGiB
         << " GiB of memory of this machine; check the model's dimensions, or set --memory-limit";
    throw InputError(r.source.empty() ? "<flags>" : r.source, "model", what.str());
}

// Processes of this job on this node, from the launcher's environment (Open MPI, Slurm,
// MPICH/Hydra); 1 when none says.
int local_ranks_on_this_node() {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE", "MPI_LOCALNRANKS"}) {
        if (const char* v = std::getenv(name)) {
            const int n = std::atoi(v);
            if (n > 0) return n;
        }
    }
    return 1;
}

// Under MPI every rank writes its own file: OUT.rankN.sqlite.
std::string profile_path_of(const std::string& path, int rank, int world, bool per_rank) {
    if (!per_rank || world == 1) return path;
    const auto dot = path.rfind('.');
    const std::string suffix = ".rank" + std::to_string(rank);
    return dot == std::string::npos ? path + suffix : path.substr(0, dot) + suffix + path.substr(dot);
}

}  // namespace

HostMemoryNeed host_memory_need(const std::vector<RankMemory>& predicted, BackendKind backend, Launcher launcher,
                                bool check) {
    double largest = 0, total = 0, model = 0;
    for (const auto& m : predicted) {
        largest = std::max(largest, static_cast<double>(m.peak_bytes));
        total += static_cast<double>(m.peak_bytes);
        model += static_cast<double>(m.params_bytes + m.grads_bytes + m.optimizer_bytes);
    }
    // The ranks of the local launcher share this process; under MPI each process holds one
    // rank (ranks may share a host, which this check cannot see). The reference of a check
    // is an unsharded copy on the host whatever the backend; on the CUDA backend the ranks'
    // tensors are on the GPUs and only that copy counts here.
    const bool on_gpu = backend == BackendKind::Cuda;
    const bool all_in_process = launcher == Launcher::Local;
    HostMemoryNeed n;
    n.host_bytes = host_memory_bytes();
    n.need_bytes = (on_gpu ? 0.0 : all_in_process ? total : largest) + (check ? model : 0.0);
    n.scope = on_gpu ? "the --check reference" : all_in_process ? "all ranks" : "one rank";
    return n;
}

CheckTolerance check_tolerance(const RunRequest& request) {
    if (request.tolerance) return {.loss = *request.tolerance, .weights = *request.tolerance};
    return default_check_tolerance(precision_of(request.layout));
}

std::vector<RankMemory> preflight(const RunRequest& r) {
    if (r.options.steps < 1) throw InputError("<flags>", "--steps", "must be at least 1");
    if (r.options.slow_rank >= 0) {
        if (r.options.slow_rank >= r.layout.gpus) {
            throw InputError("<flags>", "--slow-rank",
                             "rank " + std::to_string(r.options.slow_rank) + " is not in the job (ranks 0.." +
                                 std::to_string(r.layout.gpus - 1) + ")");
        }
        if (!(r.options.slow_factor >= 1.0 && r.options.slow_factor <= kMaxSlowFactor)) {
            throw InputError("<flags>", "--slow-rank",
                             "the factor must be between 1 and " + std::to_string(static_cast<int>(kMaxSlowFactor)));
        }
    }
    const auto validation = validate_layout(r.layout, r.source);
    if (!validation.valid()) throw InputError(validation.errors);
    // A backend that cannot run here is refused before anything is allocated; this is where
    // the CUDA plugin is loaded. Local: every rank's GPU in this process. Under MPI each
    // process takes one GPU of its node, so a node's processes must not outnumber its GPUs.
    require_backend(r.options.backend, r.launcher == Launcher::Mpi ? local_ranks_on_this_node() : r.layout.gpus);
    std::vector<RankMemory> memory = estimate_memory(r.layout, r.options);
    if (r.memory_limit_bytes) {
        refuse_over_limit(memory, *r.memory_limit_bytes);
    } else {
        refuse_beyond_host_memory(r, memory);
    }
    (void)make_token_stream(r.layout, r.options);
    return memory;
}

struct RunSession::Mpi {
#ifdef MESHWORK_HAVE_MPI
    std::unique_ptr<MpiSession> session;
#endif
};

RunSession::RunSession(RunRequest request, ProfileOpener open_profile)
    : request_(std::move(request)), open_profile_(std::move(open_profile)), mpi_(std::make_unique<Mpi>()) {
    predicted_ = preflight(request_);
    if (request_.launcher != Launcher::Mpi) return;
#ifdef MESHWORK_HAVE_MPI
    const int gpus = request_.layout.gpus;
    if (!MpiSession::launched_by_mpi()) {
        throw InputError("<flags>", "--launcher",
                         "mpi: start one process per rank, e.g. mpirun -np " + std::to_string(gpus) +
                             " meshwork-cli run ... --launcher mpi");
    }
    mpi_->session = std::make_unique<MpiSession>(nullptr, nullptr);
    if (mpi_->session->world_size() != gpus) {
        throw InputError("<flags>", "--launcher",
                         "mpi: the job has " + std::to_string(mpi_->session->world_size()) +
                             " processes but the layout has " + std::to_string(gpus) + " ranks");
    }
    world_rank_ = mpi_->session->world_rank();
#else
    throw InputError("<flags>", "--launcher", "this build has no MPI (configure with MESHWORK_MPI=ON)");
#endif
}

RunSession::~RunSession() = default;

std::unique_ptr<RunProfile> RunSession::open_profile(std::string& path) const {
    const RunRequest& r = request_;
    if (r.profile_path.empty()) return nullptr;
    if (!open_profile_) throw RuntimeError("a profile was asked for but this program cannot write one");
    const bool mpi = r.launcher == Launcher::Mpi;
    ProfileSpec spec;
    spec.path = profile_path_of(r.profile_path, world_rank_, r.layout.gpus, mpi);
    spec.info = run_trace_info(r.layout, r.options);
    spec.gpu = r.options.backend == BackendKind::Cuda;
    spec.rank = world_rank_;
    // The local launcher's ranks are threads of this process, rank r on device r; under
    // MPI every device of this process belongs to its rank.
    if (spec.gpu && !mpi) {
        for (int rank = 0; rank < r.layout.gpus; ++rank) spec.rank_of_device.push_back(rank);
    }
    auto profile = open_profile_(spec);
    path = spec.path;
    return profile;
}

RunReport RunSession::run(std::stop_token stop, const RunEvents& events) {
    const RunRequest& r = request_;
    const bool mpi = r.launcher == Launcher::Mpi;
#ifdef MESHWORK_HAVE_MPI
    std::unique_ptr<Communicator> mpi_world;
    if (mpi) mpi_world = mpi_->session->world(r.options.comm_timeout_s, stop);
#endif
    RunReport report;
    report.tolerance = check_tolerance(r);
    std::unique_ptr<RunProfile> profile = open_profile(report.profile_path);
    // GPU records go into the trace before it closes, after a failure or a stop too.
    const auto close_profile = [&] {
        if (!profile) return;
        const std::string warning = profile->close();
        profile.reset();
        if (!warning.empty() && events.on_warning) events.on_warning(warning);
    };
    try {
        ReferenceState reference;
        if (r.check) {
            if (root() && events.on_phase) events.on_phase(RunPhase::Reference);
            reference = run_reference(r.layout, r.options, stop);
        }
        if (root() && events.on_phase) events.on_phase(RunPhase::Ranks);
        RunHooks hooks;
        hooks.sink = profile ? &profile->sink() : nullptr;
        hooks.reference = r.check ? &reference : nullptr;
        hooks.tolerance = report.tolerance.weights;
        hooks.loss_tolerance = report.tolerance.loss;
        hooks.on_step = events.on_step;
        hooks.stop = stop;
        if (!mpi) {
            report.result = run_in_process(r.layout, r.options, hooks);
        } else {
#ifdef MESHWORK_HAVE_MPI
            try {
                report.result = run_rank(r.layout, r.options, hooks, *mpi_world);
            } catch (const StopRequested&) {
                throw;
            } catch (const std::exception& e) {
                close_profile();
                MpiSession::abort_job("rank " + std::to_string(world_rank_) + ": " + e.what(), r.mpi_abort_exit_code);
            }
#endif
        }
    } catch (...) {
        close_profile();
        throw;
    }
    close_profile();
    if (r.check) report.check = report.result.mismatch ? CheckStatus::Failed : CheckStatus::Passed;
    return report;
}

}  // namespace meshwork::engine
