// MpiCommunicator: MPI non-blocking collectives on host buffers, completed by polling.
#include "core/engine/comm/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <list>
#include <thread>
#include <vector>

#include "core/common/error.h"
#include "core/engine/stop.h"

namespace meshwork::engine {

namespace {

// Sleep between polls once a wait has spun this many times: several ranks share few cores.
constexpr int kSpinPolls = 2000;
constexpr auto kPollSleep = std::chrono::microseconds(50);

void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        throw CommError(std::string(what) + ": " + std::string(text, static_cast<std::size_t>(len)));
    }
}

// MPI counts are int: refuse what does not fit rather than truncate.
int as_count(std::size_t n, const char* what) {
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw CommError(std::string(what) + ": " + std::to_string(n) + " floats exceed MPI's int count");
    }
    return static_cast<int>(n);
}

std::vector<int> as_counts(const std::vector<std::size_t>& c, const char* what) {
    std::vector<int> out;
    out.reserve(c.size());
    for (std::size_t n : c) out.push_back(as_count(n, what));
    return out;
}

std::vector<int> displacements(const std::vector<int>& counts) {
    std::vector<int> d(counts.size(), 0);
    for (std::size_t i = 1; i < counts.size(); ++i) d[i] = d[i - 1] + counts[i - 1];
    return d;
}

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator(MPI_Comm comm, std::string label, double timeout_s, std::stop_token stop, bool owns)
        : comm_(comm), label_(std::move(label)), timeout_s_(timeout_s), stop_(std::move(stop)), owns_(owns) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
        MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
    }
    ~MpiCommunicator() override {
        // Buffered sends still in flight complete before their buffers go; a failed run
        // aborts the job instead of reaching here.
        for (auto& p : pending_) MPI_Wait(&p.request, MPI_STATUS_IGNORE);
        if (owns_) MPI_Comm_free(&comm_);
    }
    MpiCommunicator(const MpiCommunicator&) = delete;
    MpiCommunicator& operator=(const MpiCommunicator&) = delete;

    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int size() const override { return size_; }
    [[nodiscard]] int world_rank() const override { return world_rank_; }
    [[nodiscard]] const std::string& label() const override { return label_; }
    [[nodiscard]] std::string kind() const override { return "mpi"; }

    std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>& groups,
                                        const std::string& label) override {
        int color = MPI_UNDEFINED, key = 0;
        for (std::size_t g = 0; g < groups.size(); ++g) {
            const auto it = std::find(groups[g].begin(), groups[g].end(), world_rank_);
            if (it != groups[g].end()) {
                color = static_cast<int>(g);
                key = static_cast<int>(it - groups[g].begin());
            }
        }
        MPI_Comm sub = MPI_COMM_NULL;
        check(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
        if (sub == MPI_COMM_NULL) return nullptr;
        return std::make_unique<MpiCommunicator>(sub, label, timeout_s_, stop_, true);
    }

    void all_reduce(const float* send, float* recv, std::size_t count, ReduceOp op,
                    Stream /*s*/) override {
        MPI_Request req;
        const void* sbuf = send == recv ? MPI_IN_PLACE : send;
        check(MPI_Iallreduce(sbuf, recv, as_count(count, "all_reduce"), MPI_FLOAT,
                             op == ReduceOp::Sum ? MPI_SUM : MPI_MAX, comm_, &req),
              "MPI_Iallreduce");
        wait(req, "all_reduce");
    }

    void all_gather_v(const float* send, float* recv, const std::vector<std::size_t>& counts,
                      Stream /*s*/) override {
        const auto c = as_counts(counts, "all_gather_v");
        const auto d = displacements(c);
        MPI_Request req;
        check(MPI_Iallgatherv(send, c[static_cast<std::size_t>(rank_)], MPI_FLOAT, recv, c.data(),
                              d.data(), MPI_FLOAT, comm_, &req),
              "MPI_Iallgatherv");
        wait(req, "all_gather_v");
    }

    void reduce_scatter_v(const float* send, float* recv, const std::vector<std::size_t>& counts,
                          Stream /*s*/) override {
        const auto c = as_counts(counts, "reduce_scatter_v");
        MPI_Request req;
        check(MPI_Ireduce_scatter(send, recv, c.data(), MPI_FLOAT, MPI_SUM, comm_, &req),
              "MPI_Ireduce_scatter");
        wait(req, "reduce_scatter_v");
    }

    void all_to_all_v(const float* send, const std::vector<std::size_t>& send_counts,
                      float* recv, const std::vector<std::size_t>& recv_counts,
                      Stream /*s*/) override {
        const auto sc = as_counts(send_counts, "all_to_all_v");
        const auto rc = as_counts(recv_counts, "all_to_all_v");
        const auto sd = displacements(sc), rd = displacements(rc);
        MPI_Request req;
        check(MPI_Ialltoallv(send, sc.data(), sd.data(), MPI_FLOAT, recv, rc.data(), rd.data(),
                             MPI_FLOAT, comm_, &req),
              "MPI_Ialltoallv");
        wait(req, "all_to_all_v");
    }

    void broadcast(float* buffer, std::size_t count, int root, Stream /*s*/) override {
        MPI_Request req;
        check(MPI_Ibcast(buffer, as_count(count, "broadcast"), MPI_FLOAT, root, comm_, &req),
              "MPI_Ibcast");
        wait(req, "broadcast");
    }

    void send(const float* buffer, std::size_t count, int peer, int tag, Stream /*s*/) override {
        reap_sends();
        pending_.push_back({std::vector<float>(buffer, buffer + count), MPI_REQUEST_NULL});
        auto& p = pending_.back();
        check(MPI_Isend(p.data.data(), as_count(count, "send"), MPI_FLOAT, peer, tag, comm_,
                        &p.request),
              "MPI_Isend");
    }

    void recv(float* buffer, std::size_t count, int peer, int tag, Stream /*s*/) override {
        MPI_Request req;
        check(MPI_Irecv(buffer, as_count(count, "recv"), MPI_FLOAT, peer, tag, comm_, &req),
              "MPI_Irecv");
        MPI_Status status;
        wait(req, "recv", &status);
        int got = 0;
        MPI_Get_count(&status, MPI_FLOAT, &got);
        if (static_cast<std::size_t>(got) != count) {
            throw CommError("recv(" + label_ + ") on rank " + std::to_string(world_rank_) +
                            ": expected " + std::to_string(count) + " floats from group rank " +
                            std::to_string(peer) + ", got " + std::to_string(got));
        }
    }

    void barrier() override {
        MPI_Request req;
        check(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
        wait(req, "barrier");
    }

    void abort(const std::string& reason) override { MpiSession::abort_job(reason, 1); }

private:
    struct PendingSend {
        std::vector<float> data;
        MPI_Request request;
    };

    void reap_sends() {
        for (auto it = pending_.begin(); it != pending_.end();) {
            int done = 0;
            MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
            it = done ? pending_.erase(it) : std::next(it);
        }
    }

    void wait(MPI_Request& req, const char* what, MPI_Status* status = nullptr) {
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::duration<double>(timeout_s_);
        for (int polls = 0;; ++polls) {
            int done = 0;
            check(MPI_Test(&req, &done, status ? status : MPI_STATUS_IGNORE), what);
            if (done) return;
            throw_if_stopped(stop_);
            if (std::chrono::steady_clock::now() > deadline) {
                throw CommError(std::string(what) + "(" + label_ + ") on rank " +
                                std::to_string(world_rank_) + " timed out after " +
                                std::to_string(timeout_s_) + " s");
            }
            if (polls > kSpinPolls) {
                std::this_thread::sleep_for(kPollSleep);
            } else {
                std::this_thread::yield();
            }
        }
    }

    MPI_Comm comm_;
    std::string label_;
    double timeout_s_;
    std::stop_token stop_;
    bool owns_;
    int rank_ = 0, size_ = 1, world_rank_ = 0;
    std::list<PendingSend> pending_;
};

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    // Errors come back as codes (turned into CommError) instead of killing the job silently.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

std::unique_ptr<Communicator> MpiSession::world(double timeout_s, std::stop_token stop) const {
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    return std::make_unique<MpiCommunicator>(dup, "world", timeout_s, std::move(stop), true);
}

bool MpiSession::launched_by_mpi() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
           std::getenv("PMIX_RANK") != nullptr;
}

void MpiSession::abort_job(const std::string& reason, int exit_code) {
    print_error_line(reason);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);
}

}  // namespace meshwork::engine
