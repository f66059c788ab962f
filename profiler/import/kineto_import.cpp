#include "import/kineto_import.h"

#include <cmath>
#include <map>
#include <unordered_map>
#include <vector>

#include "analysis/event_classify.h"
#include "analysis/range_context.h"
#include "common/error.h"
#include "import/json_event_stream.h"
#include "import/text_input.h"

namespace meshwork::profiler {

namespace {

// |ts| in microseconds beyond this would overflow int64 nanoseconds.
constexpr double kMaxTimeUs = 9.0e12;

// One "X" event as kept until tracks are known.
struct RawEvent {
    bool device = false;
    std::int64_t pid = 0, tid = 0;
    EventKind kind = EventKind::Marker;
    std::string name;
    std::int64_t start_ns = 0, end_ns = 0;
    std::int64_t correlation = 0, external_id = 0;
    std::int64_t bytes = 0;
    int group_size = 0;
    bool is_step_range = false;
};

struct CommInfo {
    std::int64_t bytes = 0;
    int group_size = 0;
};

int dtype_bytes_of(const std::string& dtype) {
    static const std::map<std::string, int> kSizes = {
        {"Float", 4}, {"float", 4}, {"Half", 2}, {"BFloat16", 2}, {"Double", 8}, {"Int", 4},
        {"Long", 8}, {"Short", 2}, {"Byte", 1}, {"Char", 1}, {"Bool", 1}, {"Float8_e4m3fn", 1},
        {"Float8_e5m2", 1}, {"c10::BFloat16", 2}, {"c10::Half", 2}};
    auto it = kSizes.find(dtype);
    return it == kSizes.end() ? 0 : it->second;
}

class KinetoReader {
public:
    KinetoReader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void bad(std::size_t i, const std::string& field, const std::string& msg) const {
        throw InputError(file_, "traceEvents[" + std::to_string(i) + "]" + (field.empty() ? "" : "." + field), msg);
    }

    // ts and dur: microseconds, finite and in range.
    std::int64_t micros_to_ns(std::size_t i, const Json& ev, const char* key, bool required) const {
        auto it = ev.find(key);
        if (it == ev.end()) {
            if (required) bad(i, key, "required field is missing");
            return 0;
        }
        if (!it->is_number()) bad(i, key, "expected a number, found " + json_type_name(*it));
        const double us = it->get<double>();
        if (!std::isfinite(us) || std::fabs(us) > kMaxTimeUs) bad(i, key, it->dump() + " is out of range");
        return std::llround(us * 1000.0);
    }

    // pid/tid: integers or strings (Kineto writes "stream 7" style names for some lanes).
    std::int64_t lane_id(std::size_t i, const Json& ev, const char* key) {
        auto it = ev.find(key);
        if (it == ev.end()) return 0;
        if (it->is_number_integer()) return it->get<std::int64_t>();
        if (it->is_number_float()) {
            const double d = it->get<double>();
            if (!std::isfinite(d) || std::fabs(d) > 9.0e15) bad(i, key, it->dump() + " is out of range");
            return static_cast<std::int64_t>(d);
        }
        if (it->is_string()) {
            auto [pos, inserted] = string_lanes_.try_emplace(it->get<std::string>(),
                                                             -static_cast<std::int64_t>(string_lanes_.size()) - 1);
            return pos->second;
        }
        bad(i, key, "expected an integer or a string, found " + json_type_name(*it));
    }

    static std::int64_t arg_int(const Json& args, const char* key) {
        auto it = args.find(key);
        if (it == args.end()) return 0;
        if (it->is_number_integer()) return std::max<std::int64_t>(0, it->get<std::int64_t>());
        if (it->is_number_float()) {
            const double d = it->get<double>();
            return std::isfinite(d) && d >= 0 && d < 9.0e15 ? static_cast<std::int64_t>(d) : 0;
        }
        return 0;
    }

    static std::optional<CommInfo> comm_info(const Json& args) {
        if (!args.contains("In msg nelems") && !args.contains("Out msg nelems")) return std::nullopt;
        CommInfo c;
        const std::int64_t n = std::max(arg_int(args, "In msg nelems"), arg_int(args, "Out msg nelems"));
        int size = 0;
        if (auto it = args.find("dtype"); it != args.end() && it->is_string()) size = dtype_bytes_of(it->get<std::string>());
        if (n > 0 && size > 0 && n < (std::int64_t{1} << 56)) c.bytes = n * size;
        c.group_size = static_cast<int>(std::min<std::int64_t>(arg_int(args, "Group size"), 1 << 24));
        return c;
    }

    void on_event(std::size_t i, const Json& ev) {
        if (!ev.is_object()) bad(i, "", "expected an object, found " + json_type_name(ev));
        auto ph_it = ev.find("ph");
        if (ph_it == ev.end() || !ph_it->is_string()) bad(i, "ph", "expected a string");
        const std::string ph = ph_it->get<std::string>();
        auto name_it = ev.find("name");
        std::string name;
        if (name_it != ev.end()) {
            if (!name_it->is_string()) bad(i, "name", "expected a string, found " + json_type_name(*name_it));
            name = name_it->get<std::string>();
        }
        static const Json kEmpty = Json::object();
        const Json* args = &kEmpty;
        if (auto a = ev.find("args"); a != ev.end()) {
            if (!a->is_object()) bad(i, "args", "expected an object, found " + json_type_name(*a));
            args = &*a;
        }
        if (ph == "C") {
            const std::int64_t t = micros_to_ns(i, ev, "ts", true);
            for (auto it = args->begin(); it != args->end(); ++it) {
                if (it.value().is_number() && std::isfinite(it.value().get<double>())) {
                    counters_.push_back({lane_id(i, ev, "pid"), name + "." + it.key(), t, it.value().get<double>()});
                }
            }
            return;
        }
        if (ph != "X") {
            ++skipped_;
            return;
        }
        std::string cat;
        if (auto c = ev.find("cat"); c != ev.end()) {
            if (!c->is_string()) bad(i, "cat", "expected a string, found " + json_type_name(*c));
            cat = c->get<std::string>();
        }
        RawEvent r;
        r.name = name;
        r.pid = lane_id(i, ev, "pid");
        r.tid = lane_id(i, ev, "tid");
        r.start_ns = micros_to_ns(i, ev, "ts", true);
        const std::int64_t dur = micros_to_ns(i, ev, "dur", false);
        if (dur < 0) bad(i, "dur", "negative duration");
        r.end_ns = r.start_ns + dur;
        r.correlation = arg_int(*args, "correlation");
        r.external_id = arg_int(*args, "External id");
        if (cat == "kernel") {
            r.device = true;
            r.kind = event_kind_of_kernel(name);
        } else if (cat == "gpu_memcpy") {
            r.device = true;
            r.kind = EventKind::Memcpy;
        } else if (cat == "gpu_memset") {
            r.device = true;
            r.kind = EventKind::Memset;
        } else if (cat == "gpu_user_annotation") {
            r.device = true;
            r.kind = EventKind::Marker;
        } else {
            r.kind = EventKind::Marker;
            r.is_step_range = name.rfind("ProfilerStep#", 0) == 0;
        }
        if (r.device) {
            if (auto d = args->find("device"); d != args->end() && d->is_number_integer()) r.pid = d->get<std::int64_t>();
            if (auto s = args->find("stream"); s != args->end() && s->is_number_integer()) r.tid = s->get<std::int64_t>();
        }
        if (auto c = comm_info(*args)) {
            if (r.device) {
                r.bytes = c->bytes;
                r.group_size = c->group_size;
            } else if (r.external_id) {
                comm_by_external_[r.external_id] = *c;
            }
        }
        if (!r.device && r.correlation) launch_by_correlation_[r.correlation] = {r.tid, r.start_ns};
        if (!r.device) ranges_.add_range(r.tid, r.start_ns, r.end_ns, name);
        events_.push_back(std::move(r));
    }

    ImportResult write(TraceSink& sink, const Json& top, const ImportOptions& options) {
        ImportResult out;
        out.format = "kineto";
        out.skipped = skipped_;
        int rank = options.rank;
        int world = 0;
        if (auto d = top.find("distributedInfo"); d != top.end() && d->is_object()) {
            if (rank < 0) rank = static_cast<int>(std::clamp<std::int64_t>(arg_int(*d, "rank"), 0, 1 << 24));
            world = static_cast<int>(std::clamp<std::int64_t>(arg_int(*d, "world_size"), 0, 1 << 24));
        }
        if (rank < 0) rank = rank_from_file_name(file_);
        if (rank < 0) rank = 0;
        out.rank = rank;
        out.world_size = world;
        TraceRunInfo info;
        info.source = "kineto";
        info.tool_version = "meshwork " MESHWORK_VERSION;
        info.clock_domain = "host-realtime";
        info.world_size = world;
        if (auto b = top.find("baseTimeNanoseconds"); b != top.end() && b->is_number_integer()) {
            info.start_time_unix_ns = b->get<std::int64_t>();
        }
        info.extra["imported_from"] = file_;
        sink.set_run_info(info);

        ranges_.finalize();
        // Device lanes with an NCCL kernel are communication streams.
        std::map<std::pair<std::int64_t, std::int64_t>, bool> device_lanes, host_lanes;
        for (const auto& e : events_) {
            auto& lanes = e.device ? device_lanes : host_lanes;
            bool& comm = lanes[{e.pid, e.tid}];
            comm = comm || e.kind == EventKind::Communication;
        }
        std::map<std::pair<std::int64_t, std::int64_t>, int> track_of_device, track_of_host;
        int comm_index = 0, compute_index = 0;
        for (const auto& [lane, comm] : device_lanes) {
            TrackInfo t;
            t.rank = rank;
            t.kind = comm ? TrackKind::CommStream : TrackKind::ComputeStream;
            t.index = comm ? comm_index++ : compute_index++;
            t.name = "gpu " + std::to_string(lane.first) + " stream " + std::to_string(lane.second);
            track_of_device[lane] = sink.add_track(t);
        }
        int host_index = 0;
        for (const auto& [lane, comm] : host_lanes) {
            TrackInfo t;
            t.rank = rank;
            t.kind = TrackKind::Host;
            t.index = host_index++;
            t.name = "host " + std::to_string(lane.first) + "/" + std::to_string(lane.second);
            track_of_host[lane] = sink.add_track(t);
        }
        for (auto& r : events_) {
            TraceEvent e;
            e.rank = rank;
            e.track = r.device ? track_of_device[{r.pid, r.tid}] : track_of_host[{r.pid, r.tid}];
            e.kind = r.kind;
            e.name = std::move(r.name);
            e.start_ns = r.start_ns;
            e.end_ns = r.end_ns;
            e.correlation_id = r.correlation;
            e.bytes = r.bytes;
            e.group_size = r.group_size;
            if (r.device && e.kind == EventKind::Communication && e.bytes == 0 && r.external_id) {
                if (auto c = comm_by_external_.find(r.external_id); c != comm_by_external_.end()) {
                    e.bytes = c->second.bytes;
                    e.group_size = c->second.group_size;
                }
            }
            RangeContext ctx;
            if (r.device) {
                auto l = launch_by_correlation_.find(r.correlation);
                ctx = l != launch_by_correlation_.end() ? ranges_.lookup(l->second.first, l->second.second)
                                                        : ranges_.lookup_any(r.start_ns);
            } else {
                ctx = ranges_.lookup(r.tid, r.start_ns);
            }
            e.step = ctx.step;
            e.micro_batch = ctx.micro_batch;
            e.layer = ctx.layer;
            sink.add_event(e);
            ++out.events;
        }
        std::map<std::int64_t, int> memory_tracks;
        for (const auto& c : counters_) {
            auto it = memory_tracks.find(c.pid);
            if (it == memory_tracks.end()) {
                TrackInfo t{rank, TrackKind::Memory, static_cast<int>(memory_tracks.size()),
                            "counters " + std::to_string(c.pid)};
                it = memory_tracks.emplace(c.pid, sink.add_track(t)).first;
            }
            sink.add_counter(rank, it->second, c.name, c.time_ns, c.value);
        }
        return out;
    }

private:
    struct Counter {
        std::int64_t pid;
        std::string name;
        std::int64_t time_ns;
        double value;
    };
    std::string file_;
    std::vector<RawEvent> events_;
    std::vector<Counter> counters_;
    std::unordered_map<std::string, std::int64_t> string_lanes_;
    std::unordered_map<std::int64_t, CommInfo> comm_by_external_;
    std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> launch_by_correlation_;
    RangeContextMap ranges_;
    std::int64_t skipped_ = 0;
};

}  // namespace

ImportResult import_kineto_json(const std::string& path, TraceSink& sink, const ImportOptions& options) {
    const std::string text = read_text_maybe_gzip(path);
    KinetoReader reader(path);
    const Json top = stream_json_array(text, path, "traceEvents",
                                       [&](std::size_t i, const Json& ev) { reader.on_event(i, ev); });
    return reader.write(sink, top, options);
}

}  // namespace meshwork::profiler
