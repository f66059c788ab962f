// meshwork-cli import-trace: Nsight Systems SQLite exports and PyTorch profiler (Kineto) JSON
// traces (plain or gzip), one file or several ranks of one job, into a Meshwork trace.
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "app/cli/exit_codes.h"
#include "profiler/import/import_many.h"
#include "profiler/import/import_trace.h"
#include "profiler/store/trace_output.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

Verb add_import_trace_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("import-trace",
                                   "Convert Nsight Systems SQLite exports or PyTorch profiler "
                                   "(Kineto) JSON traces into one Meshwork trace");
    auto in = std::make_shared<std::vector<std::string>>();
    auto out = std::make_shared<std::string>();
    auto ranks = std::make_shared<std::vector<int>>();
    auto threads = std::make_shared<unsigned>(0);
    auto json = std::make_shared<bool>(false);
    auto mixed = std::make_shared<bool>(false);
    cmd->add_option(
           "INPUT", *in,
           "nsys export --type sqlite outputs, Kineto .json / .json.gz files, or folders of them "
           "(one file per rank of one job)")
        ->required();
    cmd->add_option("--out", *out, "The Meshwork trace to write (.sqlite)")->required();
    cmd->add_option(
        "--rank", *ranks,
        "Rank of each input file, in order (default: Kineto distributedInfo.rank, else 'rankN' "
        "in the file name, else the file's position among the inputs)");
    cmd->add_option("--threads", *threads, "Files imported at once (default: one per core)");
    // Several files are merged as `merge` merges them, and refused as it refuses files of
    // different runs: the same flag overrides it, so the refusal's advice holds here too.
    cmd->add_flag("--allow-mixed", *mixed,
                  "With several files: merge them even when their run id, layout, world size or "
                  "source differ");
    cmd->add_flag(
        "--json", *json,
        "Print JSON: out, events, world_size, files[] (file, format, rank, rank_source, events, "
        "device_events, skipped, offset_ns, alignment); with one input, its format, rank, "
        "rank_source, device_events and skipped also at the top level");
    cmd->footer(
        "Several files are imported on parallel threads and merged; their clocks are aligned on "
        "absolute timestamps when every file has them, otherwise on the end of the first common "
        "collective (docs/profiler.md).\n"
        "The output appears only once complete (written under a temporary name, then renamed).\n"
        "Exit codes: 0 success, 1 runtime failure, 2 bad input (the message names the file and "
        "what is wrong; a file that is not a profiler trace says what it is).");
    return {
        cmd, [in, out, ranks, threads, json, mixed]() {
            for (int r : *ranks) {
                if (r < 0) throw InputError("<flags>", "--rank", "must be 0 or more");
            }
            const auto inputs = profiler::expand_trace_inputs(*in);
            for (const auto& i : inputs) {
                if (i == *out) throw InputError(*out, "--out", "is also an input");
            }
            profiler::TraceOutput output(*out);
            nlohmann::json files = nlohmann::json::array();
            std::int64_t events = 0;
            int world = 0;
            if (inputs.size() == 1) {
                profiler::ImportOptions options;
                if (ranks->size() > 1)
                    throw InputError("<flags>", "--rank", "given more than once for one input");
                if (!ranks->empty()) options.rank = ranks->front();
                const auto r = profiler::import_trace_file(inputs[0], output.writer(), options);
                output.commit();
                events = r.events;
                world = r.world_size;
                files.push_back({{"file", inputs[0]},
                                 {"format", r.format},
                                 {"rank", r.rank},
                                 {"rank_source",
                                  ranks->empty() ? (r.rank_known ? "file" : "default") : "--rank"},
                                 {"events", r.events},
                                 {"device_events", r.device_events},
                                 {"skipped", r.skipped},
                                 {"offset_ns", 0},
                                 {"alignment", "reference"}});
            } else {
                profiler::ImportManyOptions options;
                options.ranks = *ranks;
                options.threads = *threads;
                options.merge.allow_mixed = *mixed;
                const auto r = profiler::import_trace_files(inputs, output.writer(), options);
                output.commit();
                events = r.merge.events;
                world = r.merge.world_size;
                for (std::size_t i = 0; i < r.files.size(); ++i) {
                    const auto& f = r.files[i];
                    const auto& m = r.merge.inputs[i];
                    files.push_back({{"file", f.file},
                                     {"format", f.result.format},
                                     {"rank", m.ranks.empty() ? f.result.rank : m.ranks.front()},
                                     {"rank_source", f.rank_source},
                                     {"events", m.events},
                                     {"device_events", f.result.device_events},
                                     {"skipped", f.result.skipped},
                                     {"offset_ns", m.offset_ns},
                                     {"alignment", m.alignment}});
                }
            }
            for (const auto& f : files) {
                // A memory snapshot holds allocator events only: no kernels are expected.
                if (f["device_events"].get<std::int64_t>() == 0 && f.value("format", "") != "torch-memory-snapshot") {
                    std::cerr << "warning: " << f["file"].get<std::string>()
                              << ": no device activity (no kernel, copy or memset): `stats` will have no "
                                 "rank figures for it\n";
                }
            }
            if (*json) {
                nlohmann::json j{
                    {"out", *out}, {"events", events}, {"world_size", world}, {"files", files}};
                if (files.size() == 1) {  // one file: its fields at the top level too
                    for (const char* k :
                         {"format", "rank", "rank_source", "device_events", "skipped"})
                        j[k] = files[0][k];
                }
                std::cout << j.dump(2) << "\n";
            } else {
                for (const auto& f : files) {
                    std::cout << f["file"].get<std::string>() << " ("
                              << f["format"].get<std::string>() << ", rank " << f["rank"].get<int>()
                              << "): " << f["events"].get<std::int64_t>() << " events, "
                              << f["device_events"].get<std::int64_t>() << " on the device";
                    if (inputs.size() > 1) {
                        std::cout << ", offset " << f["offset_ns"].get<std::int64_t>() << " ns ("
                                  << f["alignment"].get<std::string>() << ")";
                    }
                    std::cout << "\n";
                }
                std::cout << "-> " << *out << ": " << events << " events\n";
            }
            return kExitOk;
        }};
}

namespace {
Verb make_import_trace_verb(CLI::App& app) { return add_import_trace_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(110, make_import_trace_verb);

}  // namespace meshwork::cli
