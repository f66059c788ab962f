#include "profiler/store/trace_writer.h"

#include <algorithm>
#include <array>
#include <optional>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/common/error.h"
#include "profiler/store/lod_builder.h"
#include "profiler/store/sqlite_db.h"
#include "profiler/store/trace_schema.h"

namespace meshwork::profiler {

namespace {

// Events handed to the writer thread in one piece; large enough that the per-batch lock
// and wake-up cost vanish, small enough that a batch is a few hundred kilobytes.
constexpr std::size_t kBatchEvents = 8192;
// Rows per multi-row INSERT: one sqlite3_step inserts this many events.
constexpr int kRowsPerInsert = 64;
constexpr int kEventColumns = 12;

struct CounterSample {
    int track = 0;
    std::string name;
    std::int64_t time_ns = 0;
    double value = 0;
};

struct RankInfo {
    int rank = 0;
    std::string device;
    std::int64_t clock_offset_ns = 0;
};

struct TrackRecord {
    int id = 0;
    TrackInfo info;
};

// What producers hand over to the writer thread.
struct Batch {
    std::vector<TraceEvent> events;
    std::vector<CounterSample> counters;
    std::vector<MemoryEvent> memory;
    std::vector<TrackRecord> tracks;
    std::vector<RankInfo> ranks;
    std::vector<int> finished_tracks;  // after this batch's events: no more events on these
};

std::string insert_events_sql(int rows) {
    std::string sql =
        "INSERT INTO events (track, kind, name_id, start_ns, end_ns, bytes, flops, step, "
        "micro_batch, layer, correlation_id, group_size) VALUES ";
    for (int r = 0; r < rows; ++r) {
        sql += r ? ",(?,?,?,?,?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?,?,?,?,?,?)";
    }
    return sql;
}

// The drawable fields of one event, kept per track while writing so that close() can build
// the timeline and level-of-detail chunks without sorting the events table: 24 bytes.
struct TimelineEntry {
    std::int64_t start_ns;
    std::int64_t end_ns;
    std::uint32_t event_id;
    std::uint32_t name_kind;  // name_id << 3 | kind
};

// Above this many events held (of tracks not yet finished) the copies above would cost too
// much memory; close() then reads the events back through SQLite's external sorter instead
// (slower, bounded memory). Finished tracks are summarised at once and hold nothing.
constexpr std::int64_t kMaxInMemoryEvents = std::int64_t{24} << 20;

// Per-track figures kept while writing, stored in tracks at close.
struct TrackStats {
    std::int64_t count = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t max_duration_ns = 0;
};

}  // namespace

struct TraceWriter::Impl {
    std::string path;
    TraceWriterOptions options;

    // ---- shared with producers, guarded by mutex ----
    std::mutex mutex;
    std::condition_variable work_ready;   // writer waits for batches
    std::condition_variable space_ready;  // blocked producers wait for room
    Batch current;
    std::deque<Batch> queue;
    // Emptied event vectors handed back by the writer: reusing their memory saves a page
    // fault per 4 KiB of every batch.
    std::vector<std::vector<TraceEvent>> spare;
    std::size_t queued_events = 0;
    bool closing = false;
    bool writer_failed = false;
    int next_track_id = 0;
    std::vector<int> track_ranks;  // rank of each track id, to validate events
    std::vector<bool> track_finished;  // by track id: finish_track() was called
    bool run_info_dirty = false;
    TraceRunInfo run_info;
    std::int64_t dropped = 0;
    bool closed = false;
    std::uint64_t handed_over = 0;  // batches taken by the writer thread
    std::uint64_t committed = 0;    // of those, committed
    std::condition_variable committed_cv;

    // ---- writer thread only ----
    sql::Database db;
    std::unordered_map<std::string, std::int64_t> string_ids;
    std::unordered_map<std::string, std::int64_t> stack_ids;  // memory_stacks: frames -> id
    std::vector<TrackStats> stats;
    std::vector<std::vector<TimelineEntry>> entries;  // per track
    std::vector<bool> summarised;                     // per track: summaries written (finished)
    std::int64_t held_entries = 0;                    // summed size of entries
    bool in_memory = true;
    std::exception_ptr error;
    std::thread thread;
    std::int64_t total_events = 0;

    void open_database() {
        db = sql::Database::create(path);
        db.exec("PRAGMA page_size = 8192");
        if (options.crash_readable) {
            db.exec("PRAGMA journal_mode = WAL");
            // NORMAL in WAL mode: commits survive a killed process; only power loss may lose the
            // last transactions, never the file's integrity.
            db.exec("PRAGMA synchronous = NORMAL");
            db.exec("PRAGMA wal_autocheckpoint = 8192");
        } else {
            // A temporary file renamed once complete: every page is written once, straight
            // into the file (WAL writes each twice); finalize() syncs before the rename.
            db.exec("PRAGMA journal_mode = OFF");
            db.exec("PRAGMA synchronous = OFF");
        }
        db.exec("PRAGMA cache_size = -65536");
        db.exec("PRAGMA threads = 2");
        {
            std::string pragma = "PRAGMA application_id = " + std::to_string(kTraceApplicationId);
            db.exec(pragma.c_str());
            pragma = "PRAGMA user_version = " + std::to_string(kTraceFormatVersion);
            db.exec(pragma.c_str());
        }
        db.exec("BEGIN");
        db.exec(kSchemaSql);
        put_meta("format_version", std::to_string(kTraceFormatVersion));
        put_meta("complete", "0");
        db.exec("COMMIT");
    }

    void put_meta(const std::string& key, const std::string& value) {
        sql::Statement st(db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
        st.bind(1, key);
        st.bind(2, value);
        st.step();
    }

    void write_run_info(const TraceRunInfo& info) {
        put_meta("tool_version", info.tool_version);
        put_meta("source", info.source);
        put_meta("layout_json", info.layout_json);
        put_meta("cluster", info.cluster);
        put_meta("start_time_unix_ns", std::to_string(info.start_time_unix_ns));
        put_meta("clock_domain", info.clock_domain);
        put_meta("world_size", std::to_string(info.world_size));
        for (const auto& [k, v] : info.extra) put_meta("extra." + k, v);
    }

    // A memory event's stack, stored once (memory_stacks); NULL for none.
    std::optional<std::int64_t> intern_stack(const std::string& frames, sql::Statement& insert_stack) {
        if (frames.empty()) return std::nullopt;
        auto it = stack_ids.find(frames);
        if (it != stack_ids.end()) return it->second;
        const auto id = static_cast<std::int64_t>(stack_ids.size()) + 1;
        insert_stack.bind(1, id);
        insert_stack.bind(2, frames);
        insert_stack.step();
        insert_stack.reset();
        stack_ids.emplace(frames, id);
        return id;
    }

    std::int64_t intern(const std::string& s, sql::Statement& insert_string) {
        auto it = string_ids.find(s);
        if (it != string_ids.end()) return it->second;
        const auto id = static_cast<std::int64_t>(string_ids.size()) + 1;
        insert_string.bind(1, id);
        insert_string.bind(2, s);
        insert_string.step();
        insert_string.reset();
        string_ids.emplace(s, id);
        return id;
    }

    // Binds one event's 12 columns starting at parameter `first`. The row id SQLite gives
    // it is the next integer (the table only grows, from 1), which total_events mirrors.
    void bind_event(sql::Statement& st, int first, const TraceEvent& e, std::int64_t name_id) {
        ++total_events;
        st.bind(first + 0, e.track);
        st.bind(first + 1, static_cast<int>(e.kind));
        st.bind(first + 2, name_id);
        st.bind(first + 3, e.start_ns);
        st.bind(first + 4, e.end_ns);
        st.bind(first + 5, e.bytes);
        st.bind(first + 6, e.flops);
        if (e.step >= 0) st.bind(first + 7, e.step); else st.bind_null(first + 7);
        if (e.micro_batch >= 0) st.bind(first + 8, e.micro_batch); else st.bind_null(first + 8);
        if (e.layer >= 0) st.bind(first + 9, e.layer); else st.bind_null(first + 9);
        st.bind(first + 10, e.correlation_id);
        st.bind(first + 11, e.group_size);
    }

    void remember(const TraceEvent& e, std::int64_t name_id) {
        if (!in_memory) return;
        // event_id is kept in 32 bits and name_kind holds the name in 29.
        if (held_entries >= kMaxInMemoryEvents || total_events >= (std::int64_t{1} << 32) ||
            name_id >= (std::int64_t{1} << 29)) {
            in_memory = false;
            entries = {};
            held_entries = 0;
            return;
        }
        ++held_entries;
        auto& v = entries[static_cast<std::size_t>(e.track)];
        v.push_back({e.start_ns, e.end_ns, static_cast<std::uint32_t>(total_events),
                     static_cast<std::uint32_t>(name_id << 3 | static_cast<int>(e.kind))});
    }

    void note_stats(const TraceEvent& e) {
        auto& s = stats[static_cast<std::size_t>(e.track)];
        if (s.count == 0 || e.start_ns < s.start_ns) s.start_ns = e.start_ns;
        if (s.count == 0 || e.end_ns > s.end_ns) s.end_ns = e.end_ns;
        s.max_duration_ns = std::max(s.max_duration_ns, e.end_ns - e.start_ns);
        ++s.count;
    }

    // Writes everything taken from the producers in one transaction.
    void write_batches(std::vector<Batch>& batches, const TraceRunInfo* info) {
        if (batches.empty() && !info) return;
        db.exec("BEGIN");
        if (info) write_run_info(*info);
        sql::Statement insert_track(
            db, "INSERT INTO tracks (id, rank, kind, idx, name) VALUES (?,?,?,?,?)");
        sql::Statement insert_rank(db,
                                   "INSERT INTO ranks (rank, device, clock_offset_ns) VALUES "
                                   "(?,?,?) ON CONFLICT(rank) DO UPDATE SET device = "
                                   "excluded.device, clock_offset_ns = excluded.clock_offset_ns");
        sql::Statement ensure_rank(db, "INSERT OR IGNORE INTO ranks (rank) VALUES (?)");
        sql::Statement insert_string(db, "INSERT INTO strings (id, value) VALUES (?, ?)");
        sql::Statement insert_many(db, insert_events_sql(kRowsPerInsert));
        sql::Statement insert_one(db, insert_events_sql(1));
        sql::Statement insert_counter(
            db, "INSERT INTO counters (track, name_id, time_ns, value) VALUES (?,?,?,?)");
        sql::Statement insert_stack(db, "INSERT INTO memory_stacks (id, frames) VALUES (?, ?)");
        sql::Statement insert_memory(db,
                                     "INSERT INTO memory_events (rank, device, time_ns, action, addr, bytes, stream, "
                                     "allocated_bytes, reserved_bytes, stack_id) VALUES (?,?,?,?,?,?,?,?,?,?)");
        for (auto& b : batches) {
            for (const auto& t : b.tracks) {
                insert_track.bind(1, t.id);
                insert_track.bind(2, t.info.rank);
                insert_track.bind(3, static_cast<int>(t.info.kind));
                insert_track.bind(4, t.info.index);
                insert_track.bind(5, t.info.name);
                insert_track.step();
                insert_track.reset();
                if (stats.size() <= static_cast<std::size_t>(t.id)) {
                    stats.resize(static_cast<std::size_t>(t.id) + 1);
                    entries.resize(stats.size());
                    summarised.resize(stats.size(), false);
                }
                // A rank row for every rank with a track; device info set explicitly wins.
                ensure_rank.bind(1, t.info.rank);
                ensure_rank.step();
                ensure_rank.reset();
            }
            for (const auto& r : b.ranks) {
                insert_rank.bind(1, r.rank);
                insert_rank.bind(2, r.device);
                insert_rank.bind(3, r.clock_offset_ns);
                insert_rank.step();
                insert_rank.reset();
            }
            const auto& ev = b.events;
            std::size_t i = 0;
            std::array<std::int64_t, kRowsPerInsert> ids{};
            for (; i + kRowsPerInsert <= ev.size(); i += kRowsPerInsert) {
                for (int r = 0; r < kRowsPerInsert; ++r) ids[r] = intern(ev[i + r].name, insert_string);
                for (int r = 0; r < kRowsPerInsert; ++r) {
                    bind_event(insert_many, 1 + r * kEventColumns, ev[i + r], ids[r]);
                    remember(ev[i + r], ids[r]);
                    note_stats(ev[i + r]);
                }
                insert_many.step();
                insert_many.rewind();
            }
            for (; i < ev.size(); ++i) {
                const auto name_id = intern(ev[i].name, insert_string);
                bind_event(insert_one, 1, ev[i], name_id);
                remember(ev[i], name_id);
                note_stats(ev[i]);
                insert_one.step();
                insert_one.rewind();
            }
            for (const auto& c : b.counters) {
                insert_counter.bind(1, c.track);
                insert_counter.bind(2, intern(c.name, insert_string));
                insert_counter.bind(3, c.time_ns);
                insert_counter.bind(4, c.value);
                insert_counter.step();
                insert_counter.reset();
            }
            for (const auto& m : b.memory) {
                const auto stack = intern_stack(m.frames, insert_stack);
                insert_memory.bind(1, m.rank);
                insert_memory.bind(2, m.device);
                insert_memory.bind(3, m.time_ns);
                insert_memory.bind(4, static_cast<int>(m.action));
                insert_memory.bind(5, m.addr);
                insert_memory.bind(6, m.bytes);
                insert_memory.bind(7, m.stream);
                insert_memory.bind(8, m.allocated_bytes);
                insert_memory.bind(9, m.reserved_bytes);
                if (stack) {
                    insert_memory.bind(10, *stack);
                } else {
                    insert_memory.bind_null(10);
                }
                insert_memory.step();
                insert_memory.reset();
                ensure_rank.bind(1, m.rank);
                ensure_rank.step();
                ensure_rank.reset();
            }
            for (int id : b.finished_tracks) summarise_finished(id);
        }
        db.exec("COMMIT");
    }

    // Builds the timeline and level-of-detail chunks of one track from its copies in memory
    // and frees them. Tracks without events get none, as at close.
    void summarise(std::size_t id) {
        auto& v = entries[id];
        if (!v.empty()) {
            const auto by_start = [](const TimelineEntry& a, const TimelineEntry& b) {
                return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.event_id < b.event_id;
            };
            // Streams arrive in order; only host ranges (recorded at their end) need sorting.
            if (!std::is_sorted(v.begin(), v.end(), by_start)) std::sort(v.begin(), v.end(), by_start);
            const auto& st = stats[id];
            TrackSummaryBuilder builder(db, {static_cast<int>(id), st.count, st.start_ns, st.end_ns});
            for (const auto& e : v) {
                builder.add(e.start_ns, e.end_ns, static_cast<int>(e.name_kind & 7), e.name_kind >> 3, e.event_id);
            }
            builder.finish();
        }
        held_entries -= static_cast<std::int64_t>(v.size());
        std::vector<TimelineEntry>().swap(v);  // `v = {}` would keep the capacity
        summarised[id] = true;
    }

    // A finished track is summarised now, while its copies are in memory; once the writer has
    // left memory, close() summarises it from the events table with the others.
    void summarise_finished(int track) {
        const auto id = static_cast<std::size_t>(track);
        if (!in_memory || id >= entries.size() || summarised[id]) return;
        summarise(id);
    }

    void run() {
#if defined(__linux__)
        // Linux applies setpriority(PRIO_PROCESS, tid) to that thread alone (setpriority(2),
        // "BUGS": threads do not share a nice value). Best effort: a failure leaves nice 0.
        if (options.yield_cores) (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
#endif
        const auto interval = std::chrono::milliseconds(std::max(1, options.flush_interval_ms));
        for (;;) {
            std::vector<Batch> taken;
            std::optional<TraceRunInfo> info;
            bool stop = false;
            {
                std::unique_lock lock(mutex);
                work_ready.wait_for(lock, interval, [&] { return !queue.empty() || closing; });
                while (!queue.empty()) {
                    taken.push_back(std::move(queue.front()));
                    queue.pop_front();
                }
                // Take the partial batch too: that is what bounds the time between commits.
                if (!current.events.empty() || !current.counters.empty() || !current.memory.empty() ||
                    !current.tracks.empty() || !current.ranks.empty() || !current.finished_tracks.empty()) {
                    taken.push_back(std::move(current));
                    current = Batch{};
                }
                queued_events = 0;
                handed_over += taken.size() + 1;
                if (run_info_dirty) {
                    info = run_info;
                    run_info_dirty = false;
                }
                stop = closing;
            }
            space_ready.notify_all();
            try {
                write_batches(taken, info ? &*info : nullptr);
            } catch (...) {
                std::lock_guard lock(mutex);
                error = std::current_exception();
                writer_failed = true;
                space_ready.notify_all();
                committed_cv.notify_all();
                return;
            }
            {
                std::lock_guard lock(mutex);
                committed += taken.size() + 1;
                for (auto& b : taken) {
                    if (b.events.capacity() < kBatchEvents || spare.size() >= 8) continue;
                    b.events.clear();
                    spare.push_back(std::move(b.events));
                }
            }
            committed_cv.notify_all();
            if (stop) return;
        }
    }

    // Why the writer thread stopped, for the producer that adds next: a full disk stops the
    // run or import at once instead of after all of its work (close() reports it too).
    [[noreturn]] void throw_failure() const {
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            throw RuntimeError(path + ": writing the trace failed: " + e.what());
        } catch (...) {
            throw RuntimeError(path + ": writing the trace failed");
        }
    }

    // Caller holds the lock. Moves the current batch to the queue when full; applies
    // back-pressure. Returns false when the event must be dropped; throws once the writer
    // thread has failed.
    bool make_room(std::unique_lock<std::mutex>& lock) {
        if (writer_failed) throw_failure();
        if (queued_events >= options.max_queued_events) {
            if (options.drop_when_behind) return false;
            space_ready.wait(lock, [&] {
                return queued_events < options.max_queued_events || writer_failed;
            });
            if (writer_failed) throw_failure();
        }
        return true;
    }

    void push_current_if_full() {
        if (current.events.size() >= kBatchEvents || current.counters.size() >= kBatchEvents ||
            current.memory.size() >= kBatchEvents) {
            queue.push_back(std::move(current));
            current = Batch{};
            if (!spare.empty()) {
                current.events = std::move(spare.back());
                spare.pop_back();
            } else {
                current.events.reserve(kBatchEvents);
            }
            work_ready.notify_one();
        }
    }

    void finalize() {
        // Leave WAL before writing the summaries: in rollback mode, pages appended to the file
        // are written once and need no journal, where WAL would write them twice.
        db.exec("PRAGMA journal_mode = DELETE");
        // The finished file is on disk before anyone renames it into place.
        if (!options.crash_readable) db.exec("PRAGMA synchronous = FULL");
        db.exec("BEGIN");
        db.exec(kCloseIndexSql);
        std::vector<TrackExtent> extents;
        sql::Statement update(db,
                              "UPDATE tracks SET event_count = ?, start_ns = ?, end_ns = ?, "
                              "max_duration_ns = ? WHERE id = ?");
        for (std::size_t id = 0; id < stats.size(); ++id) {
            const auto& s = stats[id];
            update.bind(1, s.count);
            if (s.count) {
                update.bind(2, s.start_ns);
                update.bind(3, s.end_ns);
            } else {
                update.bind_null(2);
                update.bind_null(3);
            }
            update.bind(4, s.max_duration_ns);
            update.bind(5, static_cast<std::int64_t>(id));
            update.step();
            update.reset();
            extents.push_back({static_cast<int>(id), s.count, s.start_ns, s.end_ns});
        }
        bool left_to_scan = false;  // tracks with events and no summaries yet
        for (std::size_t id = 0; id < stats.size(); ++id) {
            left_to_scan = left_to_scan || (stats[id].count > 0 && !summarised[id]);
        }
        if (in_memory) {
            for (std::size_t id = 0; id < entries.size(); ++id) {
                if (!summarised[id]) summarise(id);
            }
        } else if (left_to_scan) {
            sql::Statement scan(db,
                                "SELECT track, start_ns, end_ns, kind, name_id, id FROM events "
                                "ORDER BY track, start_ns, id");
            std::unique_ptr<TrackSummaryBuilder> builder;
            std::int64_t current_track = -1;
            while (scan.step()) {
                const std::int64_t track = scan.int64(0);
                if (summarised[static_cast<std::size_t>(track)]) continue;
                if (track != current_track) {
                    if (builder) builder->finish();
                    builder = std::make_unique<TrackSummaryBuilder>(db, extents[static_cast<std::size_t>(track)]);
                    current_track = track;
                }
                builder->add(scan.int64(1), scan.int64(2), static_cast<int>(scan.int64(3)),
                             scan.int64(4), scan.int64(5));
            }
            if (builder) builder->finish();
        }
        put_meta("event_count", std::to_string(total_events));
        put_meta("dropped_events", std::to_string(dropped));
        put_meta("complete", "1");
        db.exec("COMMIT");
        db.close();
    }
};

TraceWriter::TraceWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<TraceWriter> TraceWriter::create(const std::string& path) {
    return create(path, TraceWriterOptions{});
}

std::unique_ptr<TraceWriter> TraceWriter::create(const std::string& path,
                                                 const TraceWriterOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->options = options;
    impl->current.events.reserve(kBatchEvents);
    impl->open_database();
    Impl* raw = impl.get();
    impl->thread = std::thread([raw] { raw->run(); });
    return std::unique_ptr<TraceWriter>(new TraceWriter(std::move(impl)));
}

TraceWriter::~TraceWriter() {
    if (!impl_) return;
    if (impl_->thread.joinable()) {
        {
            std::lock_guard lock(impl_->mutex);
            impl_->closing = true;
        }
        impl_->work_ready.notify_all();
        impl_->thread.join();
    }
}

void TraceWriter::set_run_info(const TraceRunInfo& info) {
    std::lock_guard lock(impl_->mutex);
    impl_->run_info = info;
    impl_->run_info_dirty = true;
}

int TraceWriter::add_track(const TrackInfo& track) {
    std::lock_guard lock(impl_->mutex);
    if (impl_->closing) throw RuntimeError(impl_->path + ": add_track after close");
    const int id = impl_->next_track_id++;
    impl_->track_ranks.push_back(track.rank);
    impl_->track_finished.push_back(false);
    impl_->current.tracks.push_back({id, track});
    return id;
}

void TraceWriter::finish_track(int track) {
    std::lock_guard lock(impl_->mutex);
    if (impl_->closing) throw RuntimeError(impl_->path + ": finish_track after close");
    if (track < 0 || track >= impl_->next_track_id) {
        throw RuntimeError(impl_->path + ": finish_track of track " + std::to_string(track) +
                           ", which add_track never returned");
    }
    if (impl_->track_finished[static_cast<std::size_t>(track)]) return;
    impl_->track_finished[static_cast<std::size_t>(track)] = true;
    impl_->current.finished_tracks.push_back(track);
}

void TraceWriter::set_rank_info(int rank, const std::string& device, std::int64_t clock_offset_ns) {
    std::lock_guard lock(impl_->mutex);
    impl_->current.ranks.push_back({rank, device, clock_offset_ns});
}

void TraceWriter::add_event(const TraceEvent& event) {
    std::unique_lock lock(impl_->mutex);
    if (impl_->closing) throw RuntimeError(impl_->path + ": add_event after close");
    if (event.track < 0 || event.track >= impl_->next_track_id) {
        throw RuntimeError(impl_->path + ": event \"" + event.name + "\" names track " +
                           std::to_string(event.track) + ", which add_track never returned");
    }
    if (impl_->track_finished[static_cast<std::size_t>(event.track)]) {
        throw RuntimeError(impl_->path + ": event \"" + event.name + "\" on track " +
                           std::to_string(event.track) + " after finish_track");
    }
    if (!impl_->make_room(lock)) {
        ++impl_->dropped;
        return;
    }
    impl_->current.events.push_back(event);
    ++impl_->queued_events;
    impl_->push_current_if_full();
}

void TraceWriter::add_counter(int /*rank*/, int track, const std::string& name,
                              std::int64_t time_ns, double value) {
    std::unique_lock lock(impl_->mutex);
    if (impl_->closing) throw RuntimeError(impl_->path + ": add_counter after close");
    if (track < 0 || track >= impl_->next_track_id) {
        throw RuntimeError(impl_->path + ": counter \"" + name + "\" names unknown track " +
                           std::to_string(track));
    }
    if (!impl_->make_room(lock)) return;
    impl_->current.counters.push_back({track, name, time_ns, value});
    ++impl_->queued_events;
    impl_->push_current_if_full();
}

void TraceWriter::add_memory_event(const MemoryEvent& event) {
    std::unique_lock lock(impl_->mutex);
    if (impl_->closing) throw RuntimeError(impl_->path + ": add_memory_event after close");
    if (!impl_->make_room(lock)) return;
    impl_->current.memory.push_back(event);
    ++impl_->queued_events;
    impl_->push_current_if_full();
}

void TraceWriter::close() {
    {
        std::lock_guard lock(impl_->mutex);
        if (impl_->closed) return;
        impl_->closed = true;
        impl_->closing = true;
    }
    impl_->work_ready.notify_all();
    if (impl_->thread.joinable()) impl_->thread.join();
    if (impl_->error) std::rethrow_exception(impl_->error);
    impl_->finalize();
}

void TraceWriter::flush() {
    std::unique_lock lock(impl_->mutex);
    if (impl_->closing) return;
    // Hand the partial batch over, then wait until the writer has committed past it.
    if (!impl_->current.events.empty() || !impl_->current.counters.empty() || !impl_->current.memory.empty() ||
        !impl_->current.tracks.empty() || !impl_->current.ranks.empty() ||
        !impl_->current.finished_tracks.empty()) {
        impl_->queue.push_back(std::move(impl_->current));
        impl_->current = Batch{};
    }
    impl_->work_ready.notify_one();
    // Whatever the writer takes next includes everything queued now.
    const std::uint64_t target = impl_->handed_over + 1;
    impl_->committed_cv.wait(lock, [&] {
        return impl_->writer_failed || (impl_->committed >= target && impl_->queue.empty());
    });
}

std::int64_t TraceWriter::dropped_events() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->dropped;
}

const std::string& TraceWriter::path() const { return impl_->path; }

}  // namespace meshwork::profiler
