#include "profiler/export/chrome_trace_export.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "profiler/store/trace_output.h"

namespace meshwork::profiler {

namespace {

// Microseconds with three decimals, as Kineto writes them (exact for integer nanoseconds).
std::string micros(std::int64_t ns) {
    char buf[48];
    const bool neg = ns < 0;
    const auto a = static_cast<unsigned long long>(neg ? -(ns + 1) + 1 : ns);
    std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "", a / 1000, a % 1000);
    return buf;
}

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace

ChromeExportResult write_chrome_trace(const TraceReader& trace, std::ostream& out) {
    ChromeExportResult r;
    out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":" << quoted(trace.run_info().source)
        << ",\"meshwork_trace\":" << quoted(trace.path()) << "},\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&] {
        if (!first) out << ",\n";
        first = false;
    };
    for (const auto& rk : trace.ranks()) {
        sep();
        out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << rk.rank << ",\"args\":{\"name\":"
            << quoted("rank " + std::to_string(rk.rank) + (rk.device.empty() ? "" : " (" + rk.device + ")")) << "}}";
    }
    for (const auto& t : trace.tracks()) {
        sep();
        out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << t.info.rank << ",\"tid\":" << t.id
            << ",\"args\":{\"name\":" << quoted(t.info.name) << "}}";
        sep();
        out << "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" << t.info.rank << ",\"tid\":" << t.id
            << ",\"args\":{\"sort_index\":" << t.id << "}}";
    }
    trace.for_each_event([&](const TraceEvent& e) {
        sep();
        out << "{\"ph\":\"X\",\"cat\":\"" << to_string(e.kind) << "\",\"name\":" << quoted(e.name)
            << ",\"pid\":" << e.rank << ",\"tid\":" << e.track << ",\"ts\":" << micros(e.start_ns)
            << ",\"dur\":" << micros(e.end_ns - e.start_ns) << ",\"args\":{";
        bool a = false;
        auto arg = [&](const char* k, const std::string& v) {
            out << (a ? "," : "") << '"' << k << "\":" << v;
            a = true;
        };
        if (e.bytes) arg("bytes", std::to_string(e.bytes));
        if (e.flops != 0) arg("flops", nlohmann::json(e.flops).dump());
        if (e.step >= 0) arg("step", std::to_string(e.step));
        if (e.micro_batch >= 0) arg("micro_batch", std::to_string(e.micro_batch));
        if (e.layer >= 0) arg("layer", std::to_string(e.layer));
        if (e.correlation_id) arg("correlation", std::to_string(e.correlation_id));
        if (e.group_size) arg("group_size", std::to_string(e.group_size));
        out << "}}";
        ++r.events;
    });
    trace.for_each_counter([&](const CounterSample& c) {
        const TrackRecord* t = trace.track(c.track);
        sep();
        out << "{\"ph\":\"C\",\"name\":" << quoted(c.name) << ",\"pid\":" << (t ? t->info.rank : 0)
            << ",\"ts\":" << micros(c.time_ns) << ",\"args\":{\"value\":" << nlohmann::json(c.value).dump() << "}}";
        ++r.counters;
    });
    out << "\n]}\n";
    return r;
}

ChromeExportResult export_chrome_trace(const TraceReader& trace, const std::string& path) {
    ChromeExportResult r;
    write_stream_atomically(path, [&](std::ostream& out) { r = write_chrome_trace(trace, out); });
    return r;
}

}  // namespace meshwork::profiler
