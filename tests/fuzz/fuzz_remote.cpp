// The remote trace protocol's fuzz entry points (docs/remote-protocol.md, "Limits"):
// remote_client feeds the input to a TraceClient as everything a server says (its hello and
// its answers) and makes every call the GUI makes; remote_server feeds it to serve-trace as
// everything a client asks, against a small trace made once per process. The contract:
// RuntimeError (the client's refusal) or InputError is fine, anything else escapes and
// aborts; the client may never hold more than the protocol's limits allow.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "core/common/error.h"
#include "profiler/remote/trace_client.h"
#include "profiler/remote/trace_server.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/fuzz/fuzz_inputs.h"

namespace meshwork::fuzz {

namespace {

// Each call may be refused; one refusal must not stop the others from being tried.
template <class F>
void refusable(F&& f) {
    try {
        f();
    } catch (const RuntimeError&) {
    }
}

std::string scratch(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/meshwork-fuzz-" + std::to_string(::getpid()) + suffix;
}

}  // namespace

void remote_client(const std::uint8_t* data, std::size_t size) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
    // The whole input is the server's side of the session; then the server stops talking.
    // A socket buffer holds more than the largest input the campaign makes (-max_len).
    std::size_t sent = 0;
    while (sent < size) {
        const ssize_t n = ::send(sv[1], data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
    }
    ::shutdown(sv[1], SHUT_WR);
    try {
        profiler::remote::TraceClient client(sv[0], "fuzz:/trace.sqlite", 1000);
        const auto& s = client.summary();
        const int track = s.tracks.empty() ? 1 : s.tracks.front().id;
        refusable([&] { (void)client.windows({track, track + 1}, s.start_ns, s.end_ns, 64); });
        refusable([&] { (void)client.event(1); });
        refusable([&] { (void)client.step_span(0, -1); });
        refusable([&] { (void)client.string(1); });
        refusable([&] { (void)client.string(2); });
        refusable([&] { (void)client.stats(5); });
        refusable([&] { (void)client.rank_steps(); });
        refusable([&] { (void)client.range_totals({track}, s.start_ns, s.end_ns); });
        refusable([&] { (void)client.find_next({track}, "a", s.start_ns); });
        (void)client.mesh();  // preset names only; a bad layout is an error string
    } catch (const RuntimeError&) {
    } catch (const InputError&) {
    }
    ::close(sv[1]);
}

void remote_server(const std::uint8_t* data, std::size_t size) {
    // A small trace: two tracks, a few names, steps, collectives.
    static const std::unique_ptr<profiler::TraceReader> reader = [] {
        const std::string path = scratch(".served.sqlite");
        auto writer = profiler::TraceWriter::create(path);
        TraceRunInfo info;
        info.source = "meshwork-fuzz";
        info.world_size = 2;
        writer->set_run_info(info);
        const int tracks[2] = {writer->add_track({0, TrackKind::ComputeStream, 0, "compute"}),
                               writer->add_track({1, TrackKind::CommStream, 0, "comm:dp"})};
        for (int i = 0; i < 400; ++i) {
            TraceEvent e;
            e.track = tracks[i % 2];
            e.rank = i % 2;
            e.kind = i % 2 ? EventKind::Communication : EventKind::Compute;
            e.name = i % 2 ? "all_reduce(dp)" : "block.mlp.fwd#" + std::to_string(i % 7);
            e.start_ns = i * 100;
            e.end_ns = i * 100 + 60 + i % 13;
            e.step = i / 100;
            e.group_size = i % 2 ? 2 : 0;
            writer->add_event(e);
        }
        writer->close();
        return std::make_unique<profiler::TraceReader>(profiler::TraceReader::open(path));
    }();
    const int in = ::memfd_create("meshwork-fuzz-requests", MFD_CLOEXEC);
    const int out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (in < 0 || out < 0) std::abort();
    std::size_t written = 0;
    while (written < size) {
        const ssize_t n = ::write(in, data + written, size - written);
        if (n <= 0) std::abort();
        written += static_cast<std::size_t>(n);
    }
    ::lseek(in, 0, SEEK_SET);
    try {
        (void)profiler::remote::serve_trace(*reader, in, out);
    } catch (const InputError&) {
    }
    ::close(in);
    ::close(out);
}

}  // namespace meshwork::fuzz
