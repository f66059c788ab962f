// The timeline over a trace on another machine: `ssh HOST meshwork-cli serve-trace PATH`
// (profiler/remote/trace_client.h) answers the window queries, event details, box totals,
// find-next and step lookups, so only what is drawn crosses the network, and no port is
// opened. Lanes are the same as a local trace's (TraceLanes).
//
// The view asks lane by lane; a miss asks the server for the next lanes of the same window
// too, in one round trip, and a repaint of the same window asks nothing. When the session
// dies or stops answering (MESHWORK_REMOTE_TIMEOUT_S, default 20 s, without a byte), every
// later query returns at once with nothing, and the on_lost callback is told once.
#pragma once

#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/mesh/device_mesh.h"
#include "gui/timeline/timeline_source.h"
#include "gui/timeline/trace_lanes.h"
#include "profiler/analysis/trace_layout.h"
#include "gui/trace/remote_fetch.h"
#include "profiler/remote/trace_client.h"

namespace meshwork::gui {

// True when `text` names a remote trace: no local file of that name exists and it is
// host:path (parse_remote_spec).
bool is_remote_trace(const QString& text, RemoteSpec& out);

// Starts `ssh HOST REMOTE_CLI serve-trace PATH` (the remote meshwork-cli from
// $MESHWORK_REMOTE_CLI) and reads its hello; blocking, so call it off the GUI thread.
// Throws profiler::remote::ServeUnavailable when the host cannot serve it (the caller may
// copy the file instead) and RuntimeError otherwise.
std::unique_ptr<profiler::remote::TraceClient> connect_remote_trace(const RemoteSpec& remote);

class RemoteTraceSource : public TimelineSource {
public:
    explicit RemoteTraceSource(std::unique_ptr<profiler::remote::TraceClient> client);

    // Called once, on the thread that queried, when the session is lost (the message says
    // why). The timeline holds the source const; the callback is its one mutable setting.
    void on_lost(std::function<void(const QString&)> callback) const { on_lost_ = std::move(callback); }
    [[nodiscard]] bool lost() const { return client_->broken(); }
    [[nodiscard]] const profiler::remote::TraceSummary& summary() const { return client_->summary(); }

    [[nodiscard]] int lane_count() const override { return lanes_.count(); }
    [[nodiscard]] const TimelineLane& lane(int index) const override { return lanes_.lane(index); }
    [[nodiscard]] std::int64_t begin_ns() const override { return summary().start_ns; }
    [[nodiscard]] std::int64_t end_ns() const override { return summary().end_ns; }
    [[nodiscard]] std::int64_t event_count() const override { return summary().event_count; }
    [[nodiscard]] const std::string& name(std::uint32_t name_id) const override;
    // The mesh of the layout the trace carries (profiler::trace_layout of the hello's run
    // info), as TraceReaderSource gives it; null when none or when it does not parse.
    [[nodiscard]] const DeviceMesh* mesh() const override { return mesh_.get(); }
    [[nodiscard]] const std::string& layout_error() const { return mesh_.error; }
    void query(int lane, std::int64_t t0, std::int64_t t1, std::size_t pixels,
               std::vector<TimelineItem>& out) const override;
    [[nodiscard]] TimelineEventDetails details(std::int64_t event) const override;
    [[nodiscard]] TimelineRangeStats range_stats(int lane_first, int lane_last, std::int64_t t0,
                                                 std::int64_t t1) const override;
    [[nodiscard]] std::int64_t find_next(const std::string& text, std::int64_t after_ns) const override;

private:
    struct Window {
        std::int64_t t0 = 0, t1 = 0;
        std::size_t pixels = 0;
        bool operator==(const Window&) const = default;
    };
    struct Cached {
        Window window;
        std::vector<TimelineItem> items;
    };
    // Runs `ask` on the client; on a failure reports it (once) and returns false.
    bool guarded(const std::function<void()>& ask) const;

    std::unique_ptr<profiler::remote::TraceClient> client_;  // used by the GUI thread only
    TraceLanes lanes_;
    mutable std::vector<std::optional<Cached>> cache_;  // by lane: its last window
    profiler::TraceMesh mesh_;
    mutable std::function<void(const QString&)> on_lost_;
    mutable bool reported_ = false;
};

}  // namespace meshwork::gui
