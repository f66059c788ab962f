// Cooperative stop (Ctrl-C): a signal handler sets the flag; every op and every wait in a
// communicator checks it, so a run stops at the next op and still closes its profile.
#pragma once

#include <stdexcept>

namespace meshwork::engine {

class StopRequested : public std::runtime_error {
public:
    StopRequested() : std::runtime_error("interrupted") {}
};

// Async-signal-safe (a lock-free atomic store).
void request_stop() noexcept;
void clear_stop() noexcept;
[[nodiscard]] bool stop_requested() noexcept;
inline void throw_if_stopped() {
    if (stop_requested()) throw StopRequested();
}

}  // namespace meshwork::engine
