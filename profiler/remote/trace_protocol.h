// The remote trace protocol (docs/remote-protocol.md): what `meshwork-cli serve-trace` and
// its client say to each other over the server's stdin/stdout. Requests are JSON, one a
// line; answers are one JSON line, followed for a window by `binary` bytes of packed items.
// This file owns the version, the limits and every encoding both sides share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/analysis/rank_steps.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler::remote {

inline constexpr const char* kProtocolName = "meshwork-trace";
// Raised whenever a message changes meaning; both sides refuse any other version.
// 2: the rank_steps answer is a binary part (version 1 sent its cells as JSON values, which
//    the client's 8 Mi-value limit refused past ~1 M cells while the server may send
//    rank_step_cell_bound's 4 M and more).
inline constexpr int kProtocolVersion = 2;
// A request line longer than this is refused (the rest of the line is skipped).
inline constexpr std::size_t kMaxRequestBytes = 64 * 1024;
// The most items one window answer may hold: the timeline asks one per pixel.
inline constexpr std::size_t kMaxWindowItems = std::size_t{1} << 22;
// The most string ids (or tracks) one request may name.
inline constexpr std::size_t kMaxIdsPerRequest = 65536;

// What a client accepts from a server (docs/remote-protocol.md, "Limits"): a hostile or broken
// server is refused with a message before it can cost more memory than these allow.
//
// An answer line (a hello lists every track; a rank_steps answer every cell): its bytes, and
// the JSON values in it (nlohmann keeps each in at most ~100 bytes: 8 Mi values, < 1 GiB).
inline constexpr std::size_t kMaxAnswerLineBytes = std::size_t{64} << 20;
inline constexpr std::size_t kMaxAnswerValues = std::size_t{8} << 20;
// String ids: the GUI carries a name id as 32 bits. Names are stored as they arrive, never
// by count, and all the names a connection may bring together are capped.
inline constexpr std::int64_t kMaxStringCount = 0xFFFFFFFF;
inline constexpr std::size_t kMaxNameBytesPerConnection = std::size_t{256} << 20;
// A packed window item is 7 varints of at most 10 bytes (profiler/store/varint.h).
inline constexpr std::size_t kMaxPackedItemBytes = 7 * 10;
// A packed rank × step cell: a flag byte, 5 doubles of 8 bytes and a varint of at most 10.
inline constexpr std::size_t kMaxPackedCellBytes = 1 + 5 * 8 + 10;

// What the hello tells about the trace served: enough to lay out the timeline.
struct TraceSummary {
    std::string path;
    int format_version = 0;
    bool complete = false;
    std::int64_t event_count = 0;
    std::int64_t dropped_events = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t string_count = 0;
    TraceRunInfo run_info;
    std::vector<TrackRecord> tracks;
    std::vector<RankRecord> ranks;
};

nlohmann::json summary_to_json(const TraceReader& reader);
// Throws PeerError (peer_json.h) naming the field when the hello is not one this build
// understands; `where` names the message in that error.
TraceSummary summary_from_json(const nlohmann::json& trace, const std::string& where = "the server's hello");

// Window items packed as LEB128 varints, times as deltas from the previous item (the first
// from `base_ns`, the window's t0): about 8 bytes an item.
std::string encode_window(const std::vector<DrawItem>& items, std::int64_t base_ns);
// Throws PeerError when `bytes` is not exactly `count` items, when count is over
// kMaxWindowItems, or an item names a string outside 0..string_count, merges no events or
// more than 2^32 - 1, or has an unknown kind.
std::vector<DrawItem> decode_window(std::string_view bytes, std::size_t count, std::int64_t base_ns,
                                    std::int64_t string_count = kMaxStringCount);

// The rank overview's matrix as a binary part (docs/remote-protocol.md, "Packed rank × step
// matrix"): the ranks, then the steps, as varints of zigzag deltas (ascending, so small), then
// the ranks × steps cells row-major, each a flag (0: absent with every value at its default,
// nothing follows; 1: present; 2: absent with values), then step_s, compute_s,
// compute_on_cpu_s, exposed_comm_s, collective_wait_s as little-endian IEEE doubles and
// zigzag(waited_for_rank). The answer's JSON carries only the two counts.
std::string encode_rank_steps(const RankStepMatrix& m);
// The most bytes a matrix of at most `cells` cells (and as many ranks and steps) packs into.
std::size_t max_rank_steps_bytes(std::int64_t cells);
// Throws PeerError when `ranks` × `steps` is over `max_cells` (or either count is), when the
// bytes are not exactly that matrix, ranks or steps are not ascending ints, a flag is not
// 0..2, a value is not finite, or waited_for_rank is not -1..INT_MAX.
RankStepMatrix decode_rank_steps(std::string_view bytes, std::int64_t ranks, std::int64_t steps, std::int64_t max_cells);

nlohmann::json event_to_json(std::int64_t id, const TraceEvent& e);
// Throws PeerError naming the field that is missing, mistyped or out of range.
TraceEvent event_from_json(const nlohmann::json& j);

}  // namespace meshwork::profiler::remote
