#include "core/engine/stop.h"

#include <atomic>

namespace meshwork::engine {

namespace {
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");
}  // namespace

void request_stop() noexcept { g_stop.store(true, std::memory_order_relaxed); }
void clear_stop() noexcept { g_stop.store(false, std::memory_order_relaxed); }
bool stop_requested() noexcept { return g_stop.load(std::memory_order_relaxed); }

}  // namespace meshwork::engine
