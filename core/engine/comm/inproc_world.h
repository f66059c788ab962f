// Shared state of the in-process communicator: one thread per rank in one address space.
// A collective is a rendezvous: every rank posts its buffers in its slot, waits for all
// (arrival), does its share of the copying/reducing straight from the other ranks' buffers,
// then waits for all again (departure) so that no buffer is reused while another rank reads
// it. Waits poll the world's abort flag and give up after the timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/engine/communicator.h"

namespace meshwork::engine {

class InProcessWorld;

// What one rank posts for a collective.
struct InprocSlot {
    const char* op = "";
    const void* send = nullptr;
    void* recv = nullptr;
    std::size_t count = 0;
    const std::vector<std::size_t>* counts = nullptr;       // per rank (v-collectives)
    const std::vector<std::size_t>* recv_counts = nullptr;  // all_to_all_v
    int root = 0;
    ReduceOp reduce = ReduceOp::Sum;
};

// One process group: members (world ranks, in group-rank order), the rendezvous and the
// point-to-point mailboxes.
class InprocGroup {
public:
    InprocGroup(InProcessWorld& world, std::vector<int> members, std::string label);

    [[nodiscard]] int size() const { return static_cast<int>(members_.size()); }
    [[nodiscard]] const std::vector<int>& members() const { return members_; }
    [[nodiscard]] const std::string& label() const { return label_; }

    // Posts `mine`, waits for every rank, checks that they called the same collective.
    void arrive(int rank, const InprocSlot& mine);
    [[nodiscard]] const InprocSlot& slot(int rank) const { return slots_[static_cast<std::size_t>(rank)]; }
    // Waits until every rank finished reading the slots of this collective.
    void depart(int rank);

    void post(int src, int dst, int tag, std::vector<float> message);
    std::vector<float> take(int src, int dst, int tag, int my_rank);

    void wake_all();

private:
    // Waits until every member reached this phase. `abortable`: give up when the world
    // aborts (arrival only; see depart).
    void wait_all(std::unique_lock<std::mutex>& lk, int rank, const char* phase,
                  std::size_t& counter, std::uint64_t& generation, bool abortable);

    InProcessWorld& world_;
    std::vector<int> members_;
    std::string label_;
    std::mutex mu_;
    std::condition_variable cv_;  // collectives' arrival and departure
    std::vector<InprocSlot> slots_;
    std::vector<std::uint64_t> calls_;  // collectives entered per rank (for timeout messages)
    std::size_t arrived_ = 0, departed_ = 0;
    std::uint64_t arrive_gen_ = 0, depart_gen_ = 0;
    std::map<std::tuple<int, int, int>, std::deque<std::vector<float>>> mail_;
    // One per member, for the messages to it: a send wakes its receiver only, as a real
    // transport does. With cv_ for both, every send woke every rank of the group blocked in
    // a recv or a collective (a pipeline group's other stages), each to find nothing for it
    // and sleep again.
    std::vector<std::condition_variable> mail_cv_;
};

class InProcessWorld {
public:
    // `timeout_s`: how long a rank waits for the others in one collective or recv.
    InProcessWorld(int size, double timeout_s);

    [[nodiscard]] int size() const { return size_; }
    [[nodiscard]] double timeout_s() const { return timeout_s_; }

    // The world communicator of `world_rank` (each rank thread calls this once).
    std::unique_ptr<Communicator> communicator(int world_rank);
    // The group with exactly these members and label, shared by every member.
    std::shared_ptr<InprocGroup> group(const std::vector<int>& members, const std::string& label);

    void abort(const std::string& reason);
    [[nodiscard]] bool aborted() const { return aborted_.load(); }
    [[nodiscard]] std::string abort_reason() const;

private:
    int size_;
    double timeout_s_;
    std::atomic<bool> aborted_{false};
    mutable std::mutex mu_;
    std::string reason_;
    std::map<std::pair<std::vector<int>, std::string>, std::shared_ptr<InprocGroup>> groups_;
};

}  // namespace meshwork::engine
