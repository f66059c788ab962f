// What one rank's model code sees: its backend and streams, its coordinates in the mesh,
// the communicator of every mesh axis, and the tracing of ops and collectives.
//
// Collectives go through RankContext so that each one runs on the communication stream
// (ordered after the compute stream's work by an event, and the compute stream waits for
// it), is recorded as a timeline event, and is checked for Ctrl-C.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "core/engine/backend.h"
#include "core/engine/communicator.h"
#include "core/layout/layout.h"
#include "core/trace/trace_event.h"

namespace meshwork::engine {


class RankContext {
public:
    // Builds every axis group from the layout's mesh (collective over `world`). Every op
    // and collective first checks `stop` (StopRequested).
    // `host_compute`: the backend computes on this thread (the CPU engine), so the thread's
    // scheduler statistics are the rank's: with a sink, each step records them as counters
    // (begin_step_sched / end_step_sched).
    RankContext(const Layout& layout, Backend& backend, Communicator& world, TraceSink* sink,
                std::stop_token stop = {}, bool host_compute = false);
    ~RankContext();
    RankContext(const RankContext&) = delete;
    RankContext& operator=(const RankContext&) = delete;

    Backend& be;
    Stream compute;
    Stream comm;
    int world_rank = 0;
    RankCoords coords;
    MeshShape shape;

    // Labels of the trace events that follow.
    int step = -1;
    int micro_batch = -1;
    // Every compute op takes `factor` times as long (EngineOptions::slow_factor; 1: ops run as
    // they are): at its end the op keeps its stream busy (factor − 1) × as long again. A
    // device of its own (GPU) is idled for that wall time; a host device (the CPU backend,
    // whose rank threads share the cores) burns that much more of its thread's CPU time, as
    // a slower device would: wall time there is mostly the other ranks' turns on the cores.
    struct Slowdown {
        double factor = 1.0;
        bool host_cpu_time = false;
    };
    Slowdown compute_slowdown;
    // This rank also records the host's and the process's CPU time per step (end_step_sched):
    // one rank of a process whose threads are the whole job.
    bool records_host = false;

    [[nodiscard]] Communicator& group(Axis g);
    [[nodiscard]] int size(Axis g) { return group(g).size(); }
    [[nodiscard]] int rank(Axis g) { return group(g).rank(); }

    void all_reduce(Axis g, float* data, std::size_t count, ReduceOp op = ReduceOp::Sum);
    void all_gather_v(Axis g, const float* send, float* recv, const std::vector<std::size_t>& counts);
    void all_gather(Axis g, const float* send, float* recv, std::size_t count_per_rank) {
        all_gather_v(g, send, recv, std::vector<std::size_t>(static_cast<std::size_t>(size(g)), count_per_rank));
    }
    void reduce_scatter_v(Axis g, const float* send, float* recv,
                          const std::vector<std::size_t>& counts);
    void all_to_all_v(Axis g, const float* send, const std::vector<std::size_t>& send_counts,
                      float* recv, const std::vector<std::size_t>& recv_counts);
    void send(Axis g, const float* data, std::size_t count, int peer, int tag);
    void recv(Axis g, float* data, std::size_t count, int peer, int tag);

    // A compute op on the compute stream, traced from construction to destruction.
    class Op {
    public:
        Op(RankContext& ctx, std::string name, int layer, double flops);
        ~Op();
        Op(const Op&) = delete;
        Op& operator=(const Op&) = delete;

    private:
        RankContext& ctx_;
        std::size_t index_;
        std::chrono::steady_clock::time_point started_;
        std::int64_t cpu_started_ns_ = 0;  // this thread's CPU time at the start (outermost op, host compute)
        int unwinding_;  // std::uncaught_exceptions() at construction
    };
    // Writes the recorded ops and collectives to the sink (after a step, when events are done).
    void flush_trace();
    // Around one step, on a host-compute rank with a sink: the thread's scheduler
    // statistics over the step become counters on the rank's "scheduler" track, stamped
    // with the step's end (seconds per step): thread.on_cpu_s, thread.run_queue_wait_s,
    // thread.timeslices (/proc/thread-self/schedstat; absent where it cannot be read) and
    // thread.compute_on_cpu_s (the thread's CPU time inside compute ops),
    // thread.comm_on_cpu_s (its CPU time inside collectives, sends and receives: the CPU
    // that the spans calibrate fits the links on already hold); on the rank that
    // `records_host` (one per process whose threads are the whole job), also host.busy_cpu_s
    // and process.cpu_s, cumulative (HostCpu). See docs/trace-format.md, "Scheduler counters".
    void begin_step_sched();
    void end_step_sched();
    [[nodiscard]] bool tracing() const { return sink_ != nullptr; }

private:
    struct Pending {
        Event start, end;
        EventKind kind;
        int track;
        std::string name;
        std::int64_t bytes;
        double flops;
        int step, micro_batch, layer;
        int group_size;  // ranks taking part in a collective (2 for send/recv); 0 for ops
        // False while the op runs: an op a stop or a failure cut short has no end to report.
        bool ended = false;
        Collective collective = Collective::None;  // of a collective; None for ops
    };
    std::size_t begin_record(EventKind kind, Stream s, std::string name, std::int64_t bytes,
                             double flops, int layer, int group_size = 0);
    void end_record(std::size_t index, Stream s);
    // Orders `comm` after compute, runs `fn` traced, orders compute after comm.
    // `group_size`: the ranks the collective involves (the group's size; 2 for send/recv).
    template <typename Fn>
    void collective(Axis g, Collective what, std::size_t bytes, int group_size, Fn&& fn);

    Communicator& world_;
    std::vector<std::unique_ptr<Communicator>> groups_;  // indexed by Axis (World and Etp are null)
    TraceSink* sink_;
    std::stop_token stop_;
    int compute_track_ = 0, comm_track_ = 0;
    Event order_to_comm_, order_to_compute_;
    std::vector<Pending> pending_;
    int open_ops_ = 0;  // ops under construction..destruction: only the outermost is slowed
    bool host_compute_ = false;
    int sched_track_ = -1;          // the counters' track; -1 = not recorded
    bool sched_open_ = false;       // begin_step_sched ran, end_step_sched not yet
    std::int64_t sched_on_cpu_ns_ = 0, sched_wait_ns_ = 0, sched_slices_ = 0;
    std::int64_t compute_cpu_ns_ = 0;  // CPU time inside outermost compute ops, this step
    std::int64_t comm_cpu_ns_ = 0;     // CPU time inside collectives outside compute ops, this step
};

}  // namespace meshwork::engine
