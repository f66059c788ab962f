#include "profiler/merge/trace_merge.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "profiler/analysis/trace_stats.h"
#include "core/common/error.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// End of the earliest-starting barrier event.
std::optional<std::int64_t> first_barrier_end(const TraceReader& r, const std::string& needle) {
    std::optional<std::pair<std::int64_t, std::int64_t>> best;  // start, end
    const std::string key = lower(needle);
    r.for_each_event([&](const TraceEvent& e) {
        if (e.kind != EventKind::Marker && e.kind != EventKind::Communication) return;
        if (lower(e.name).find(key) == std::string::npos) return;
        if (!best || e.start_ns < best->first) best = {e.start_ns, e.end_ns};
    });
    if (!best) return std::nullopt;
    return best->second;
}

// End of the first communication event of `collective` (None = of any collective; the one
// found is returned through `collective`).
std::optional<std::int64_t> first_collective_end(const TraceReader& r, Collective& collective) {
    std::optional<std::pair<std::int64_t, std::int64_t>> best;
    Collective best_collective = Collective::None;
    r.for_each_event([&](const TraceEvent& e) {
        if (e.kind != EventKind::Communication) return;
        const Collective c = e.collective;
        if (c == Collective::None || (collective != Collective::None && c != collective)) return;
        if (!best || e.start_ns < best->first) {
            best = {e.start_ns, e.end_ns};
            best_collective = c;
        }
    });
    if (!best) return std::nullopt;
    collective = best_collective;
    return best->second;
}

// What the merge needs of one input before it writes anything. Read with a reader of the
// reading thread's own, closed after: 256 open readers would hold 256 SQLite page caches.
struct InputHeader {
    std::string path;
    TraceRunInfo run_info;
    bool complete = true;
    std::vector<TrackRecord> tracks;
    std::vector<RankRecord> ranks;
};

bool imported(const TraceRunInfo& info) { return info.source == "kineto" || info.source == "nsys"; }

void check_same_run(const InputHeader& ref, const InputHeader& other) {
    const auto& a = ref.run_info;
    const auto& b = other.run_info;
    auto refuse = [&](const std::string& field, const std::string& what) {
        throw InputError(other.path, field,
                         "from a different run than " + ref.path + " (" + what +
                             "); pass --allow-mixed to merge anyway");
    };
    auto ra = a.extra.find("run_id"), rb = b.extra.find("run_id");
    if (ra != a.extra.end() && rb != b.extra.end() && ra->second != rb->second) {
        refuse("meta.extra.run_id", "run id " + rb->second + " vs " + ra->second);
    }
    if (!a.layout_json.empty() && !b.layout_json.empty() && a.layout_json != b.layout_json) {
        refuse("meta.layout_json", "the layouts differ");
    }
    if (a.world_size && b.world_size && a.world_size != b.world_size) {
        refuse("meta.world_size", "world size " + std::to_string(b.world_size) + " vs " + std::to_string(a.world_size));
    }
    if (a.source != b.source) refuse("meta.source", "source " + b.source + " vs " + a.source);
}

unsigned thread_count(unsigned requested, std::size_t inputs) {
    const unsigned n = requested ? requested : std::max(1u, std::thread::hardware_concurrency());
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(n, inputs)));
}

// fn(i) for every i in [0, n) on `threads` threads; the failure of the lowest i is rethrown,
// so errors name the same file whatever the threads' timing.
template <class Fn>
void parallel_for(std::size_t n, unsigned threads, Fn fn) {
    std::vector<std::exception_ptr> errors(n);
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i = next++; i < n; i = next++) {
            try {
                fn(i);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    {
        std::vector<std::jthread> pool;
        for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
        work();
    }
    for (auto& e : errors) {
        if (e) std::rethrow_exception(e);
    }
}

// The events and counters of the inputs, read by worker threads (a reader each) ahead of the
// one thread that writes, in input order. Each input's chunks queue up to kChunksAhead; a
// worker starts an input only when it is at most `threads` inputs ahead of the writer. So the
// memory held is about threads × kChunksAhead × kChunkEvents events, whatever the inputs.
class ReadAhead {
public:
    static constexpr std::size_t kChunkEvents = 16384;
    static constexpr std::size_t kChunksAhead = 4;

    struct Chunk {
        std::vector<TraceEvent> events;
        std::vector<CounterSample> counters;
        std::vector<MemoryEvent> memory;
    };

    ReadAhead(const std::vector<std::string>& paths, unsigned threads)
        : paths_(paths), window_(threads), slots_(paths.size()) {
        for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
    }
    ~ReadAhead() {
        {
            std::lock_guard lock(mutex_);
            cancelled_ = true;
        }
        changed_.notify_all();
        workers_.clear();  // joins
    }
    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;

    // The next chunk of input `i` (the writer's current input), false when it has no more;
    // rethrows what reading it threw. Inputs must be taken in order.
    bool next(std::size_t i, Chunk& out) {
        std::unique_lock lock(mutex_);
        if (writer_at_ != i) {
            writer_at_ = i;
            changed_.notify_all();
        }
        Slot& s = slots_[i];
        changed_.wait(lock, [&] { return !s.chunks.empty() || s.done; });
        if (s.chunks.empty()) {
            if (s.error) std::rethrow_exception(s.error);
            return false;
        }
        out = std::move(s.chunks.front());
        s.chunks.pop_front();
        changed_.notify_all();
        return true;
    }

private:
    struct Slot {
        std::deque<Chunk> chunks;
        bool done = false;
        std::exception_ptr error;
    };
    struct Cancelled {};

    void push(std::size_t i, Chunk& chunk) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return cancelled_ || slots_[i].chunks.size() < kChunksAhead; });
        if (cancelled_) throw Cancelled{};
        slots_[i].chunks.push_back(std::move(chunk));
        chunk = Chunk{};
        changed_.notify_all();
    }

    void read(std::size_t i) {
        const TraceReader r = TraceReader::open(paths_[i]);
        Chunk chunk;
        r.for_each_event([&](const TraceEvent& e) {
            chunk.events.push_back(e);
            if (chunk.events.size() >= kChunkEvents) push(i, chunk);
        });
        r.for_each_counter([&](const CounterSample& s) {
            chunk.counters.push_back(s);
            if (chunk.counters.size() >= kChunkEvents) push(i, chunk);
        });
        // Measured memory (format 2), each stack's frames read once.
        std::map<std::int64_t, std::string> stacks;
        r.for_each_memory_event([&](const MemoryEvent& m, std::int64_t stack) {
            chunk.memory.push_back(m);
            if (stack > 0) {
                auto it = stacks.find(stack);
                if (it == stacks.end()) it = stacks.emplace(stack, r.memory_stack(stack)).first;
                chunk.memory.back().frames = it->second;
            }
            if (chunk.memory.size() >= kChunkEvents) push(i, chunk);
        });
        if (!chunk.events.empty() || !chunk.counters.empty() || !chunk.memory.empty()) push(i, chunk);
    }

    void work() {
        for (;;) {
            std::size_t i = 0;
            {
                std::unique_lock lock(mutex_);
                if (next_input_ >= slots_.size()) return;
                i = next_input_++;
                changed_.wait(lock, [&] { return cancelled_ || i < writer_at_ + window_; });
                if (cancelled_) return;
            }
            std::exception_ptr error;
            try {
                read(i);
            } catch (const Cancelled&) {
                return;
            } catch (...) {
                error = std::current_exception();
            }
            std::lock_guard lock(mutex_);
            slots_[i].done = true;
            slots_[i].error = error;
            changed_.notify_all();
        }
    }

    const std::vector<std::string>& paths_;
    const std::size_t window_;  // inputs read at once, at most this far ahead of the writer
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Slot> slots_;
    std::size_t next_input_ = 0;  // the next input a worker takes
    std::size_t writer_at_ = 0;   // the input the writer is on
    bool cancelled_ = false;
    std::vector<std::jthread> workers_;  // last: started once the rest is built
};

}  // namespace

MergeResult merge_traces(const std::vector<std::string>& inputs, TraceWriter& out, const MergeOptions& options) {
    if (inputs.empty()) throw InputError("<flags>", "inputs", "no traces to merge");
    const unsigned threads = thread_count(options.threads, inputs.size());
    std::vector<InputHeader> headers(inputs.size());
    parallel_for(inputs.size(), threads, [&](std::size_t i) {
        const TraceReader r = TraceReader::open(inputs[i]);
        headers[i] = {inputs[i], r.run_info(), r.complete(), r.tracks(), r.ranks()};
    });
    MergeResult result;
    std::map<int, std::string> owner;  // rank -> file
    auto override_of = [&](std::size_t i) {
        return i < options.rank_override.size() ? options.rank_override[i] : -1;
    };
    for (std::size_t i = 0; i < headers.size(); ++i) {
        if (i > 0 && !options.allow_mixed) check_same_run(headers[0], headers[i]);
        MergeInputReport rep;
        rep.file = inputs[i];
        rep.complete = headers[i].complete;
        std::set<int> ranks;
        for (const auto& t : headers[i].tracks) ranks.insert(t.info.rank);
        if (override_of(i) >= 0) {
            if (ranks.size() > 1) {
                throw InputError(inputs[i], "tracks.rank", "holds several ranks; a rank cannot be given to it");
            }
            ranks = {override_of(i)};
        }
        for (int r : ranks) {
            auto [it, fresh] = owner.emplace(r, inputs[i]);
            if (!fresh) {
                throw InputError(inputs[i], "tracks.rank",
                                 "rank " + std::to_string(r) + " is also in " + it->second +
                                     "; each rank must come from one file");
            }
            rep.ranks.push_back(r);
        }
        result.inputs.push_back(rep);
    }

    bool all_imported = true, all_starts = true;
    for (const auto& h : headers) {
        all_imported = all_imported && imported(h.run_info);
        all_starts = all_starts && h.run_info.start_time_unix_ns != 0;
    }
    // Offsets. Meshwork runs: barrier ends made equal to the first file's, else wall-clock
    // start times. Imported profiles: absolute start times, else the first common collective
    // (the first file's first collective kind). Each input is scanned on its own thread.
    std::vector<std::optional<std::int64_t>> anchor(inputs.size());
    auto all_anchored = [&] {
        return std::all_of(anchor.begin(), anchor.end(), [](const auto& a) { return a.has_value(); });
    };
    std::string anchor_kind = "none";
    if (all_imported && all_starts) {
        anchor_kind = "start-time";
    } else if (all_imported) {
        Collective collective = Collective::None;
        anchor[0] = first_collective_end(TraceReader::open(inputs[0]), collective);
        if (anchor[0]) {
            parallel_for(inputs.size() - 1, threads, [&](std::size_t k) {
                Collective c = collective;
                anchor[k + 1] = first_collective_end(TraceReader::open(inputs[k + 1]), c);
            });
        }
        anchor_kind = all_anchored() ? "collective" : "none";
    } else {
        parallel_for(inputs.size(), threads, [&](std::size_t i) {
            anchor[i] = first_barrier_end(TraceReader::open(inputs[i]), options.barrier_name);
        });
        anchor_kind = all_anchored() ? "barrier" : all_starts ? "start-time" : "none";
    }
    for (std::size_t i = 0; i < headers.size(); ++i) {
        auto& rep = result.inputs[i];
        if (i == 0) {
            rep.alignment = "reference";
        } else if (anchor_kind == "barrier" || anchor_kind == "collective") {
            rep.offset_ns = *anchor[0] - *anchor[i];
            rep.alignment = anchor_kind;
        } else if (anchor_kind == "start-time") {
            rep.offset_ns = headers[i].run_info.start_time_unix_ns - headers[0].run_info.start_time_unix_ns;
            rep.alignment = "start-time";
        } else {
            rep.alignment = "none";
        }
    }
    // Imported files start at their own first event; with absolute starts, the merged trace
    // starts at the earliest of them.
    if (anchor_kind == "start-time") {
        std::int64_t earliest = 0;
        for (const auto& rep : result.inputs) earliest = std::min(earliest, rep.offset_ns);
        for (auto& rep : result.inputs) rep.offset_ns -= earliest;
    }

    TraceRunInfo info = headers[0].run_info;
    if (anchor_kind == "start-time") {
        for (const auto& h : headers) info.start_time_unix_ns = std::min(info.start_time_unix_ns, h.run_info.start_time_unix_ns);
    }
    int world = info.world_size;
    for (const auto& [rank, file] : owner) world = std::max(world, rank + 1);
    info.world_size = world;
    info.extra["merged_from_files"] = std::to_string(inputs.size());
    out.set_run_info(info);
    result.world_size = world;

    // The inputs in order, each read ahead on a worker thread; each input's tracks are
    // finished once its events are written, so the writer keeps no copy of them until close.
    ReadAhead reads(inputs, threads);
    ReadAhead::Chunk chunk;
    for (std::size_t i = 0; i < headers.size(); ++i) {
        const InputHeader& h = headers[i];
        const std::int64_t off = result.inputs[i].offset_ns;
        const int forced = override_of(i);
        auto rank_of = [&](int rank) { return forced >= 0 ? forced : rank; };
        std::map<int, std::pair<int, int>> track_map;  // input track id -> output id, its rank
        for (const auto& t : h.tracks) {
            TrackInfo ti = t.info;
            ti.rank = rank_of(ti.rank);
            track_map[t.id] = {out.add_track(ti), ti.rank};
        }
        for (const auto& rk : h.ranks) out.set_rank_info(rank_of(rk.rank), rk.device, rk.clock_offset_ns + off);
        while (reads.next(i, chunk)) {
            for (auto& e : chunk.events) {
                e.rank = rank_of(e.rank);
                e.track = track_map.at(e.track).first;
                e.start_ns += off;
                e.end_ns += off;
                out.add_event(e);
            }
            result.inputs[i].events += static_cast<std::int64_t>(chunk.events.size());
            for (const auto& s : chunk.counters) {
                auto it = track_map.find(s.track);
                if (it == track_map.end()) continue;
                out.add_counter(it->second.second, it->second.first, s.name, s.time_ns + off, s.value);
            }
            for (auto& m : chunk.memory) {
                m.rank = rank_of(m.rank);
                m.time_ns += off;
                out.add_memory_event(m);
            }
        }
        for (const auto& [id, mapped] : track_map) out.finish_track(mapped.first);
        result.events += result.inputs[i].events;
    }
    return result;
}

}  // namespace meshwork::profiler
