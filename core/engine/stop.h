// Cooperative stop (Ctrl-C in meshwork-cli, Stop in the GUI): the caller owns a
// std::stop_source and hands its token to the run (RunHooks::stop); every op and every wait
// in a backend or communicator checks it, so a run stops at the next op and still closes
// its profile.
#pragma once

#include <stdexcept>
#include <stop_token>

namespace meshwork::engine {

class StopRequested : public std::runtime_error {
public:
    StopRequested() : std::runtime_error("interrupted") {}
};

inline void throw_if_stopped(const std::stop_token& stop) {
    if (stop.stop_requested()) throw StopRequested();
}

}  // namespace meshwork::engine
