// read_kineto_file: simdjson On-Demand over the whole (gunzipped) text, one pass, no DOM.
//
// On-Demand is compiled for one instruction set (simdjson's "builtin" implementation, chosen
// by the compiler flags), unlike simdjson's DOM API, which dispatches at run time. On x86-64
// this file is therefore compiled twice (CMakeLists.txt): as is, and with AVX2 as
// kineto_parse_avx2.cpp, which defines MESHWORK_KINETO_PARSE_ENTRY; kineto_dispatch.cpp picks
// one by the CPU. Everything here is in an anonymous namespace, so the two copies never meet.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "profiler/analysis/event_classify.h"
#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "profiler/import/kineto_categories.h"
#include "profiler/import/kineto_file.h"
#include "profiler/import/kineto_time.h"
#include "profiler/import/text_input.h"

namespace meshwork::profiler {

namespace od = simdjson::ondemand;

// read_text_maybe_gzip leaves this much spare capacity after the text: simdjson parses in place.
static_assert(kTextPaddingBytes >= simdjson::SIMDJSON_PADDING);

namespace {

const char* kHowToRecord =
    "record one with torch.profiler.profile(...) and prof.export_chrome_trace(path) or "
    "torch.profiler.tensorboard_trace_handler(dir)";

int dtype_bytes_of(std::string_view dtype) {
    // PyTorch's scalar type names as record_param_comms writes them (c10 ScalarType).
    static const std::map<std::string, int, std::less<>> kSizes = {{"Float", 4},
                                                                   {"float", 4},
                                                                   {"Half", 2},
                                                                   {"BFloat16", 2},
                                                                   {"Double", 8},
                                                                   {"Int", 4},
                                                                   {"Long", 8},
                                                                   {"Short", 2},
                                                                   {"Byte", 1},
                                                                   {"Char", 1},
                                                                   {"Bool", 1},
                                                                   {"Float8_e4m3fn", 1},
                                                                   {"Float8_e5m2", 1},
                                                                   {"Float8_e4m3fnuz", 1},
                                                                   {"Float8_e5m2fnuz", 1},
                                                                   {"ComplexFloat", 8},
                                                                   {"ComplexDouble", 16},
                                                                   {"UInt16", 2},
                                                                   {"UInt32", 4},
                                                                   {"UInt64", 8}};
    if (dtype.rfind("c10::", 0) == 0) dtype.remove_prefix(5);
    auto it = kSizes.find(dtype);
    return it == kSizes.end() ? 0 : it->second;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

std::string error_text(simdjson::error_code e) {
    switch (e) {
        case simdjson::UTF8_ERROR:
            return "ill-formed UTF-8 in the JSON text";
        case simdjson::DEPTH_ERROR:
            return "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
        case simdjson::NUMBER_ERROR:
            return "malformed JSON: a number is not valid JSON (NaN or Infinity?)";
        case simdjson::T_ATOM_ERROR:
        case simdjson::F_ATOM_ERROR:
        case simdjson::N_ATOM_ERROR:
            return "malformed JSON: an invalid literal (NaN or Infinity are not JSON)";
        case simdjson::UNCLOSED_STRING:
            return "malformed JSON: a string is not closed";
        case simdjson::TAPE_ERROR:
        case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
            return "malformed JSON: unbalanced or truncated";
        default:
            return std::string("malformed JSON: ") + simdjson::error_message(e);
    }
}

class Parser {
  public:
    explicit Parser(std::string path) { file_.path = std::move(path); }

    KinetoFile run() {
        text_ = read_text_maybe_gzip(file_.path);
        if (text_.size() >= 3 && text_.compare(0, 3, "\xEF\xBB\xBF") == 0)
            text_.replace(0, 3, "   ");  // UTF-8 BOM
        if (auto e = parser_.allocate(text_.size(), kMaxJsonDepth)) fail("", error_text(e));
        od::document doc;
        if (auto e = parser_
                         .iterate(simdjson::padded_string_view(text_.data(), text_.size(),
                                                               text_.capacity()))
                         .get(doc)) {
            fail("", error_text(e));
        }
        od::json_type type{};
        if (auto e = doc.type().get(type)) fail("", error_text(e));
        if (type == od::json_type::array) {
            // The Trace Event Format's "JSON Array Format": the events alone.
            od::array arr;
            check(doc.get_array().get(arr), "");
            read_events(arr);
            saw_events_ = true;
        } else if (type == od::json_type::object) {
            od::object top;
            check(doc.get_object().get(top), "");
            read_top(top);
        } else {
            fail("",
                 "expected a JSON object at the top level (a profiler trace has traceEvents[])");
        }
        if (!saw_events_) not_a_trace();
        if (complete_events_ == 0) {
            fail("traceEvents",
                 "holds no events with a duration: an empty profiler trace (was the profiler "
                 "stopped before any step ran?); " +
                     std::string(kHowToRecord));
        }
        return std::move(file_);
    }

  private:
    [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
        throw InputError(file_.path, field, msg);
    }
    void check(simdjson::error_code e, const std::string& field) const {
        if (e) fail(field, error_text(e));
    }
    // The field's path is only built on failure: checks run for every value of every event.
    void check_at(simdjson::error_code e, std::size_t i, const char* key = nullptr) const {
        if (e) fail(at(i, key), error_text(e));
    }
    std::string at(std::size_t i, const char* key = nullptr) const {
        std::string s = "traceEvents[" + std::to_string(i) + "]";
        if (key) s += std::string(".") + key;
        return s;
    }

    // Not a profiler trace: say what it is.
    [[noreturn]] void not_a_trace() const {
        if (top_keys_.count("nodes")) {
            fail("",
                 "a PyTorch execution trace (Chakra, nodes[]), not a profiler trace: it has the "
                 "operator "
                 "graph but no timings; " +
                     std::string(kHowToRecord));
        }
        if (top_keys_.count("segments") || top_keys_.count("device_traces")) {
            fail("",
                 "a PyTorch CUDA memory snapshot (segments/device_traces), not a profiler trace; " +
                     std::string(kHowToRecord));
        }
        fail("traceEvents", "missing: not a PyTorch profiler or Chrome trace (no traceEvents[]); " +
                                std::string(kHowToRecord));
    }

    void read_top(od::object& top) {
        for (auto field_result : top) {
            od::field field;
            check(std::move(field_result).get(field), "");
            std::string_view key;
            check(field.unescaped_key().get(key), "");
            top_keys_.emplace(key);
            od::value v = field.value();
            if (key == "traceEvents") {
                od::array arr;
                if (v.get_array().get(arr)) fail("traceEvents", "expected an array");
                read_events(arr);
                saw_events_ = true;
            } else if (key == "baseTimeNanoseconds") {
                std::int64_t base = 0;
                if (v.get_int64().get(base) || base < 0)
                    fail("baseTimeNanoseconds", "expected a non-negative integer");
                file_.base_time_ns = base;
            } else if (key == "displayTimeUnit") {
                std::string_view unit;
                // A display preference ("ms" or "ns" by the format): it never changes what ts
                // means, so any value is kept, none refused.
                if (!v.get_string().get(unit)) file_.display_time_unit = unit;
            } else if (key == "distributedInfo") {
                read_distributed(v);
            } else if (key == "deviceProperties") {
                read_devices(v);
            }
        }
    }

    void read_distributed(od::value& v) {
        od::object obj;
        if (v.get_object().get(obj)) fail("distributedInfo", "expected an object");
        for (auto fr : obj) {
            od::field f;
            check(std::move(fr).get(f), "distributedInfo");
            std::string_view key;
            check(f.unescaped_key().get(key), "distributedInfo");
            if (key == "rank" || key == "world_size") {
                std::int64_t n = 0;
                if (f.value().get_int64().get(n) || n < 0 || n > (1 << 24)) {
                    fail("distributedInfo." + std::string(key),
                         "expected an integer from 0 to 16777216");
                }
                (key == "rank" ? file_.rank : file_.world_size) = static_cast<int>(n);
            } else if (key == "backend") {
                std::string_view s;
                if (!f.value().get_string().get(s)) file_.backend = s;
            }
        }
    }

    void read_devices(od::value& v) {
        od::array arr;
        if (v.get_array().get(arr)) return;  // informational only
        for (auto dr : arr) {
            od::object d;
            if (dr.get_object().get(d)) continue;
            for (auto fr : d) {
                od::field f;
                if (std::move(fr).get(f)) break;
                std::string_view key;
                if (f.unescaped_key().get(key)) break;
                std::string_view s;
                if (key == "name" && file_.device_name.empty() && !f.value().get_string().get(s))
                    file_.device_name = s;
            }
        }
    }

    // A lane id: an integer, or a string ("Spans", "stream 7") mapped to a stable negative id.
    std::int64_t lane_id(od::value& v, std::size_t i, const char* key) {
        od::json_type t{};
        check_at(v.type().get(t), i, key);
        if (t == od::json_type::number) {
            std::int64_t n = 0;
            if (!v.get_int64().get(n)) return n;
            double d = 0;
            if (v.get_double().get(d) || !std::isfinite(d) || std::fabs(d) > 9.0e15) {
                fail(at(i, key), "out of range");
            }
            return static_cast<std::int64_t>(d);
        }
        if (t == od::json_type::string) {
            std::string_view s;
            check_at(v.get_string().get(s), i, key);
            auto [pos, fresh] = string_lanes_.try_emplace(
                std::string(s), -static_cast<std::int64_t>(string_lanes_.size()) - 1);
            return pos->second;
        }
        fail(at(i, key), "expected an integer or a string");
    }

    std::int64_t time_ns(od::value& v, std::size_t i, const char* key) {
        std::string_view raw;
        od::json_type t{};
        check_at(v.type().get(t), i, key);
        if (t != od::json_type::number) fail(at(i, key), "expected a number of microseconds");
        raw = v.raw_json_token();
        while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' ||
                                raw.back() == '\t')) {
            raw.remove_suffix(1);
        }
        const auto ns = micros_text_to_ns(raw);
        if (!ns) fail(at(i, key), std::string(raw) + " is out of range (or not a finite number)");
        return *ns;
    }

    static std::int64_t non_negative(od::value& v) {
        std::int64_t n = 0;
        if (!v.get_int64().get(n)) return std::max<std::int64_t>(n, 0);
        std::uint64_t u = 0;
        if (!v.get_uint64().get(u)) return u > (1ULL << 62) ? 0 : static_cast<std::int64_t>(u);
        double d = 0;
        if (!v.get_double().get(d) && std::isfinite(d) && d >= 0 && d < 9.0e15)
            return static_cast<std::int64_t>(d);
        return 0;
    }

    struct Args {
        std::int64_t correlation = 0, external_id = 0, device = -1, stream = -1, bytes = 0;
        std::int64_t in_nelems = 0, out_nelems = 0, group_size = 0;
        int dtype_bytes = 0;
        bool has_comm = false;
        // A [memory] instant's args ("Addr", "Bytes", "Total Allocated", "Total Reserved",
        // "Device Id"); has_memory once "Bytes" was read.
        std::int64_t mem_addr = 0, mem_bytes = 0, mem_allocated = 0, mem_reserved = 0, mem_device = -1;
        bool has_memory = false, memory_bad = false;
        std::string group, collective;
    };

    // Calls fn(key, value) for each member of traceEvents[i].args.
    template <class Fn>
    void for_each_arg(od::value& v, std::size_t i, Fn&& fn) {
        od::object obj;
        if (v.get_object().get(obj)) fail(at(i, "args"), "expected an object");
        for (auto fr : obj) {
            od::field f;
            check_at(std::move(fr).get(f), i, "args");
            std::string_view key;
            check_at(f.unescaped_key().get(key), i, "args");
            od::value val = f.value();
            fn(key, val);
        }
    }

    void read_args(od::value& v, std::size_t i, Args& a) {
        for_each_arg(v, i, [&](std::string_view key, od::value& val) {
            if (key == "correlation")
                a.correlation = non_negative(val);
            else if (iequals(key, "External id"))
                a.external_id = non_negative(val);
            else if (key == "device")
                a.device = non_negative(val);
            else if (key == "stream")
                a.stream = non_negative(val);
            else if (key == "bytes" || key == "size")
                a.bytes = non_negative(val);
            else if (key == "Addr" || key == "Bytes" || key == "Total Allocated" || key == "Total Reserved" ||
                     key == "Device Id") {
                std::int64_t n = 0;
                if (val.get_int64().get(n)) {
                    a.memory_bad = true;  // not an integer: the event is not kept
                } else if (key == "Addr") {
                    a.mem_addr = n;
                } else if (key == "Bytes") {
                    a.mem_bytes = n;
                    a.has_memory = true;
                } else if (key == "Total Allocated") {
                    a.mem_allocated = n;
                } else if (key == "Total Reserved") {
                    a.mem_reserved = n;
                } else {
                    a.mem_device = n;
                }
            } else if (key == "In msg nelems") {
                a.in_nelems = non_negative(val);
                a.has_comm = true;
            } else if (key == "Out msg nelems") {
                a.out_nelems = non_negative(val);
                a.has_comm = true;
            } else if (key == "Group size") {
                a.group_size = non_negative(val);
                a.has_comm = true;
            } else if (key == "dtype") {
                std::string_view s;
                if (!val.get_string().get(s)) a.dtype_bytes = dtype_bytes_of(s);
            } else if (key == "Process Group Name") {
                std::string_view s;
                if (!val.get_string().get(s)) a.group = s;
                a.has_comm = true;
            } else if (key == "Collective name") {
                std::string_view s;
                if (!val.get_string().get(s)) a.collective = s;
                a.has_comm = true;
            }
        });
    }

    void read_events(od::array& arr) {
        std::size_t i = 0;
        for (auto er : arr) {
            od::value ev;
            check_at(std::move(er).get(ev), i);
            read_event(ev, i);
            ++i;
        }
    }

    // Descends into a value that should have been an object, so that nesting beyond the
    // limit is reported as such rather than as a type error.
    void probe(od::value& v, int depth, std::size_t i) {
        if (depth > kMaxJsonDepth) fail(at(i), error_text(simdjson::DEPTH_ERROR));
        od::json_type t{};
        check_at(v.type().get(t), i);
        if (t == od::json_type::array) {
            od::array a;
            check_at(v.get_array().get(a), i);
            for (auto er : a) {
                od::value x;
                check_at(std::move(er).get(x), i);
                probe(x, depth + 1, i);
            }
        }
    }

    // The fields of one traceEvents[i], as read; the strings point into the parsed buffer.
    struct Fields {
        std::string_view ph, cat, name;
        bool has_ph = false, has_ts = false, has_dur = false, has_id = false;
        std::int64_t ts = 0, dur = 0, pid = 0, tid = 0, id = 0;
        Args args;
        std::vector<std::pair<std::string, double>> counter_values;
    };

    void read_event(od::value& ev, std::size_t i) {
        od::object obj;
        if (ev.get_object().get(obj)) {
            probe(ev, 3, i);
            fail(at(i), "expected an object");
        }
        Fields f;
        read_fields(obj, i, f);
        if (!f.has_ph) fail(at(i, "ph"), "required field is missing");
        if (f.ph == "M") return add_metadata(f);
        if (f.ph == "C") return add_counters(f, i);
        if (f.ph == "s" || f.ph == "f" || f.ph == "t") return add_flow(f);
        if (f.ph == "B" || f.ph == "E") return add_begin_or_end(f, i);
        if (f.ph == "i" && f.name == "[memory]" && f.has_ts && f.args.has_memory) return add_memory(f, i);
        if (f.ph != "X") {
            ++file_.skipped;  // instants, async and object events carry no duration on a lane
            return;
        }
        if (!f.has_ts) fail(at(i, "ts"), "required field is missing");
        if (f.has_dur && f.dur < 0) fail(at(i, "dur"), "negative duration");
        if (f.ts + f.dur > kMaxTraceTimeNs) fail(at(i, "dur"), "ends past the latest time a trace holds (2^62 ns)");
        add_complete(f.cat, f.name, f.pid, f.tid, f.ts, f.ts + f.dur, f.args);
    }

    // Byte counts within +-2^62 (as the trace store keeps them), totals not negative, a device
    // index from -1 (the host) to 65535.
    void add_memory(const Fields& f, std::size_t i) {
        constexpr std::int64_t kMaxBytes = (std::int64_t{1} << 62) - 1;
        const auto& a = f.args;
        if (a.memory_bad) fail(at(i, "args"), "a [memory] event's Addr, Bytes, totals and Device Id must be integers");
        if (a.mem_bytes < -kMaxBytes || a.mem_bytes > kMaxBytes) fail(at(i, "args.Bytes"), "out of range");
        if (a.mem_allocated < 0 || a.mem_allocated > kMaxBytes) fail(at(i, "args.Total Allocated"), "out of range");
        if (a.mem_reserved < 0 || a.mem_reserved > kMaxBytes) fail(at(i, "args.Total Reserved"), "out of range");
        if (a.mem_device < -1 || a.mem_device > 65535) fail(at(i, "args.Device Id"), "expected -1 (host) to 65535");
        file_.memory.push_back({f.ts, a.mem_addr, a.mem_bytes, a.mem_allocated, a.mem_reserved, a.mem_device});
    }

    // One pass over the members, in the file's order: "args" is read as the phase seen so far
    // asks (a counter's values, a metadata name, or an op's args).
    void read_fields(od::object& obj, std::size_t i, Fields& out) {
        for (auto fr : obj) {
            od::field f;
            check_at(std::move(fr).get(f), i);
            std::string_view key;
            check_at(f.unescaped_key().get(key), i);
            od::value v = f.value();
            if (key == "ph") {
                if (v.get_string().get(out.ph)) fail(at(i, "ph"), "expected a string");
                out.has_ph = true;
            } else if (key == "cat") {
                if (v.get_string().get(out.cat)) fail(at(i, "cat"), "expected a string");
            } else if (key == "name") {
                od::json_type t{};
                check_at(v.type().get(t), i, "name");
                if (t != od::json_type::string) fail(at(i, "name"), "expected a string");
                check_at(v.get_string().get(out.name), i, "name");
            } else if (key == "ts") {
                out.ts = time_ns(v, i, "ts");
                out.has_ts = true;
            } else if (key == "dur") {
                out.dur = time_ns(v, i, "dur");
                out.has_dur = true;
            } else if (key == "pid") {
                out.pid = lane_id(v, i, "pid");
            } else if (key == "tid") {
                out.tid = lane_id(v, i, "tid");
            } else if (key == "id") {
                read_flow_id(v, i, out);
            } else if (key == "args") {
                if (out.ph == "C") {
                    read_counter_args(v, i, out.counter_values);
                } else {
                    od::json_type t{};
                    check_at(v.type().get(t), i, "args");
                    if (t != od::json_type::object) {
                        probe(v, 3, i);
                        fail(at(i, "args"), "expected an object");
                    }
                    // "M" metadata: keep process and thread names.
                    if (out.ph == "M")
                        read_metadata_args(v, i, out.args);
                    else
                        read_args(v, i, out.args);
                }
            }
        }
    }

    // A flow's id: a number, or a string (hashed); other types leave it unset.
    void read_flow_id(od::value& v, std::size_t i, Fields& out) {
        od::json_type t{};
        check_at(v.type().get(t), i, "id");
        if (t == od::json_type::number) {
            out.id = non_negative(v);
            out.has_id = true;
        } else if (t == od::json_type::string) {
            std::string_view s;
            check_at(v.get_string().get(s), i, "id");
            out.id = static_cast<std::int64_t>(std::hash<std::string_view>{}(s)&0x3fffffffffffffffULL);
            out.has_id = true;
        }
    }

    void add_metadata(const Fields& f) {
        if (f.name == "process_name" && !meta_name_.empty()) file_.process_names[f.pid] = meta_name_;
        if (f.name == "thread_name" && !meta_name_.empty()) file_.thread_names[{f.pid, f.tid}] = meta_name_;
        meta_name_.clear();
        ++file_.skipped;
    }

    void add_counters(Fields& f, std::size_t i) {
        if (!f.has_ts) fail(at(i, "ts"), "required field is missing");
        for (auto& [k, value] : f.counter_values)
            file_.counters.push_back({f.pid, std::string(f.name) + "." + k, f.ts, value});
    }

    void add_flow(const Fields& f) {
        if (f.has_id && f.has_ts) file_.flows.push_back({f.id, f.pid, f.tid, f.ts, f.ph == "s"});
        ++file_.skipped;
    }

    // "B" opens a range on its lane, "E" closes the innermost one (an "E" with none open is
    // skipped).
    void add_begin_or_end(Fields& f, std::size_t i) {
        if (!f.has_ts) fail(at(i, "ts"), "required field is missing");
        auto& stack = open_ranges_[{f.pid, f.tid}];
        if (f.ph == "B") {
            stack.push_back({std::string(f.cat), std::string(f.name), f.ts, std::move(f.args)});
            return;
        }
        if (stack.empty()) {
            ++file_.skipped;
            return;
        }
        Open o = std::move(stack.back());
        stack.pop_back();
        if (f.ts < o.start_ns) fail(at(i, "ts"), "an \"E\" event ends before its \"B\" begins");
        add_complete(o.cat, o.name, f.pid, f.tid, o.start_ns, f.ts, o.args);
    }

    void add_complete(std::string_view cat, std::string_view name, std::int64_t pid,
                      std::int64_t tid, std::int64_t start_ns, std::int64_t end_ns, const Args& a) {
        ++complete_events_;
        KinetoEvent e;
        e.role = kineto_role_of(cat);
        if (e.role == KinetoRole::Ignored) {
            ++file_.skipped;
            return;
        }
        e.name = name;
        e.pid = pid;
        e.tid = tid;
        e.start_ns = start_ns;
        e.end_ns = end_ns;
        e.correlation = a.correlation;
        e.external_id = a.external_id;
        switch (e.role) {
            case KinetoRole::DeviceKernel:
                e.kind = kernel_kind(name);
                // Accelerators without a copy category (MTIA) name their DMA work.
                if (e.kind == EventKind::Compute && name.find("dma") != std::string_view::npos) {
                    e.kind = EventKind::Memcpy;
                    e.bytes = a.bytes;
                }
                break;
            case KinetoRole::DeviceMemcpy:
                e.kind = EventKind::Memcpy;
                e.bytes = a.bytes;
                break;
            case KinetoRole::DeviceMemset:
                e.kind = EventKind::Memset;
                e.bytes = a.bytes;
                break;
            case KinetoRole::DeviceSync:
                e.kind = EventKind::Idle;
                break;
            default:
                e.kind = EventKind::Marker;
                break;
        }
        if (e.role == KinetoRole::DeviceKernel || e.role == KinetoRole::DeviceMemcpy ||
            e.role == KinetoRole::DeviceMemset || e.role == KinetoRole::DeviceAnnotation ||
            e.role == KinetoRole::DeviceSync) {
            if (a.device >= 0) e.pid = a.device;
            if (a.stream >= 0) e.tid = a.stream;
        }
        if (a.has_comm) {
            KinetoCommInfo c;
            const std::int64_t n = std::max(a.in_nelems, a.out_nelems);
            if (n > 0 && a.dtype_bytes > 0 && n < (std::int64_t{1} << 56))
                c.bytes = n * a.dtype_bytes;
            c.group_size = static_cast<int>(std::min<std::int64_t>(a.group_size, 1 << 24));
            c.group = a.group;
            c.collective = a.collective;
            e.comm = static_cast<int>(file_.comms.size());
            file_.comms.push_back(std::move(c));
        }
        file_.events.push_back(std::move(e));
    }

    // A kernel's kind, classified once per distinct name: a trace repeats a few hundred names
    // over its events, some of them kilobytes of template arguments.
    EventKind kernel_kind(std::string_view name) {
        auto it = kernel_kinds_.find(name);
        if (it == kernel_kinds_.end()) it = kernel_kinds_.emplace(std::string(name), event_kind_of_kernel(name)).first;
        return it->second;
    }

    void read_metadata_args(od::value& v, std::size_t i, Args&) {
        for_each_arg(v, i, [&](std::string_view key, od::value& val) {
            std::string_view s;
            if (key == "name" && !val.get_string().get(s)) meta_name_ = s;
        });
    }

    void read_counter_args(od::value& v, std::size_t i,
                           std::vector<std::pair<std::string, double>>& out) {
        for_each_arg(v, i, [&](std::string_view key, od::value& val) {
            od::json_type t{};
            check_at(val.type().get(t), i, "args");
            if (t != od::json_type::number) return;
            double d = 0;
            if (val.get_double().get(d))
                fail(at(i, "args") + "." + std::string(key), "not a finite number");
            if (std::isfinite(d)) out.emplace_back(std::string(key), d);
        });
    }

    struct Open {
        std::string cat, name;
        std::int64_t start_ns;
        Args args;
    };

    KinetoFile file_;
    std::string text_;
    od::parser parser_;
    std::string meta_name_;
    std::map<std::string, std::int64_t> string_lanes_;
    std::map<std::string, EventKind, std::less<>> kernel_kinds_;
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Open>> open_ranges_;
    std::set<std::string, std::less<>> top_keys_;
    bool saw_events_ = false;
    std::int64_t complete_events_ = 0;
};

}  // namespace

#ifndef MESHWORK_KINETO_PARSE_ENTRY
#define MESHWORK_KINETO_PARSE_ENTRY read_kineto_file_portable
#endif
KinetoFile MESHWORK_KINETO_PARSE_ENTRY(const std::string& path) { return Parser(path).run(); }

}  // namespace meshwork::profiler
