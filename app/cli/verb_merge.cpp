// meshwork-cli merge: per-rank traces (Meshwork traces, Kineto JSON, nsys SQLite, or folders
// of them) -> one trace with aligned clocks.
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "app/cli/exit_codes.h"
#include "profiler/import/import_many.h"
#include "profiler/merge/trace_merge.h"
#include "profiler/store/trace_output.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

Verb add_merge_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("merge", "Merge per-rank traces of one run into one trace, aligning "
                                            "their clocks at a barrier");
    auto inputs = std::make_shared<std::vector<std::string>>();
    auto out = std::make_shared<std::string>();
    auto barrier = std::make_shared<std::string>("barrier");
    auto mixed = std::make_shared<bool>(false);
    auto json = std::make_shared<bool>(false);
    auto ranks = std::make_shared<std::vector<int>>();
    auto threads = std::make_shared<unsigned>(0);
    cmd->add_option("TRACES", *inputs,
                    "Meshwork traces (one or more ranks each), or per-rank PyTorch profiler (Kineto) JSON "
                    "or nsys SQLite files of one job, or folders of them")
        ->required();
    cmd->add_option("--rank", *ranks,
                    "Rank of each input, in order, for profiles that do not name theirs (default: Kineto "
                    "distributedInfo.rank, else 'rankN' in the file name, else the file's position)");
    cmd->add_option("--out", *out, "The merged trace to write (.sqlite)")->required();
    cmd->add_option("--barrier", *barrier,
                    "Events whose name contains this mark the barrier used to align clocks")
        ->capture_default_str();
    cmd->add_option("--threads", *threads,
                    "Inputs read (and raw profiles imported) at once, each by its own reader (default: one "
                    "per core)");
    cmd->add_flag("--allow-mixed", *mixed, "Merge even when run id, layout, world size or source differ");
    cmd->add_flag("--json", *json, "Print JSON: out, events, world_size, inputs[] (file, ranks, offset_ns, "
                                   "alignment, events, complete)");
    cmd->footer("Clock alignment: Meshwork runs: the end of each file's first barrier event is made equal to "
                "the first file's; without barriers in every file, the files' wall-clock start times are used. "
                "Imported profiles: their absolute timestamps when every file has them, otherwise the end of "
                "the first common collective.\n"
                "The inputs are read in parallel a bounded number of events ahead of the writer, which takes "
                "them in order: memory does not grow with the number of inputs.\n"
                "Exit codes: 0 success, 1 runtime failure, 2 bad input (a file that is not a trace, traces "
                "of different runs, a rank in two files; the message names the file).");
    return {cmd, [inputs, out, barrier, mixed, json, ranks, threads]() {
                const auto files = profiler::expand_trace_inputs(*inputs);
                for (const auto& in : files) {
                    if (in == *out) throw InputError(*out, "--out", "is also an input");
                }
                profiler::TraceOutput output(*out);
                profiler::ImportManyOptions options;
                options.merge.barrier_name = *barrier;
                options.merge.allow_mixed = *mixed;
                options.ranks = *ranks;
                options.threads = *threads;
                options.merge.threads = *threads;
                const auto r = profiler::import_trace_files(files, output.writer(), options).merge;
                output.commit();
                if (*json) {
                    nlohmann::json list = nlohmann::json::array();
                    for (const auto& i : r.inputs) {
                        list.push_back({{"file", i.file}, {"ranks", i.ranks}, {"offset_ns", i.offset_ns},
                                        {"alignment", i.alignment}, {"events", i.events},
                                        {"complete", i.complete}});
                    }
                    std::cout << nlohmann::json{{"out", *out}, {"events", r.events},
                                                {"world_size", r.world_size}, {"inputs", list}}
                                     .dump(2)
                              << "\n";
                } else {
                    for (const auto& i : r.inputs) {
                        std::cout << i.file << ": " << i.events << " events, offset " << i.offset_ns
                                  << " ns (" << i.alignment << ")" << (i.complete ? "" : ", incomplete")
                                  << "\n";
                    }
                    std::cout << "-> " << *out << ": " << r.events << " events, world size " << r.world_size
                              << "\n";
                }
                return kExitOk;
            }};
}

namespace {
Verb make_merge_verb(CLI::App& app) { return add_merge_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(120, make_merge_verb);

}  // namespace meshwork::cli
