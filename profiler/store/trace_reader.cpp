#include "profiler/store/trace_reader.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "profiler/analysis/event_classify.h"
#include "core/common/error.h"
#include "profiler/store/chunk_decode.h"
#include "profiler/store/draw_merge.h"
#include "profiler/store/lod_builder.h"
#include "profiler/store/sqlite_db.h"
#include "profiler/store/trace_content_check.h"
#include "profiler/store/trace_schema.h"

namespace meshwork::profiler {

namespace {

constexpr int kEventKinds = 6;
constexpr int kTrackKinds = 4;

int ceil_log2(std::int64_t v) {
    return v <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<std::uint64_t>(v - 1)));
}

std::int64_t parse_int(const std::string& file, const std::string& key, const std::string& text) {
    std::int64_t v = 0;
    const auto* end = text.data() + text.size();
    const auto r = std::from_chars(text.data(), end, v);
    if (r.ec != std::errc() || r.ptr != end) {
        throw InputError(file, "meta." + key, "expected an integer, found \"" + text + "\"");
    }
    return v;
}

// A window query this long before the window can still reach into it (see long_events).
std::int64_t long_threshold_ns(const TrackRecord& t) {
    return std::int64_t{1} << std::min(62, t.lod_base_level + kLongEventShift);
}

}  // namespace

struct TraceReader::Impl {
    sql::Database db;
    std::string path;
    int version = 0;
    bool has_memory = false;  // format 2 and later
    bool complete = false;
    std::int64_t events = 0;
    std::int64_t dropped = 0;
    TraceRunInfo info;
    std::vector<TrackRecord> tracks;
    std::unordered_map<int, std::size_t> track_index;
    std::vector<RankRecord> ranks;
    std::vector<std::string> strings;  // id - 1 -> text
    // id - 1 -> the collective that name stands for, classified on first use (kUnclassified
    // until then): the store keeps names only, and a name is classified once, not per event.
    static constexpr std::uint8_t kUnclassified = 0xff;
    mutable std::vector<std::uint8_t> collective_of_string;
    std::int64_t start = 0;
    std::int64_t end = 0;

    [[noreturn]] void bad(const std::string& field, const std::string& message) const {
        throw InputError(path, field, message);
    }

    const std::string& str(std::int64_t id, const char* where) const {
        if (id < 1 || id > static_cast<std::int64_t>(strings.size())) {
            bad(where, "names string " + std::to_string(id) + ", which the strings table lacks");
        }
        return strings[static_cast<std::size_t>(id - 1)];
    }

    // The collective of a communication event named by string `id` (already checked by str).
    Collective collective_of(std::int64_t id) const {
        if (collective_of_string.size() != strings.size()) {
            collective_of_string.assign(strings.size(), kUnclassified);
        }
        auto& slot = collective_of_string[static_cast<std::size_t>(id - 1)];
        if (slot == kUnclassified) {
            slot = static_cast<std::uint8_t>(collective_of_event(strings[static_cast<std::size_t>(id - 1)]));
        }
        return static_cast<Collective>(slot);
    }

    // SQLite reads pages past the end of a cut file as zeros and only fails when a query
    // reaches them; compare the size the header promises with the file instead. (A file with
    // a log beside it, whose pages may live in the log, never gets here: open_untrusted.)
    void check_not_truncated() {
        std::error_code ec;
        sql::Statement pages(db, "PRAGMA page_count");
        sql::Statement size(db, "PRAGMA page_size");
        if (!pages.step() || !size.step()) return;
        const auto expected = static_cast<std::uintmax_t>(pages.int64(0)) *
                              static_cast<std::uintmax_t>(size.int64(0));
        const auto actual = std::filesystem::file_size(path, ec);
        if (!ec && actual < expected) {
            bad("", "truncated SQLite file: " + std::to_string(actual) + " bytes of the " +
                        std::to_string(expected) + " its header declares");
        }
    }

    void check_identity() {
        sql::Statement app(db, "PRAGMA application_id");
        const std::int64_t app_id = app.step() ? app.int64(0) : 0;
        if (app_id == kTraceApplicationId && db.has_table("meta")) return;
        if (db.has_table("StringIds") || db.has_table("CUPTI_ACTIVITY_KIND_KERNEL") ||
            db.has_table("TARGET_INFO_SESSION_START_TIME")) {
            bad("", "an Nsight Systems export, not a Meshwork trace (convert it with "
                    "'meshwork-cli import-trace')");
        }
        bad("", "not a Meshwork trace (an SQLite database without the trace tables)");
    }

    // A trace holds the tables and indexes its writer made and one view, event_view. A
    // trigger or another view was added by some other program: the connection never runs
    // them (Database::open_untrusted turns both off), but such a file is not what Meshwork
    // wrote, and a view in place of a table would change what a query reads.
    void check_no_foreign_code() {
        sql::Statement st(db, "SELECT type, name FROM sqlite_schema WHERE type = 'trigger' OR "
                              "(type = 'view' AND name <> 'event_view') ORDER BY type, name LIMIT 1");
        if (st.step()) {
            bad("sqlite_schema", st.text(0) + " '" + st.text(1) +
                                     "' is not part of a Meshwork trace (added by another program); "
                                     "refusing the file");
        }
    }

    void load_meta() {
        for (const char* t : {"meta", "ranks", "tracks", "strings", "events", "counters"}) {
            if (!db.has_table(t)) bad("", std::string("not a Meshwork trace: table '") + t + "' is missing");
        }
        std::unordered_map<std::string, std::string> meta;
        sql::Statement st(db, "SELECT key, value FROM meta");
        while (st.step()) meta[st.text(0)] = st.text(1);
        auto get = [&](const std::string& k) {
            auto it = meta.find(k);
            return it == meta.end() ? std::string() : it->second;
        };
        if (!meta.count("format_version")) bad("meta.format_version", "missing");
        version = static_cast<int>(parse_int(path, "format_version", get("format_version")));
        if (version > kTraceFormatVersion) {
            bad("meta.format_version",
                "trace format version " + std::to_string(version) +
                    " is newer than this build reads (up to " +
                    std::to_string(kTraceFormatVersion) + "); update Meshwork");
        }
        if (version < 1) bad("meta.format_version", "invalid version " + std::to_string(version));
        has_memory = db.has_table("memory_events") && db.has_table("memory_stacks");
        if (version >= kFirstFormatWithMemory && !has_memory) {
            bad("", "a version " + std::to_string(version) +
                        " trace without the memory_events and memory_stacks tables");
        }
        complete = get("complete") == "1";
        if (meta.count("event_count")) events = parse_int(path, "event_count", get("event_count"));
        if (meta.count("dropped_events")) dropped = parse_int(path, "dropped_events", get("dropped_events"));
        info.tool_version = get("tool_version");
        info.source = get("source");
        info.layout_json = get("layout_json");
        info.cluster = get("cluster");
        info.clock_domain = get("clock_domain");
        if (meta.count("start_time_unix_ns")) {
            info.start_time_unix_ns = parse_int(path, "start_time_unix_ns", get("start_time_unix_ns"));
        }
        if (meta.count("world_size")) {
            const auto w = parse_int(path, "world_size", get("world_size"));
            if (w < 0 || w > (1 << 24)) bad("meta.world_size", "out of range");
            info.world_size = static_cast<int>(w);
        }
        for (const auto& [k, v] : meta) {
            if (k.rfind("extra.", 0) == 0) info.extra[k.substr(6)] = v;
        }
    }

    void load_tables() {
        {
            sql::Statement st(db, "SELECT count(*) FROM strings");
            st.step();
            const std::int64_t n = st.int64(0);
            // Every value of every row, before anything reads one (a name id the strings
            // table lacks, a time past +-2^62, text where a number belongs, ...).
            check_trace_contents(db, {n, has_memory});
            strings.resize(static_cast<std::size_t>(n));
            sql::Statement rows(db, "SELECT id, value FROM strings");
            while (rows.step()) {
                const std::int64_t id = rows.int64(0);
                if (id < 1 || id > n) {
                    bad("strings", "string id " + std::to_string(id) + " outside 1.." + std::to_string(n));
                }
                strings[static_cast<std::size_t>(id - 1)] = rows.text(1);
            }
        }
        sql::Statement st(db,
                          "SELECT id, rank, kind, idx, name, event_count, start_ns, end_ns, "
                          "max_duration_ns, lod_base_level FROM tracks ORDER BY id");
        bool first = true;
        while (st.step()) {
            TrackRecord t;
            t.id = static_cast<int>(st.int64(0));
            const auto rank = st.int64(1);
            const auto kind = st.int64(2);
            const std::string field = "tracks[id=" + std::to_string(st.int64(0)) + "]";
            if (st.int64(0) < 0 || st.int64(0) > std::numeric_limits<int>::max()) bad(field, "bad id");
            if (rank < 0 || rank > (1 << 24)) bad(field + ".rank", "out of range");
            if (kind < 0 || kind >= kTrackKinds) bad(field + ".kind", "unknown track kind " + std::to_string(kind));
            t.info.rank = static_cast<int>(rank);
            t.info.kind = static_cast<TrackKind>(kind);
            t.info.index = static_cast<int>(std::clamp<std::int64_t>(st.int64(3), INT32_MIN, INT32_MAX));
            t.info.name = st.text(4);
            t.event_count = st.int64(5);
            t.start_ns = st.int64(6);
            t.end_ns = st.int64(7);
            t.max_duration_ns = st.int64(8);
            if (!st.is_null(9)) {
                const auto level = st.int64(9);
                if (level < kLodMinLevel || level > kLodMaxLevel) bad(field + ".lod_base_level", "out of range");
                t.lod_base_level = static_cast<int>(level);
            }
            if (!complete) t.lod_base_level = -1;
            if (t.event_count > 0) {
                start = first ? t.start_ns : std::min(start, t.start_ns);
                end = first ? t.end_ns : std::max(end, t.end_ns);
                first = false;
            }
            track_index[t.id] = tracks.size();
            tracks.push_back(std::move(t));
        }
        sql::Statement r(db, "SELECT rank, device, clock_offset_ns FROM ranks ORDER BY rank");
        while (r.step()) ranks.push_back({static_cast<int>(std::clamp<std::int64_t>(r.int64(0), 0, 1 << 24)),
                                          r.text(1), r.int64(2)});
        if (!complete) {
            // Not closed: the per-track figures were never written; count them now.
            sql::Statement c(db,
                             "SELECT track, count(*), min(start_ns), max(end_ns), "
                             "max(end_ns - start_ns) FROM events GROUP BY track");
            events = 0;
            first = true;
            while (c.step()) {
                auto it = track_index.find(static_cast<int>(c.int64(0)));
                if (it == track_index.end()) continue;
                auto& t = tracks[it->second];
                t.event_count = c.int64(1);
                t.start_ns = c.int64(2);
                t.end_ns = c.int64(3);
                t.max_duration_ns = c.int64(4);
                events += t.event_count;
                start = first ? t.start_ns : std::min(start, t.start_ns);
                end = first ? t.end_ns : std::max(end, t.end_ns);
                first = false;
            }
        } else {
            check_declared_counts();
        }
    }

    // A closed trace declares its counts (meta.event_count, tracks.event_count and extents)
    // and readers size their work by them. They must agree with each other and with the
    // events table, whose ids run from 1 without reuse (so max(id) bounds the row count);
    // both checks are cheap, neither scans the events.
    void check_declared_counts() const {
        std::int64_t sum = 0;
        for (const auto& t : tracks) {
            const std::string field = "tracks[id=" + std::to_string(t.id) + "]";
            if (t.event_count < 0) bad(field + ".event_count", "negative");
            if (t.event_count > 0 && t.end_ns < t.start_ns) bad(field + ".end_ns", "before start_ns");
            sum += std::min<std::int64_t>(t.event_count, std::int64_t{1} << 48);
        }
        if (sum != events) {
            bad("meta.event_count", "declares " + std::to_string(events) + " events, its tracks " +
                                        std::to_string(sum));
        }
        sql::Statement st(db, "SELECT max(id) FROM events");
        const std::int64_t rows_at_most = st.step() ? st.int64(0) : 0;
        if (events > rows_at_most) {
            bad("meta.event_count", "declares " + std::to_string(events) +
                                        " events, the events table holds at most " +
                                        std::to_string(rows_at_most));
        }
    }

    TraceEvent to_event(const sql::Statement& st, int col0) const {
        // Columns: id, track, kind, name_id, start, end, bytes, flops, step, mb, layer, corr, group
        TraceEvent e;
        const std::int64_t id = st.int64(col0);
        const auto field = [&](const char* c) { return "events[id=" + std::to_string(id) + "]." + c; };
        const auto track = st.int64(col0 + 1);
        auto it = track_index.find(static_cast<int>(track));
        if (track < 0 || track > std::numeric_limits<int>::max() || it == track_index.end()) {
            bad(field("track"), "unknown track " + std::to_string(track));
        }
        const auto kind = st.int64(col0 + 2);
        if (kind < 0 || kind >= kEventKinds) bad(field("kind"), "unknown event kind " + std::to_string(kind));
        e.track = static_cast<int>(track);
        e.rank = tracks[it->second].info.rank;
        e.kind = static_cast<EventKind>(kind);
        const std::int64_t name_id = st.int64(col0 + 3);
        e.name = str(name_id, "events.name_id");
        if (e.kind == EventKind::Communication) e.collective = collective_of(name_id);
        e.start_ns = st.int64(col0 + 4);
        e.end_ns = st.int64(col0 + 5);
        if (e.end_ns < e.start_ns) bad(field("end_ns"), "ends before it starts");
        e.bytes = st.int64(col0 + 6);
        e.flops = st.real(col0 + 7);
        auto small = [&](int c) {
            return st.is_null(c) ? -1 : static_cast<int>(std::clamp<std::int64_t>(st.int64(c), -1, INT32_MAX));
        };
        e.step = small(col0 + 8);
        e.micro_batch = small(col0 + 9);
        e.layer = small(col0 + 10);
        e.correlation_id = st.int64(col0 + 11);
        e.group_size = static_cast<int>(std::clamp<std::int64_t>(st.int64(col0 + 12), 0, 1 << 24));
        return e;
    }

    MergeItem item_from_row(const sql::Statement& st) const {
        // Columns: start, end, kind, name_id, id
        MergeItem m;
        m.start_ns = st.int64(0);
        m.end_ns = st.int64(1);
        const auto kind = std::clamp<std::int64_t>(st.int64(2), 0, kEventKinds - 1);
        m.busy_ns[static_cast<std::size_t>(kind)] = m.end_ns - m.start_ns;
        m.top_duration_ns = m.end_ns - m.start_ns;
        m.top_name_id = st.int64(3);
        m.event_id = st.int64(4);
        return m;
    }

    void detail_items(const TrackRecord& t, std::int64_t t0, std::int64_t t1,
                      std::vector<MergeItem>& out) const {
        if (t.lod_base_level < 0) {
            // Never closed, so no timeline chunks: a plain scan, slow but complete.
            sql::Statement st(db,
                              "SELECT start_ns, end_ns, kind, name_id, id FROM events WHERE "
                              "track = ? AND start_ns < ? AND end_ns > ? ORDER BY start_ns");
            st.bind(1, t.id);
            st.bind(2, t1);
            st.bind(3, t0);
            while (st.step()) out.push_back(item_from_row(st));
            return;
        }
        const std::int64_t from = t0 - long_threshold_ns(t);
        // The chunk holding `from` starts at or before it: the latest first_start <= from.
        sql::Statement st(db,
                          "SELECT first_start_ns, event_count, data FROM timeline WHERE track = ?1 "
                          "AND first_start_ns >= coalesce((SELECT max(first_start_ns) FROM timeline "
                          "WHERE track = ?1 AND first_start_ns <= ?2), ?2) AND first_start_ns < ?3 "
                          "ORDER BY first_start_ns, id");
        st.bind(1, t.id);
        st.bind(2, from);
        st.bind(3, t1);
        while (st.step()) {
            decode_timeline_chunk(st.blob(2), st.int64(0), st.int64(1), from, t0, t1, path, out);
        }
        append_long_events(t, t0, from, out);
    }

    // Events that began before `before_ns` (further back than the chunks looked) and are
    // still running at t0.
    void append_long_events(const TrackRecord& t, std::int64_t t0, std::int64_t before_ns,
                            std::vector<MergeItem>& out) const {
        if (t.max_duration_ns <= long_threshold_ns(t)) return;
        sql::Statement st(db,
                          "SELECT start_ns, end_ns, kind, name_id, event_id FROM long_events "
                          "WHERE track = ? AND start_ns >= ? AND start_ns < ? AND end_ns > ?");
        st.bind(1, t.id);
        st.bind(2, t0 - t.max_duration_ns);
        st.bind(3, before_ns);
        st.bind(4, t0);
        std::vector<MergeItem> found;
        while (st.step()) found.push_back(item_from_row(st));
        if (found.empty()) return;
        out.insert(out.end(), found.begin(), found.end());
        std::stable_sort(out.begin(), out.end(),
                         [](const MergeItem& a, const MergeItem& b) { return a.start_ns < b.start_ns; });
    }

    void lod_items(const TrackRecord& t, int level, std::int64_t b0, std::int64_t b1,
                   std::int64_t t0, std::int64_t t1, std::vector<MergeItem>& out) const {
        sql::Statement st(db,
                          "SELECT chunk, bucket_count, data FROM lod WHERE track = ? AND level = ? "
                          "AND chunk >= ? AND chunk <= ? ORDER BY chunk");
        st.bind(1, t.id);
        st.bind(2, level);
        st.bind(3, b0 >> kLodChunkShift);
        st.bind(4, b1 >> kLodChunkShift);
        while (st.step()) {
            decode_lod_chunk(st.blob(2), level, st.int64(0), st.int64(1), b0, b1, t0, t1, path, out);
        }
    }

    std::int64_t estimate_count(const TrackRecord& t, std::int64_t t0, std::int64_t t1) const {
        const int level = std::clamp(ceil_log2((t1 - t0) / 16 + 1), t.lod_base_level, kLodMaxLevel);
        std::vector<MergeItem> buckets;
        lod_items(t, level, t0 >> level, (t1 - 1) >> level, std::numeric_limits<std::int64_t>::min(),
                  std::numeric_limits<std::int64_t>::max(), buckets);
        std::int64_t n = 0;
        for (const auto& b : buckets) n += b.count;
        return n;
    }

    void summary_items(const TrackRecord& t, int level, std::int64_t t0, std::int64_t t1,
                       std::vector<MergeItem>& out) const {
        const std::int64_t from = t0 - long_threshold_ns(t);
        lod_items(t, level, from >> level, (t1 - 1) >> level, t0, t1, out);
        append_long_events(t, t0, from, out);
    }
};

TraceReader::TraceReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;
TraceReader::~TraceReader() = default;

TraceReader TraceReader::open(const std::string& path) {
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->db = sql::Database::open_untrusted(path);
    impl->check_not_truncated();
    impl->check_identity();
    impl->check_no_foreign_code();
    impl->load_meta();
    impl->load_tables();
    return TraceReader(std::move(impl));
}

const std::string& TraceReader::path() const { return impl_->path; }
int TraceReader::format_version() const { return impl_->version; }
bool TraceReader::complete() const { return impl_->complete; }
const TraceRunInfo& TraceReader::run_info() const { return impl_->info; }
std::int64_t TraceReader::event_count() const { return impl_->events; }
std::int64_t TraceReader::dropped_events() const { return impl_->dropped; }
const std::vector<TrackRecord>& TraceReader::tracks() const { return impl_->tracks; }
const std::vector<RankRecord>& TraceReader::ranks() const { return impl_->ranks; }
std::int64_t TraceReader::start_ns() const { return impl_->start; }
std::int64_t TraceReader::end_ns() const { return impl_->end; }

const TrackRecord* TraceReader::track(int id) const {
    auto it = impl_->track_index.find(id);
    return it == impl_->track_index.end() ? nullptr : &impl_->tracks[it->second];
}

const std::string& TraceReader::string(std::int64_t id) const { return impl_->str(id, "string id"); }
std::int64_t TraceReader::string_count() const { return static_cast<std::int64_t>(impl_->strings.size()); }

std::vector<DrawItem> TraceReader::window(int track_id, std::int64_t t0, std::int64_t t1,
                                          std::size_t max_items) const {
    const TrackRecord* t = track(track_id);
    if (!t || max_items == 0 || t1 <= t0 || t->event_count == 0) return {};
    std::vector<MergeItem> raw;
    const auto n = static_cast<std::int64_t>(max_items);
    const std::int64_t px = std::max<std::int64_t>(1, (t1 - t0 + n - 1) / n);
    bool detail = t->lod_base_level < 0;
    int level = 0;
    if (!detail) {
        level = std::max(t->lod_base_level, ceil_log2(px));
        // Below the finest summary, or few enough events: read the events themselves.
        detail = (std::int64_t{1} << t->lod_base_level) > px ||
                 impl_->estimate_count(*t, t0, t1) <= n;
    }
    if (detail) {
        impl_->detail_items(*t, t0, t1, raw);
    } else {
        impl_->summary_items(*t, level, t0, t1, raw);
    }
    const auto merged = merge_for_drawing(std::move(raw), t0, t1, max_items);
    std::vector<DrawItem> out;
    out.reserve(merged.size());
    for (const auto& m : merged) {
        DrawItem d;
        d.start_ns = m.start_ns;
        d.end_ns = m.end_ns;
        d.count = m.count;
        d.busy_ns = m.busy_total();
        d.kind = static_cast<EventKind>(m.dominant_kind());
        impl_->str(m.top_name_id, "name id");  // refuses an id the strings table lacks
        d.name_id = m.top_name_id;
        d.event_id = m.count == 1 ? m.event_id : 0;
        out.push_back(std::move(d));
    }
    return out;
}

void TraceReader::verify() const {
    sql::Statement st(impl_->db, "PRAGMA quick_check(5)");
    std::string problems;
    while (st.step()) {
        const std::string line = st.text(0);
        if (line == "ok") return;
        problems += (problems.empty() ? "" : "; ") + line;
    }
    impl_->bad("", "corrupt SQLite file: " + problems);
}

namespace {
constexpr const char* kEventColumnsSql =
    "SELECT id, track, kind, name_id, start_ns, end_ns, bytes, flops, step, micro_batch, layer, "
    "correlation_id, group_size FROM events";
}

std::optional<TraceEvent> TraceReader::event(std::int64_t id) const {
    sql::Statement st(impl_->db, std::string(kEventColumnsSql) + " WHERE id = ?");
    st.bind(1, id);
    if (!st.step()) return std::nullopt;
    return impl_->to_event(st, 0);
}

void TraceReader::for_each_event(const std::function<void(const TraceEvent&)>& fn) const {
    sql::Statement st(impl_->db, kEventColumnsSql);
    while (st.step()) fn(impl_->to_event(st, 0));
}

void TraceReader::for_each_event_of_track(int track_id,
                                          const std::function<void(const TraceEvent&)>& fn) const {
    sql::Statement st(impl_->db, std::string(kEventColumnsSql) + " WHERE track = ? ORDER BY start_ns");
    st.bind(1, track_id);
    while (st.step()) fn(impl_->to_event(st, 0));
}

std::optional<std::pair<std::int64_t, std::int64_t>> TraceReader::step_span(std::int64_t step,
                                                                            std::int64_t micro_batch) const {
    sql::Statement st(impl_->db,
                      "SELECT count(*), min(start_ns), max(end_ns) FROM events "
                      "WHERE step = ?1 AND (?2 < 0 OR micro_batch = ?2)");
    st.bind(1, step);
    st.bind(2, micro_batch);
    if (!st.step() || st.int64(0) == 0) return std::nullopt;
    return std::make_pair(st.int64(1), st.int64(2));
}

std::int64_t TraceReader::distinct_step_count() const {
    sql::Statement st(impl_->db, "SELECT count(DISTINCT step) FROM events WHERE step IS NOT NULL");
    return st.step() ? st.int64(0) : 0;
}

void TraceReader::for_each_counter(const std::function<void(const CounterSample&)>& fn) const {
    sql::Statement st(impl_->db, "SELECT track, name_id, time_ns, value FROM counters ORDER BY track, time_ns");
    while (st.step()) {
        CounterSample c;
        c.track = static_cast<int>(std::clamp<std::int64_t>(st.int64(0), INT32_MIN, INT32_MAX));
        c.name = impl_->str(st.int64(1), "counters.name_id");
        c.time_ns = st.int64(2);
        c.value = st.real(3);
        fn(c);
    }
}

bool TraceReader::has_memory_tables() const { return impl_->has_memory; }

void TraceReader::for_each_memory_event(
    const std::function<void(const MemoryEvent&, std::int64_t stack_id)>& fn) const {
    if (!impl_->has_memory) return;
    sql::Statement st(impl_->db,
                      "SELECT rank, device, time_ns, action, addr, bytes, stream, allocated_bytes, reserved_bytes, "
                      "coalesce(stack_id, 0) FROM memory_events ORDER BY rank, device, time_ns, id");
    while (st.step()) {
        MemoryEvent m;
        // Ranges were checked at open (trace_content_check).
        m.rank = static_cast<int>(st.int64(0));
        m.device = static_cast<int>(st.int64(1));
        m.time_ns = st.int64(2);
        m.action = static_cast<MemoryAction>(st.int64(3));
        m.addr = st.int64(4);
        m.bytes = st.int64(5);
        m.stream = st.int64(6);
        m.allocated_bytes = st.int64(7);
        m.reserved_bytes = st.int64(8);
        fn(m, st.int64(9));
    }
}

std::string TraceReader::memory_stack(std::int64_t stack_id) const {
    if (!impl_->has_memory || stack_id <= 0) return {};
    sql::Statement st(impl_->db, "SELECT frames FROM memory_stacks WHERE id = ?");
    st.bind(1, stack_id);
    return st.step() ? st.text(0) : std::string();
}

}  // namespace meshwork::profiler
