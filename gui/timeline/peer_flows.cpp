// Flows between ranks (peer_flows.h).
#include "gui/timeline/peer_flows.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "profiler/analysis/collective_axis.h"
#include "profiler/analysis/event_classify.h"

namespace meshwork::gui {

namespace {

Collective collective_of(const TraceEvent& e) {
    return e.collective != Collective::None ? e.collective : profiler::collective_of_event(e.name);
}

bool is_point_to_point(Collective c) { return c == Collective::Send || c == Collective::Recv; }

Collective counterpart(Collective c) { return c == Collective::Send ? Collective::Recv : Collective::Send; }

// Both known and different: not the same step (or micro-batch).
bool differ(int a, int b) { return a >= 0 && b >= 0 && a != b; }

// The gap between two intervals: 0 when they overlap.
std::int64_t gap_ns(const TraceEvent& a, const TraceEvent& b) {
    return std::max<std::int64_t>({0, a.start_ns - b.end_ns, b.start_ns - a.end_ns});
}

}  // namespace

bool may_be_peer(const TraceEvent& selected, std::string_view other_name) {
    const Collective mine = collective_of(selected);
    if (mine == Collective::None) return false;
    const Collective theirs = profiler::collective_of_event(other_name);
    if (is_point_to_point(mine)) {
        return theirs == counterpart(mine) &&
               profiler::axis_of_name(selected.name) == profiler::axis_of_name(other_name);
    }
    if (theirs != mine) return false;
    // A Meshwork name says what the call moves: the same call has the same name on every rank.
    const bool meshwork_name = collective_of_name(selected.name) != Collective::None;
    return !meshwork_name || other_name == selected.name;
}

PeerFlows match_peers(const TimelineEventDetails& selected, const std::vector<TimelineEventDetails>& candidates,
                      const DeviceMesh* mesh) {
    PeerFlows out;
    const TraceEvent& me = selected.event;
    const Collective mine = collective_of(me);
    if (mine == Collective::None) return out;
    const std::optional<Axis> axis = profiler::axis_of_name(me.name);
    const bool in_mesh = mesh && axis && me.rank >= 0 && me.rank < mesh->world_size();
    const int my_group = in_mesh ? mesh->group_first_rank(me.rank, *axis) : -1;
    auto joins = [&](const TimelineEventDetails& c) {
        const TraceEvent& o = c.event;
        if (o.rank == me.rank || differ(o.step, me.step) || differ(o.micro_batch, me.micro_batch)) return false;
        if (!may_be_peer(me, o.name)) return false;
        if (in_mesh && (o.rank < 0 || o.rank >= mesh->world_size() || mesh->group_first_rank(o.rank, *axis) != my_group)) {
            return false;
        }
        return true;
    };

    if (is_point_to_point(mine)) {
        const TimelineEventDetails* best = nullptr;
        for (const auto& c : candidates) {
            if (!joins(c)) continue;
            if (!best || std::llabs(c.event.end_ns - me.end_ns) < std::llabs(best->event.end_ns - me.end_ns)) best = &c;
        }
        if (best) {
            out.kind = PeerFlows::Kind::PointToPoint;
            out.selected_sends = mine == Collective::Send;
            out.partners.push_back(*best);
        }
        return out;
    }

    std::map<int, const TimelineEventDetails*> per_rank;  // the nearest call on each rank
    for (const auto& c : candidates) {
        if (!joins(c)) continue;
        auto& slot = per_rank[c.event.rank];
        const auto key = [&me](const TraceEvent& o) {
            return std::make_pair(gap_ns(me, o), std::llabs(o.start_ns - me.start_ns));
        };
        if (!slot || key(c.event) < key(slot->event)) slot = &c;
    }
    if (per_rank.empty()) return out;
    // A call of n ranks has n − 1 partners: the nearest, where more ranks offer one (a trace
    // without a layout cannot tell disjoint groups apart).
    std::vector<const TimelineEventDetails*> chosen;
    for (const auto& [rank, c] : per_rank) chosen.push_back(c);
    if (me.group_size > 1 && chosen.size() > static_cast<std::size_t>(me.group_size - 1)) {
        std::stable_sort(chosen.begin(), chosen.end(), [&me](const auto* a, const auto* b) {
            return std::llabs(a->event.start_ns - me.start_ns) < std::llabs(b->event.start_ns - me.start_ns);
        });
        chosen.resize(static_cast<std::size_t>(me.group_size - 1));
        std::sort(chosen.begin(), chosen.end(), [](const auto* a, const auto* b) { return a->event.rank < b->event.rank; });
    }
    out.kind = PeerFlows::Kind::Collective;
    std::int64_t first = me.start_ns, last = me.start_ns;
    out.last_rank = me.rank;
    for (const auto* c : chosen) {
        out.partners.push_back(*c);
        first = std::min(first, c->event.start_ns);
        if (c->event.start_ns > last) {
            last = c->event.start_ns;
            out.last_rank = c->event.rank;
        }
    }
    out.last_after_first_ns = last - first;
    return out;
}

}  // namespace meshwork::gui
