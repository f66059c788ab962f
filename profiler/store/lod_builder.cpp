#include "profiler/store/lod_builder.h"

#include <algorithm>
#include <array>
#include <bit>

#include "profiler/store/trace_schema.h"
#include "profiler/store/varint.h"

namespace meshwork::profiler {

namespace {

constexpr int kKinds = 6;

int floor_log2(std::uint64_t v) { return v == 0 ? 0 : static_cast<int>(std::bit_width(v)) - 1; }

// One bucket being accumulated at one level.
struct Bucket {
    bool active = false;
    std::int64_t index = 0;
    std::int64_t first_start_ns = 0;
    std::int64_t last_end_ns = 0;
    std::int64_t count = 0;
    std::array<std::int64_t, kKinds> busy_ns{};
    std::int64_t top_duration_ns = -1;
    std::int64_t top_name_id = 0;

    void start(std::int64_t at_index) {
        *this = Bucket{};
        active = true;
        index = at_index;
    }
    void add_event(std::int64_t s, std::int64_t e, int kind, std::int64_t name_id) {
        const std::int64_t d = e - s;
        if (count == 0 || s < first_start_ns) first_start_ns = s;
        if (count == 0 || e > last_end_ns) last_end_ns = e;
        ++count;
        busy_ns[static_cast<std::size_t>(std::clamp(kind, 0, kKinds - 1))] += d;
        if (d > top_duration_ns) {
            top_duration_ns = d;
            top_name_id = name_id;
        }
    }
    void add_bucket(const Bucket& b) {
        if (count == 0 || b.first_start_ns < first_start_ns) first_start_ns = b.first_start_ns;
        if (count == 0 || b.last_end_ns > last_end_ns) last_end_ns = b.last_end_ns;
        count += b.count;
        for (std::size_t k = 0; k < kKinds; ++k) busy_ns[k] += b.busy_ns[k];
        if (b.top_duration_ns > top_duration_ns) {
            top_duration_ns = b.top_duration_ns;
            top_name_id = b.top_name_id;
        }
    }
    [[nodiscard]] int dominant_kind() const {
        return static_cast<int>(std::max_element(busy_ns.begin(), busy_ns.end()) - busy_ns.begin());
    }
    [[nodiscard]] std::int64_t busy_total() const {
        std::int64_t t = 0;
        for (auto b : busy_ns) t += b;
        return t;
    }
};

// A chunk of one level being packed: buckets sharing bucket >> kLodChunkShift.
struct LodChunk {
    bool active = false;
    std::int64_t chunk = 0;
    std::int64_t prev_bucket = 0;
    std::int64_t count = 0;
    std::string data;
};

}  // namespace

struct TrackSummaryBuilder::State {
    sql::Database& db;
    TrackExtent extent;
    int base = 0;
    std::int64_t long_ns = 0;
    std::vector<Bucket> levels;
    std::vector<LodChunk> chunks;
    sql::Statement insert_lod;
    sql::Statement insert_timeline;
    sql::Statement insert_long;
    // Timeline chunk being packed.
    std::string tl_data;
    std::int64_t tl_count = 0, tl_first = 0, tl_prev_start = 0, tl_prev_id = 0, tl_max_end = 0;
    std::int64_t tl_last_start = 0;

    State(sql::Database& d, const TrackExtent& e)
        : db(d), extent(e),
          insert_lod(d, "INSERT INTO lod (track, level, chunk, bucket_count, data) VALUES (?,?,?,?,?)"),
          insert_timeline(d,
                          "INSERT INTO timeline (track, first_start_ns, last_start_ns, max_end_ns, "
                          "event_count, data) VALUES (?,?,?,?,?,?)"),
          insert_long(d,
                      "INSERT INTO long_events (track, start_ns, end_ns, kind, name_id, event_id) "
                      "VALUES (?,?,?,?,?,?)") {
        base = lod_base_level(e);
        const int top = lod_top_level(e);
        long_ns = std::int64_t{1} << std::min(62, base + kLongEventShift);
        levels.resize(static_cast<std::size_t>(top - base + 1));
        chunks.resize(levels.size());
    }

    void add_to_lod(std::int64_t s, std::int64_t e, int kind, std::int64_t name_id) {
        const std::int64_t idx = s >> base;
        Bucket& b = levels[0];
        if (b.active && b.index != idx) finish_bucket(0);
        if (!b.active) b.start(idx);
        b.add_event(s, e, kind, name_id);
    }

    // A finished bucket is packed and folded into the next level: only the finest level
    // sees events, so each event costs O(1) amortised.
    void finish_bucket(std::size_t l) {
        Bucket& b = levels[l];
        pack_bucket(l, b);
        if (l + 1 < levels.size()) {
            Bucket& up = levels[l + 1];
            const std::int64_t up_idx = b.index >> 1;
            if (up.active && up.index != up_idx) finish_bucket(l + 1);
            if (!up.active) up.start(up_idx);
            up.add_bucket(b);
        }
        b.active = false;
    }

    void pack_bucket(std::size_t l, const Bucket& b) {
        LodChunk& c = chunks[l];
        const std::int64_t chunk = b.index >> kLodChunkShift;
        if (c.active && c.chunk != chunk) write_chunk(l);
        if (!c.active) {
            c = LodChunk{};
            c.active = true;
            c.chunk = chunk;
            c.prev_bucket = chunk << kLodChunkShift;
        }
        const int level = static_cast<int>(l) + base;
        const std::int64_t bucket_start = b.index << level;
        put_varint(c.data, static_cast<std::uint64_t>(b.index - c.prev_bucket));
        put_varint(c.data, static_cast<std::uint64_t>(b.first_start_ns - bucket_start));
        put_varint(c.data, static_cast<std::uint64_t>(b.last_end_ns - b.first_start_ns));
        put_varint(c.data, static_cast<std::uint64_t>(b.count));
        put_varint(c.data, static_cast<std::uint64_t>(b.busy_total()));
        c.data.push_back(static_cast<char>(b.dominant_kind()));
        put_varint(c.data, static_cast<std::uint64_t>(b.top_name_id));
        c.prev_bucket = b.index;
        ++c.count;
    }

    void write_chunk(std::size_t l) {
        LodChunk& c = chunks[l];
        insert_lod.bind(1, extent.track);
        insert_lod.bind(2, static_cast<int>(l) + base);
        insert_lod.bind(3, c.chunk);
        insert_lod.bind(4, c.count);
        insert_lod.bind_blob(5, c.data);
        insert_lod.step();
        insert_lod.reset();
        c.active = false;
    }

    void add_to_timeline(std::int64_t s, std::int64_t e, int kind, std::int64_t name_id,
                         std::int64_t id) {
        if (tl_count == 0) {
            tl_first = tl_prev_start = s;
            tl_prev_id = 0;
            tl_max_end = e;
        }
        put_varint(tl_data, static_cast<std::uint64_t>(s - tl_prev_start));
        put_varint(tl_data, static_cast<std::uint64_t>(e - s));
        tl_data.push_back(static_cast<char>(kind));
        put_varint(tl_data, static_cast<std::uint64_t>(name_id));
        put_varint(tl_data, zigzag(id - tl_prev_id));
        tl_prev_start = s;
        tl_last_start = s;
        tl_prev_id = id;
        tl_max_end = std::max(tl_max_end, e);
        if (++tl_count == kTimelineChunkEvents) write_timeline();
    }

    void write_timeline() {
        if (tl_count == 0) return;
        insert_timeline.bind(1, extent.track);
        insert_timeline.bind(2, tl_first);
        insert_timeline.bind(3, tl_last_start);
        insert_timeline.bind(4, tl_max_end);
        insert_timeline.bind(5, tl_count);
        insert_timeline.bind_blob(6, tl_data);
        insert_timeline.step();
        insert_timeline.reset();
        tl_data.clear();
        tl_count = 0;
    }
};

int lod_base_level(const TrackExtent& t) {
    const auto span = static_cast<std::uint64_t>(std::max<std::int64_t>(1, t.end_ns - t.start_ns));
    const auto count = static_cast<std::uint64_t>(std::max<std::int64_t>(1, t.event_count));
    const int level = floor_log2(std::max<std::uint64_t>(1, 4 * span / count));
    return std::clamp(level, kLodMinLevel, kLodMaxLevel);
}

int lod_top_level(const TrackExtent& t) {
    const auto span = static_cast<std::uint64_t>(std::max<std::int64_t>(1, t.end_ns - t.start_ns));
    return std::clamp(static_cast<int>(std::bit_width(span)), lod_base_level(t), kLodMaxLevel);
}

TrackSummaryBuilder::TrackSummaryBuilder(sql::Database& db, const TrackExtent& extent)
    : s_(std::make_unique<State>(db, extent)) {}

TrackSummaryBuilder::~TrackSummaryBuilder() = default;

void TrackSummaryBuilder::add(std::int64_t start_ns, std::int64_t end_ns, int kind,
                              std::int64_t name_id, std::int64_t event_id) {
    s_->add_to_lod(start_ns, end_ns, kind, name_id);
    s_->add_to_timeline(start_ns, end_ns, kind, name_id, event_id);
    if (end_ns - start_ns > s_->long_ns) {
        auto& st = s_->insert_long;
        st.bind(1, s_->extent.track);
        st.bind(2, start_ns);
        st.bind(3, end_ns);
        st.bind(4, kind);
        st.bind(5, name_id);
        st.bind(6, event_id);
        st.step();
        st.reset();
    }
}

void TrackSummaryBuilder::finish() {
    for (std::size_t l = 0; l < s_->levels.size(); ++l) {
        if (s_->levels[l].active) s_->finish_bucket(l);
    }
    for (std::size_t l = 0; l < s_->chunks.size(); ++l) {
        if (s_->chunks[l].active) s_->write_chunk(l);
    }
    s_->write_timeline();
    sql::Statement set_level(s_->db, "UPDATE tracks SET lod_base_level = ? WHERE id = ?");
    set_level.bind(1, s_->base);
    set_level.bind(2, s_->extent.track);
    set_level.step();
}

}  // namespace meshwork::profiler
