#include "core/engine/rank_context.h"

#include <ctime>
#include <exception>
#include <thread>

#include "core/engine/nvtx/scoped_range.h"
#include "core/engine/stop.h"
#include "core/engine/thread_sched.h"
#include "core/mesh/device_mesh.h"

namespace meshwork::engine {

namespace {
// The communicators a rank builds besides the world, in the same order on every rank.
constexpr Axis kGroupAxes[] = {Axis::Tp, Axis::Cp, Axis::Dp, Axis::DpCp, Axis::Pp, Axis::Ep, Axis::Edp};
}  // namespace

RankContext::RankContext(const Layout& layout, Backend& backend, Communicator& world,
                         TraceSink* sink, std::stop_token stop, bool host_compute)
    : be(backend),
      compute(backend.compute_stream()),
      comm(backend.create_stream("comm")),
      world_rank(world.world_rank()),
      shape(layout.parallel.mesh),
      world_(world),
      groups_(kAxisCount),
      sink_(sink),
      stop_(std::move(stop)),
      host_compute_(host_compute) {
    const DeviceMesh mesh = layout.mesh();
    coords = mesh.coords(world_rank);
    // Same order on every rank: split is collective over the world.
    for (Axis g : kGroupAxes) {
        groups_[static_cast<std::size_t>(g)] = world.split(mesh.groups(g), to_string(g));
    }
    order_to_comm_ = be.create_event();
    order_to_compute_ = be.create_event();
    if (sink_) {
        compute_track_ = sink_->add_track({world_rank, TrackKind::ComputeStream, 0, "compute"});
        comm_track_ = sink_->add_track({world_rank, TrackKind::CommStream, 0, "comm"});
        if (host_compute_) sched_track_ = sink_->add_track({world_rank, TrackKind::Host, 0, "scheduler"});
    }
}

RankContext::~RankContext() {
    // An interrupted or failed step still leaves its finished ops in the trace.
    try {
        flush_trace();
    } catch (...) {
    }
    for (auto& p : pending_) {
        be.destroy_event(p.start);
        be.destroy_event(p.end);
    }
    be.destroy_event(order_to_comm_);
    be.destroy_event(order_to_compute_);
}

Communicator& RankContext::group(Axis g) {
    if (g == Axis::World) return world_;
    return *groups_.at(static_cast<std::size_t>(g));
}

std::size_t RankContext::begin_record(EventKind kind, Stream s, std::string name,
                                      std::int64_t bytes, double flops, int layer, int group_size) {
    throw_if_stopped(stop_);
    if (!sink_) return 0;
    const int track = kind == EventKind::Communication ? comm_track_ : compute_track_;
    Pending p{be.create_event(), be.create_event(), kind, track, std::move(name), bytes, flops,
              step, micro_batch, layer, group_size};
    be.record_event(p.start, s);
    pending_.push_back(std::move(p));
    return pending_.size() - 1;
}

void RankContext::end_record(std::size_t index, Stream s) {
    if (!sink_) return;
    be.record_event(pending_[index].end, s);
    pending_[index].ended = true;
}

void RankContext::flush_trace() {
    if (!sink_) return;
    for (auto& p : pending_) {
        if (!p.ended) {
            // Interrupted mid-op: its end event was never recorded, and an event that ends
            // before it starts would make the whole trace unreadable.
            be.destroy_event(p.start);
            be.destroy_event(p.end);
            continue;
        }
        be.synchronize_event(p.end);
        TraceEvent e;
        e.rank = world_rank;
        e.track = p.track;
        e.kind = p.kind;
        e.name = p.name;
        e.start_ns = be.event_time_ns(p.start);
        e.end_ns = be.event_time_ns(p.end);
        e.bytes = p.bytes;
        e.flops = p.flops;
        e.step = p.step;
        e.micro_batch = p.micro_batch;
        e.layer = p.layer;
        e.group_size = p.group_size;
        e.collective = p.collective;
        sink_->add_event(e);
        be.destroy_event(p.start);
        be.destroy_event(p.end);
    }
    pending_.clear();
}

void RankContext::begin_step_sched() {
    if (sched_track_ < 0) return;
    const ThreadSched s = read_thread_sched();
    sched_on_cpu_ns_ = s.on_cpu_ns, sched_wait_ns_ = s.run_queue_wait_ns, sched_slices_ = s.timeslices;
    compute_cpu_ns_ = 0;
    comm_cpu_ns_ = 0;
    sched_open_ = true;
}

void RankContext::end_step_sched() {
    if (sched_track_ < 0 || !sched_open_) return;
    sched_open_ = false;
    const ThreadSched s = read_thread_sched();
    const std::int64_t at = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count();
    if (s.available) {
        sink_->add_counter(world_rank, sched_track_, "thread.on_cpu_s", at,
                           static_cast<double>(s.on_cpu_ns - sched_on_cpu_ns_) * 1e-9);
        sink_->add_counter(world_rank, sched_track_, "thread.run_queue_wait_s", at,
                           static_cast<double>(s.run_queue_wait_ns - sched_wait_ns_) * 1e-9);
        sink_->add_counter(world_rank, sched_track_, "thread.timeslices", at,
                           static_cast<double>(s.timeslices - sched_slices_));
    }
    sink_->add_counter(world_rank, sched_track_, "thread.compute_on_cpu_s", at,
                       static_cast<double>(compute_cpu_ns_) * 1e-9);
    sink_->add_counter(world_rank, sched_track_, "thread.comm_on_cpu_s", at,
                       static_cast<double>(comm_cpu_ns_) * 1e-9);
    if (records_host) {
        if (const HostCpu h = read_host_cpu(); h.available) {
            sink_->add_counter(world_rank, sched_track_, "host.busy_cpu_s", at, h.host_busy_cpu_s);
            sink_->add_counter(world_rank, sched_track_, "process.cpu_s", at, h.process_cpu_s);
            sink_->add_counter(world_rank, sched_track_, "host.niced_cpu_s", at, h.host_niced_cpu_s);
        }
    }
}

RankContext::Op::Op(RankContext& ctx, std::string name, int layer, double flops)
    : ctx_(ctx),
      index_(ctx.begin_record(EventKind::Compute, ctx.compute, std::move(name), 0, flops, layer)),
      started_(std::chrono::steady_clock::now()),
      cpu_started_ns_((ctx.compute_slowdown.host_cpu_time || ctx.sched_track_ >= 0) && ctx.open_ops_ == 0
                          ? thread_cpu_ns()
                          : 0),
      unwinding_(std::uncaught_exceptions()) {
    ++ctx_.open_ops_;
}

RankContext::Op::~Op() {
    // The injected slowdown (run --slow-rank, see compute_slowdown): after the op's work,
    // before its end is recorded, so the trace, the collectives after it and the step all
    // see a longer op. Only the outermost op, and not while an exception unwinds.
    const Slowdown& slow = ctx_.compute_slowdown;
    if (slow.factor > 1.0 && ctx_.open_ops_ == 1 && std::uncaught_exceptions() == unwinding_) {
        try {
            ctx_.be.synchronize(ctx_.compute);
            if (slow.host_cpu_time) {
                const std::int64_t now = thread_cpu_ns();
                const auto extra = static_cast<std::int64_t>(static_cast<double>(now - cpu_started_ns_) * (slow.factor - 1.0));
                const std::int64_t until = now + extra;
                while (thread_cpu_ns() < until) {
                }
            } else {
                const auto took = std::chrono::steady_clock::now() - started_;
                std::this_thread::sleep_for(std::chrono::duration<double>(took) * (slow.factor - 1.0));
            }
        } catch (...) {
            // A failing stream is reported by the next op; a destructor must not throw.
        }
    }
    if (ctx_.sched_track_ >= 0 && ctx_.open_ops_ == 1) ctx_.compute_cpu_ns_ += thread_cpu_ns() - cpu_started_ns_;
    --ctx_.open_ops_;
    ctx_.end_record(index_, ctx_.compute);
}

template <typename Fn>
void RankContext::collective(Axis g, Collective what, std::size_t bytes, int group_size,
                             Fn&& fn) {
    be.record_event(order_to_comm_, compute);
    be.wait_event(comm, order_to_comm_);
    std::string name = std::string(to_string(what)) + "(" + to_string(g) + ")";
    const ScopedRange range(be, range_name::collective(name, bytes, size(g)));
    const std::size_t rec = begin_record(EventKind::Communication, comm, std::move(name),
                                         static_cast<std::int64_t>(bytes), 0, -1, group_size);
    if (sink_) pending_[rec].collective = what;
    // The thread's CPU time inside the collective (copies, reductions, locking, waking its
    // peers; not its sleeps): also inside the span that calibrate fits the link on, so the
    // fit can tell it from the CPU outside compute ops and collectives. Only outside compute
    // ops, whose CPU time holds it already.
    const bool count_cpu = sched_track_ >= 0 && open_ops_ == 0;
    const std::int64_t cpu_started_ns = count_cpu ? thread_cpu_ns() : 0;
    fn(group(g));
    if (count_cpu) comm_cpu_ns_ += thread_cpu_ns() - cpu_started_ns;
    end_record(rec, comm);
    be.record_event(order_to_compute_, comm);
    be.wait_event(compute, order_to_compute_);
}

namespace {
std::size_t total(const std::vector<std::size_t>& c) {
    std::size_t n = 0;
    for (auto v : c) n += v;
    return n;
}
}  // namespace

void RankContext::all_reduce(Axis g, float* data, std::size_t count, ReduceOp op) {
    if (size(g) == 1) return;
    collective(g, Collective::AllReduce, count * sizeof(float), size(g),
               [&](Communicator& c) { c.all_reduce(data, data, count, op, comm); });
}

void RankContext::all_gather_v(Axis g, const float* send, float* recv,
                               const std::vector<std::size_t>& counts) {
    collective(g, Collective::AllGather, total(counts) * sizeof(float), size(g),
               [&](Communicator& c) { c.all_gather_v(send, recv, counts, comm); });
}

void RankContext::reduce_scatter_v(Axis g, const float* send, float* recv,
                                   const std::vector<std::size_t>& counts) {
    collective(g, Collective::ReduceScatter, total(counts) * sizeof(float), size(g),
               [&](Communicator& c) { c.reduce_scatter_v(send, recv, counts, comm); });
}

void RankContext::all_to_all_v(Axis g, const float* send,
                               const std::vector<std::size_t>& send_counts, float* recv,
                               const std::vector<std::size_t>& recv_counts) {
    collective(g, Collective::AllToAll, total(send_counts) * sizeof(float), size(g), [&](Communicator& c) {
        c.all_to_all_v(send, send_counts, recv, recv_counts, comm);
    });
}

void RankContext::send(Axis g, const float* data, std::size_t count, int peer, int tag) {
    collective(g, Collective::Send, count * sizeof(float), 2,
               [&](Communicator& c) { c.send(data, count, peer, tag, comm); });
}

void RankContext::recv(Axis g, float* data, std::size_t count, int peer, int tag) {
    collective(g, Collective::Recv, count * sizeof(float), 2,
               [&](Communicator& c) { c.recv(data, count, peer, tag, comm); });
}

}  // namespace meshwork::engine
