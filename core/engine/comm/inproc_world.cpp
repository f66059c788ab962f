#include "core/engine/comm/inproc_world.h"

#include <cstring>

#include "core/engine/comm/inproc_communicator.h"

namespace meshwork::engine {

namespace {
// Waits wake up this often to notice an abort by a rank of another group.
constexpr auto kPollInterval = std::chrono::milliseconds(20);

bool same_counts(const std::vector<std::size_t>* a, const std::vector<std::size_t>* b) {
    if (a == nullptr || b == nullptr) return a == b;
    return *a == *b;
}
}  // namespace

InprocGroup::InprocGroup(InProcessWorld& world, std::vector<int> members, std::string label)
    : world_(world),
      members_(std::move(members)),
      label_(std::move(label)),
      slots_(members_.size()),
      calls_(members_.size(), 0),
      mail_cv_(members_.size()) {}

void InprocGroup::wait_all(std::unique_lock<std::mutex>& lk, int rank, const char* phase,
                           std::size_t& counter, std::uint64_t& generation, bool abortable) {
    const std::uint64_t gen = generation;
    if (++counter == members_.size()) {
        counter = 0;
        ++generation;
        cv_.notify_all();
        return;
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration<double>(world_.timeout_s());
    while (generation == gen) {
        // A rank that gives up takes its arrival back: otherwise the last rank to arrive
        // would count it and read buffers that unwinding is about to free.
        if (abortable && world_.aborted()) {
            --counter;
            throw CommError(world_.abort_reason());
        }
        if (std::chrono::steady_clock::now() > deadline) {
            --counter;
            std::string missing;
            for (std::size_t r = 0; r < members_.size(); ++r) {
                if (calls_[r] < calls_[static_cast<std::size_t>(rank)]) {
                    missing += (missing.empty() ? "" : ", ") + std::to_string(members_[r]);
                }
            }
            const std::string msg =
                std::string(slots_[static_cast<std::size_t>(rank)].op) + "(" + label_ +
                ") on rank " + std::to_string(members_[static_cast<std::size_t>(rank)]) +
                " timed out after " + std::to_string(world_.timeout_s()) + " s at " + phase +
                (missing.empty() ? std::string() : ", waiting for rank(s) " + missing);
            lk.unlock();
            world_.abort(msg);
            throw CommError(msg);
        }
        cv_.wait_for(lk, kPollInterval);
    }
}

void InprocGroup::arrive(int rank, const InprocSlot& mine) {
    std::unique_lock lk(mu_);
    if (world_.aborted()) throw CommError(world_.abort_reason());
    slots_[static_cast<std::size_t>(rank)] = mine;
    ++calls_[static_cast<std::size_t>(rank)];
    wait_all(lk, rank, "arrival", arrived_, arrive_gen_, /*abortable=*/true);
    // Every rank runs the same check on the same slots, so all throw or none does.
    const InprocSlot& first = slots_[0];
    for (std::size_t r = 1; r < slots_.size(); ++r) {
        const InprocSlot& o = slots_[r];
        bool ok = std::strcmp(o.op, first.op) == 0;
        if (ok && std::strcmp(first.op, "all_reduce") == 0) ok = o.count == first.count && o.reduce == first.reduce;
        if (ok && std::strcmp(first.op, "broadcast") == 0) ok = o.count == first.count && o.root == first.root;
        if (ok && (std::strcmp(first.op, "all_gather_v") == 0 ||
                   std::strcmp(first.op, "reduce_scatter_v") == 0)) {
            ok = same_counts(o.counts, first.counts);
        }
        if (!ok) {
            const std::string msg = "collective mismatch in group " + label_ + ": rank " +
                            std::to_string(members_[0]) + " called " + first.op + " (" +
                            std::to_string(first.count) + " floats), rank " +
                            std::to_string(members_[r]) + " called " + o.op + " (" +
                            std::to_string(o.count) + " floats)";
            lk.unlock();
            world_.abort(msg);
            throw CommError(msg);
        }
    }
}

void InprocGroup::depart(int rank) {
    std::unique_lock lk(mu_);
    // Not abortable: once every rank has arrived, every rank reads the others' buffers and
    // then departs with no wait in between, so this wait ends. Leaving early on an abort
    // would free this rank's buffers while the others still read them (found by
    // AddressSanitizer in tst_engine_faults: heap-use-after-free in reduce_tile).
    wait_all(lk, rank, "departure", departed_, depart_gen_, /*abortable=*/false);
}

void InprocGroup::post(int src, int dst, int tag, std::vector<float> message) {
    {
        std::lock_guard lk(mu_);
        mail_[{src, dst, tag}].push_back(std::move(message));
    }
    mail_cv_.at(static_cast<std::size_t>(dst)).notify_all();
}

std::vector<float> InprocGroup::take(int src, int dst, int tag, int my_rank) {
    std::unique_lock lk(mu_);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration<double>(world_.timeout_s());
    const auto key = std::make_tuple(src, dst, tag);
    for (;;) {
        if (world_.aborted()) throw CommError(world_.abort_reason());
        auto it = mail_.find(key);
        if (it != mail_.end() && !it->second.empty()) {
            std::vector<float> m = std::move(it->second.front());
            it->second.pop_front();
            return m;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            const std::string msg = "recv(" + label_ + ") on rank " +
                                    std::to_string(members_[static_cast<std::size_t>(my_rank)]) +
                                    " timed out after " + std::to_string(world_.timeout_s()) +
                                    " s waiting for rank " +
                                    std::to_string(members_[static_cast<std::size_t>(src)]) +
                                    " (tag " + std::to_string(tag) + ")";
            lk.unlock();
            world_.abort(msg);
            throw CommError(msg);
        }
        mail_cv_.at(static_cast<std::size_t>(dst)).wait_for(lk, kPollInterval);
    }
}

void InprocGroup::wake_all() {
    cv_.notify_all();
    for (auto& cv : mail_cv_) cv.notify_all();
}

InProcessWorld::InProcessWorld(int size, double timeout_s) : size_(size), timeout_s_(timeout_s) {}

std::unique_ptr<Communicator> InProcessWorld::communicator(int world_rank) {
    std::vector<int> all(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) all[static_cast<std::size_t>(r)] = r;
    return std::make_unique<InProcessCommunicator>(*this, group(all, "world"), world_rank);
}

std::shared_ptr<InprocGroup> InProcessWorld::group(const std::vector<int>& members,
                                                   const std::string& label) {
    std::lock_guard lk(mu_);
    auto& g = groups_[{members, label}];
    if (!g) g = std::make_shared<InprocGroup>(*this, members, label);
    return g;
}

void InProcessWorld::abort(const std::string& reason) {
    std::vector<std::shared_ptr<InprocGroup>> groups;
    {
        std::lock_guard lk(mu_);
        if (aborted_.load()) return;  // the first reason is the one reported
        reason_ = reason;
        aborted_.store(true);
        for (auto& [key, g] : groups_) groups.push_back(g);
    }
    for (auto& g : groups) g->wake_all();
}

std::string InProcessWorld::abort_reason() const {
    std::lock_guard lk(mu_);
    return reason_;
}

}  // namespace meshwork::engine
