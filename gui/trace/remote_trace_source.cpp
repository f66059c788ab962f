#include "gui/trace/remote_trace_source.h"

#include <QFileInfo>

#include <algorithm>
#include <cstdlib>

#include "core/common/error.h"
#include "gui/timeline/trace_reader_source.h"
#include "profiler/analysis/trace_layout.h"

namespace meshwork::gui {

namespace {

// Lanes asked for together on a miss: the view asks for the visible lanes in order.
constexpr int kLanesPerRoundTrip = 64;

int timeout_ms_from_environment() {
    const char* v = std::getenv("MESHWORK_REMOTE_TIMEOUT_S");
    const int s = v ? std::atoi(v) : 0;
    return (s > 0 ? s : 20) * 1000;
}

}  // namespace

bool is_remote_trace(const QString& text, RemoteSpec& out) {
    if (text.isEmpty() || QFileInfo::exists(text)) return false;
    QString error;
    return parse_remote_spec(text, out, error);
}

std::unique_ptr<profiler::remote::TraceClient> connect_remote_trace(const RemoteSpec& remote) {
    // ssh_serve_command checks the host and the path again (BadRemoteSpec), and drops the
    // brackets of scp's "[fe80::1]:path".
    const std::string host = remote.host.toStdString(), path = remote.path.toStdString();
    return std::make_unique<profiler::remote::TraceClient>(
        profiler::remote::ssh_serve_command(host, path, profiler::remote::remote_cli_from_environment()),
        host + ":" + path, timeout_ms_from_environment());
}

RemoteTraceSource::RemoteTraceSource(std::unique_ptr<profiler::remote::TraceClient> client)
    : client_(std::move(client)), lanes_(client_->summary().tracks) {
    cache_.resize(static_cast<std::size_t>(lanes_.count()));
    mesh_ = client_->mesh();  // preset names only: no local file a peer names is opened
}

bool RemoteTraceSource::guarded(const std::function<void()>& ask) const {
    if (client_->broken()) return false;
    try {
        ask();
        return true;
    } catch (const std::exception& e) {
        // A refused request leaves the session usable; a lost one is reported once.
        if (client_->broken() && !reported_) {
            reported_ = true;
            if (on_lost_) on_lost_(QString::fromStdString(client_->failure()));
        }
        return false;
    }
}

const std::string& RemoteTraceSource::name(std::uint32_t name_id) const {
    static const std::string unknown = "?";
    const std::string* text = &unknown;
    guarded([&] { text = &client_->string(name_id); });
    return *text;
}

void RemoteTraceSource::query(int lane, std::int64_t t0, std::int64_t t1, std::size_t pixels,
                              std::vector<TimelineItem>& out) const {
    out.clear();
    if (lane < 0 || lane >= lane_count()) return;
    const Window want{t0, t1, pixels};
    auto& hit = cache_[static_cast<std::size_t>(lane)];
    if (!hit || !(hit->window == want)) {
        std::vector<int> lanes, tracks;
        for (int l = lane; l < std::min(lane_count(), lane + kLanesPerRoundTrip); ++l) {
            const auto& c = cache_[static_cast<std::size_t>(l)];
            if (l != lane && c && c->window == want) continue;
            lanes.push_back(l);
            tracks.push_back(lanes_.track_of(l));
        }
        std::vector<std::vector<profiler::DrawItem>> windows;
        if (!guarded([&] { windows = client_->windows(tracks, t0, t1, pixels); })) return;
        for (std::size_t i = 0; i < lanes.size(); ++i) {
            Cached c{want, {}};
            c.items.reserve(windows[i].size());
            for (const auto& d : windows[i]) {
                c.items.push_back({d.start_ns, d.end_ns, d.count == 1 ? d.event_id : -1, static_cast<std::uint32_t>(d.count),
                                   static_cast<std::uint32_t>(d.name_id), d.busy_ns, d.kind, -1});
            }
            cache_[static_cast<std::size_t>(lanes[i])] = std::move(c);
        }
    }
    out = hit->items;
}

TimelineEventDetails RemoteTraceSource::details(std::int64_t event) const {
    TimelineEventDetails d;
    guarded([&] {
        if (const auto e = client_->event(event)) {
            d.event = *e;
            d.lane = lanes_.lane_of_track(e->track);
        }
    });
    return d;
}

TimelineRangeStats RemoteTraceSource::range_stats(int lane_first, int lane_last, std::int64_t t0,
                                                  std::int64_t t1) const {
    const std::vector<int> tracks = lanes_.tracks_of(lane_first, lane_last);
    TimelineRangeStats stats;
    guarded([&] {
        const auto totals = client_->range_totals(tracks, t0, t1);
        stats.events = totals.events;
        std::copy(totals.busy_ns.begin(), totals.busy_ns.end(), stats.busy_ns);
    });
    return stats;
}

std::int64_t RemoteTraceSource::find_next(const std::string& text, std::int64_t after_ns) const {
    std::int64_t event = -1;
    guarded([&] { event = client_->find_next(lanes_.tracks(), text, after_ns); });
    return event;
}

}  // namespace meshwork::gui
