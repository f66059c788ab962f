// Flows between ranks: the events on other ranks that a selected communication event joins.
// A send and its receive (the peer rank named), and a collective and the same call on the
// other ranks of its group, as Nsight Systems and Perfetto draw them.
//
// No trace format Meshwork reads carries a call id shared across ranks (rank_steps.cpp says
// why), so partners are found from what the events do carry:
//   - the kind: a send pairs with a receive of the same mesh axis ("send(pp).activation" with
//     "recv(pp)"), a collective with the same name (a Meshwork name: kind, axis and what it
//     moves) or, for a kernel name, the same collective kind;
//   - the group: when the trace carries its layout and the name names an axis, only ranks of
//     the selected rank's group of that axis (profiler::axis_of_name, DeviceMesh);
//   - the step and micro-batch where both events carry them;
//   - the time: a blocking transfer completes on both sides at once (a rendezvous), so of
//     the candidate sends or receives the one whose end is nearest is the peer; a collective
//     completes on no rank before the last rank has entered it, so the same call overlaps on
//     every rank (the nearest interval per rank is taken, which also absorbs clock skew).
#pragma once

#include <string_view>
#include <vector>

#include "gui/timeline/timeline_source.h"

namespace meshwork::gui {

struct PeerFlows {
    enum class Kind { None, PointToPoint, Collective };
    Kind kind = Kind::None;
    // The send's receive (or the receive's send); for a collective, one event per other rank
    // of the call, in rank order.
    std::vector<TimelineEventDetails> partners;
    bool selected_sends = false;  // point to point: the selected event is the send
    // Of a collective: the rank that entered last (the one the others waited for) and how
    // long after the first it did; -1 when there are no partners.
    int last_rank = -1;
    std::int64_t last_after_first_ns = 0;
};

// Whether an event named `other_name` on another rank may be a partner of `selected`: the
// cheap test by name, before the event's details are read.
[[nodiscard]] bool may_be_peer(const TraceEvent& selected, std::string_view other_name);

// The partners of `selected` among `candidates` (events of other ranks, any order). `mesh`,
// when the trace carries a layout, limits them to the selected rank's group.
[[nodiscard]] PeerFlows match_peers(const TimelineEventDetails& selected,
                                    const std::vector<TimelineEventDetails>& candidates, const DeviceMesh* mesh);

}  // namespace meshwork::gui
