#include "app/cli/stop_signals.h"

#include <semaphore.h>

#include <atomic>
#include <cerrno>

namespace meshwork::cli {

namespace {
// What a signal handler may touch: a lock-free flag and a semaphore (sem_post is
// async-signal-safe). One StopSignals is alive at a time (one run per process).
volatile std::sig_atomic_t g_signal = 0;
sem_t g_wake;
std::atomic<bool> g_closing{false};

extern "C" void on_stop_signal(int signal) {
    g_signal = signal;
    sem_post(&g_wake);
}
}  // namespace

StopSignals::StopSignals(std::stop_source source) {
    g_signal = 0;
    g_closing = false;
    sem_init(&g_wake, 0, 0);
    watcher_ = std::thread([source]() mutable {
        for (;;) {
            while (sem_wait(&g_wake) != 0 && errno == EINTR) {
            }
            if (g_closing.load()) return;
            source.request_stop();
        }
    });
    int_ = std::signal(SIGINT, on_stop_signal);
    term_ = std::signal(SIGTERM, on_stop_signal);
}

StopSignals::~StopSignals() {
    std::signal(SIGINT, int_);
    std::signal(SIGTERM, term_);
    g_closing = true;
    sem_post(&g_wake);
    watcher_.join();
    sem_destroy(&g_wake);
}

int StopSignals::signal() const { return g_signal; }

}  // namespace meshwork::cli
