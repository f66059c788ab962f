// SIGINT (Ctrl-C) and SIGTERM (a launcher or scheduler ending the job; mpirun sends it to
// every other rank when one rank fails) turned into a stop request on the caller's
// std::stop_source for as long as this object lives. The handler only posts a semaphore
// (async-signal-safe); a watcher thread makes the request, since std::stop_source's is not
// promised to be safe in a signal handler.
#pragma once

#include <csignal>
#include <stop_token>
#include <thread>

namespace meshwork::cli {

class StopSignals {
public:
    explicit StopSignals(std::stop_source source);
    ~StopSignals();  // restores the previous handlers
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

    // The signal that requested the stop (SIGINT or SIGTERM); 0 when none.
    [[nodiscard]] int signal() const;

private:
    void (*int_)(int) = nullptr;
    void (*term_)(int) = nullptr;
    std::thread watcher_;
};

}  // namespace meshwork::cli
