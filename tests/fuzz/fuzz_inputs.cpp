#include "tests/fuzz/fuzz_inputs.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "core/cluster/cluster_spec.h"
#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/export/megatron_import.h"
#include "core/export/bridge_recipe_import.h"
#include "core/export/shell_script.h"
#include "profiler/import/kineto_import.h"
#include "profiler/import/nsys_import.h"
#include "profiler/import/pickle_reader.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::fuzz {
namespace {

std::string as_text(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

template <typename Fn>
void expect_value_or_input_error(Fn&& parse) {
    try {
        parse();
    } catch (const InputError&) {
    }
}

// The importers and the trace reader take paths: each input goes to one scratch file per
// process and format (several fuzz workers may share the directory).
std::string scratch_path(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/meshwork-fuzz-" + std::to_string(::getpid()) +
           suffix;
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
    // SQLite keeps -wal/-shm/-journal files next to a database: a stale one from the previous
    // input must not be replayed onto this one.
    for (const char* ext : {"-wal", "-shm", "-journal"}) std::remove((path + ext).c_str());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

// A TraceSink that keeps nothing: the importers are under test, not the store.
class NullSink : public TraceSink {
public:
    void set_run_info(const TraceRunInfo&) override {}
    int add_track(const TrackInfo&) override { return tracks_++; }
    void add_event(const TraceEvent&) override {}
    void add_counter(int, int, const std::string&, std::int64_t, double) override {}
    void close() override {}

private:
    int tracks_ = 0;
};

}  // namespace

void layout_json(const std::uint8_t* data, std::size_t size) {
    expect_value_or_input_error([&] {
        const auto layout = layout_from_json(parse_json_text(as_text(data, size), "fuzz.json"), "fuzz.json");
        (void)validate_layout(layout, "fuzz.json");
        // What was accepted must be written back faithfully.
        if (layout_from_json(layout_to_json(layout), "round-trip") != layout) std::abort();
    });
}

void cluster_json(const std::uint8_t* data, std::size_t size) {
    expect_value_or_input_error([&] {
        const auto cluster = cluster_from_json(parse_json_text(as_text(data, size), "fuzz.json"), "fuzz.json");
        if (cluster_from_json(cluster_to_json(cluster), "round-trip") != cluster) std::abort();
    });
}

void hf_config(const std::uint8_t* data, std::size_t size) {
    expect_value_or_input_error([&] {
        const auto spec = model_from_hf_config(parse_json_text(as_text(data, size), "config.json"),
                                               "config.json", "fuzz");
        // The config.json Meshwork writes for an accepted model must be readable again.
        (void)model_from_hf_config(model_to_hf_config(spec), "round-trip", "fuzz");
    });
}

void megatron_args(const std::uint8_t* data, std::size_t size) {
    expect_value_or_input_error([&] {
        const auto result = import_megatron(as_text(data, size), "fuzz.sh", ImportOptions{});
        (void)validate_layout(result.layout, "fuzz.sh");
    });
}

// The interpreter's work budget under the fuzzer: 5 M units (1/50 of import-args': the same
// bound, reached sooner), or MESHWORK_FUZZ_WORK_BUDGET for a campaign that wants more inputs
// a second (an input that spends the budget costs ~3 ns a unit, docs/RELIABILITY.md).
long long fuzz_work_budget() {
    static const long long budget = [] {
        const char* v = std::getenv("MESHWORK_FUZZ_WORK_BUDGET");
        const unsigned long long n = v != nullptr ? std::strtoull(v, nullptr, 10) : 0;
        return n > 0 ? static_cast<long long>(n) : 5'000'000LL;
    }();
    return budget;
}

// The bash interpreter alone, every path (as import-args explores them): a run or an
// InputError, within the work budget. Every unknown word must carry its reason: an unknown
// without one, or a marker the script forged, would show here (decode() throws logic_error).
void shell_script(const std::uint8_t* data, std::size_t size) {
    expect_value_or_input_error([&] {
        ScriptOptions options;
        options.work_budget = fuzz_work_budget();
        explore_shell_script(as_text(data, size), "fuzz.sh", options, 64, [](const ScriptRun& run) {
            for (const auto& c : run.commands) {
                for (const auto& w : c.words) {
                    if (w.text.find('\0') != std::string::npos) std::abort();
                }
            }
        });
    });
}

// A Megatron-Bridge recipe module, read alone (no checkout beside it), with the model given:
// a layout or an InputError naming the line.
void bridge_recipe(const std::uint8_t* data, std::size_t size) {
    expect_value_or_input_error([&] {
        ImportOptions options;
        options.model = "llama3-8b";
        options.gpus = 8;
        (void)import_bridge_recipe(as_text(data, size), "/nonexistent/fuzz_recipe.py", options);
    });
}

void kineto_json(const std::uint8_t* data, std::size_t size) {
    static const std::string path = scratch_path(".json");
    write_file(path, data, size);
    expect_value_or_input_error([&] {
        NullSink sink;
        (void)profiler::import_kineto_json(path, sink, {});
    });
}

void nsys_sqlite(const std::uint8_t* data, std::size_t size) {
    static const std::string path = scratch_path(".nsys.sqlite");
    write_file(path, data, size);
    expect_value_or_input_error([&] {
        NullSink sink;
        (void)profiler::import_nsys_sqlite(path, sink, {});
    });
}

void meshwork_trace(const std::uint8_t* data, std::size_t size) {
    static const std::string path = scratch_path(".trace.sqlite");
    write_file(path, data, size);
    expect_value_or_input_error([&] {
        // Every read the timeline and the statistics make.
        const auto reader = profiler::TraceReader::open(path);
        std::size_t seen = 0;
        reader.for_each_event([&](const TraceEvent& e) { seen += e.name.size(); });
        reader.for_each_counter([&](const profiler::CounterSample&) { ++seen; });
        for (const auto& track : reader.tracks()) {
            seen += reader.window(track.id, reader.start_ns(), reader.end_ns() + 1, 64).size();
            reader.for_each_event_of_track(track.id, [&](const TraceEvent&) { ++seen; });
        }
        (void)reader.event(1);
        reader.verify();
    });
}

// Every node once, by id (never recursively: the memo may make a container hold itself).
void pickle(const std::uint8_t* data, std::size_t size) {
    expect_value_or_input_error([&] {
        const auto doc = profiler::pickle::read_pickle(as_text(data, size), "fuzz.pickle");
        std::size_t seen = 0;
        for (profiler::pickle::NodeId id = 0; id < doc.node_count(); ++id) {
            for (const auto child : doc.items(id)) {
                if (child >= doc.node_count()) std::abort();
                ++seen;
            }
            if (const auto text = doc.as_text(id)) seen += text->size();
            (void)doc.get(id, "segments");
        }
        // Every node but the root came from at least one byte of input.
        if (doc.node_count() > size) std::abort();
        (void)seen;
    });
}

const std::map<std::string, EntryPoint>& entry_points() {
    static const std::map<std::string, EntryPoint> points{
        {"fuzz_layout_json", layout_json},   {"fuzz_cluster_json", cluster_json},
        {"fuzz_hf_config", hf_config},       {"fuzz_megatron_args", megatron_args},
        {"fuzz_shell_script", shell_script}, {"fuzz_bridge_recipe", bridge_recipe},
        {"fuzz_kineto_json", kineto_json},   {"fuzz_nsys_sqlite", nsys_sqlite},
        {"fuzz_meshwork_trace", meshwork_trace}, {"fuzz_pickle", pickle},
        {"fuzz_remote_client", remote_client}, {"fuzz_remote_server", remote_server}};
    return points;
}

void use_source_resources() {
#ifdef MESHWORK_RESOURCES_DIR
    ::setenv("MESHWORK_RESOURCES", MESHWORK_RESOURCES_DIR, 0);
#endif
}

}  // namespace meshwork::fuzz
