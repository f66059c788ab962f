#include "core/trace/collective.h"

#include <array>

namespace meshwork {

namespace {

struct CollectiveFacts {
    Collective collective;
    std::string_view name;
    // Ring phases that each move (n−1)/n of the buffer: the bus factor is phases·(n−1)/n,
    // or 1 when 0 (rooted and point-to-point operations move the buffer once).
    int ring_phases;
};

constexpr std::array<CollectiveFacts, 11> kFacts{{
    {Collective::AllReduce, "all_reduce", 2},
    {Collective::AllGather, "all_gather", 1},
    {Collective::ReduceScatter, "reduce_scatter", 1},
    {Collective::AllToAll, "all_to_all", 1},
    {Collective::Broadcast, "broadcast", 0},
    {Collective::Reduce, "reduce", 0},
    {Collective::SendRecv, "send_recv", 0},
    {Collective::Send, "send", 0},
    {Collective::Recv, "recv", 0},
    {Collective::Barrier, "barrier", 0},
    {Collective::Generic, "generic", 0},
}};

const CollectiveFacts* facts_of(Collective c) {
    for (const auto& f : kFacts) {
        if (f.collective == c) return &f;
    }
    return nullptr;
}

bool ends_name(std::string_view rest) {
    return rest.empty() || rest[0] == '(' || rest[0] == ' ' || rest[0] == ':' || rest[0] == '.';
}

}  // namespace

std::string_view to_string(Collective c) {
    const auto* f = facts_of(c);
    return f ? f->name : std::string_view{};
}

Collective collective_of_name(std::string_view name) {
    for (const auto& f : kFacts) {
        // "generic" names NCCL's kernel only; no Meshwork event is called that.
        if (f.collective == Collective::Generic) continue;
        if (name.substr(0, f.name.size()) == f.name && ends_name(name.substr(f.name.size()))) {
            return f.collective;
        }
    }
    return Collective::None;
}

double bus_factor(Collective c, int n) {
    const auto* f = facts_of(c);
    if (n <= 1 || !f || f->ring_phases == 0) return 1.0;
    const double nn = n;
    return f->ring_phases * (nn - 1) / nn;
}

}  // namespace meshwork
