// Which command of a launch script trains, and the options of the launcher in front of it
// (torchrun, python -m torch.distributed.run, deepspeed, srun): MegatronParser, megatron_import_parser.h.
#include "core/export/megatron_import_parser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include "core/common/error.h"
#include "core/export/canonical_layout.h"
#include "core/export/import_common.h"
#include "core/export/megatron_flags.h"
#include "core/export/megatron_hybrid.h"
#include "core/export/model_match.h"
#include "core/export/moe_layer_pattern.h"
#include "core/export/pipeline_layout.h"
#include "core/export/shell_script.h"
#include "core/layout/layout_json.h"
#include "core/layout/pipeline_split.h"
#include "core/model/hf_hybrid_config.h"
#include "core/schedule/pipeline_schedule.h"

namespace meshwork::megatron_import_detail {

bool MegatronParser::megatron_flag(const std::string& word) {
    if (!starts_with(word, "--")) return false;
    const std::string flag = word.substr(0, word.find('='));
    return layout_flag(flag) != nullptr || megatron_ignored_flag_reason(flag) != nullptr;
}

bool MegatronParser::python_name(const std::string& b) {
    return b == "python" || (starts_with(b, "python") && b.find_first_not_of("0123456789.", 6) == std::string::npos);
}

std::size_t MegatronParser::skip_python_options(const std::vector<ScriptWord>& w, std::size_t j) {
    while (j < w.size() && starts_with(w[j].text, "-") && w[j].text != "-m" && w[j].text != "-c") {
        j += python_option_with_value(w[j].text) ? 2 : 1;
    }
    return j;
}

std::string MegatronParser::module_script(const std::string& module) {
    if (module.empty() || module.find('/') != std::string::npos || py_script(module)) return "";
    for (char c : module) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '.') return "";
    }
    return module.substr(module.rfind('.') == std::string::npos ? 0 : module.rfind('.') + 1) + ".py";
}

bool MegatronParser::carries_layout_arguments(const std::vector<ScriptWord>& w, std::size_t k) {
    // Flags that data preparation and checking tools share with training
    // (tools/preprocess_data.py's --tokenizer-type and --vocab-size, a parity check's
    // --bf16) do not make a command training.
    static constexpr std::string_view kShared[] = {"--tokenizer-type", "--vocab-size", "--bf16", "--fp16"};
    for (std::size_t j = k; j < w.size(); ++j) {
        if (!starts_with(w[j].text, "--")) continue;
        const std::string flag = w[j].text.substr(0, w[j].text.find('='));
        if (layout_flag(flag) == nullptr) continue;
        if (std::find(std::begin(kShared), std::end(kShared), flag) != std::end(kShared)) continue;
        return true;
    }
    return false;
}

std::size_t MegatronParser::script_after(const std::vector<ScriptWord>& w, std::size_t k) {
    for (std::size_t j = k + 1; j < w.size(); ++j) {
        if (py_script(w[j].text)) return j;
        if ((w[j].text == "-m" || w[j].text == "--module") && j + 1 < w.size() &&
            training_entry_point(module_script(w[j + 1].text)))
            return j + 1;
        if (starts_with(w[j].text, "--") && layout_flag(w[j].text.substr(0, w[j].text.find('='))) != nullptr) break;
    }
    return std::string::npos;
}

bool MegatronParser::trains(const std::vector<ScriptWord>& w, std::size_t k) {
    const std::size_t s = script_after(w, k);
    if (s != std::string::npos && (training_entry_point(w[s].text) || training_entry_point(module_script(w[s].text))))
        return true;
    return carries_layout_arguments(w, k);
}

std::size_t MegatronParser::launcher_index(const ScriptCommand& c) {
    const auto& w = c.words;
    const auto has_flags_after = [&](std::size_t k) {
        for (std::size_t j = k; j < w.size(); ++j) {
            if (megatron_flag(w[j].text)) return true;
        }
        return false;
    };
    if (!w.empty() && megatron_flag(w[0].text)) {  // the bare arguments
        return carries_layout_arguments(w, 0) ? 0 : std::string::npos;
    }
    for (std::size_t k = 0; k < w.size(); ++k) {
        const std::string b = basename(w[k].text);
        if (b == "torchrun" || b == "deepspeed") return trains(w, k) ? k : std::string::npos;
        if (python_name(b)) {
            const std::size_t j = skip_python_options(w, k + 1);
            if (j + 1 < w.size() && w[j].text == "-m" && starts_with(w[j + 1].text, "torch.distributed.")) {
                return trains(w, k) ? k : std::string::npos;
            }
            if (j + 1 < w.size() && w[j].text == "-m" && training_entry_point(module_script(w[j + 1].text))) {
                return trains(w, k) ? k : std::string::npos;
            }
            // A training entry point trains even when its arguments come from a variable
            // the script does not set (`python pretrain_gpt.py ${ARGS}`): the import then
            // asks for that variable, as for torchrun.
            if (j < w.size() && py_script(w[j].text)) {
                return (has_flags_after(j) || training_entry_point(w[j].text)) && trains(w, k) ? k
                                                                                              : std::string::npos;
            }
            return std::string::npos;
        }
        if (py_script(b)) {
            return (has_flags_after(k) || training_entry_point(b)) && trains(w, k) ? k : std::string::npos;
        }
    }
    return std::string::npos;
}

std::size_t MegatronParser::pick_command(const ScriptRun& script, ShellCommand& argv) {
    const ScriptCommand* chosen = nullptr;
    std::size_t at = 0;
    // A checkpoint conversion takes the layout's arguments to shard what it writes
    // (tools/checkpoint/convert.py; ModelOpt's convert_model.py before its finetune.py in
    // Megatron-LM's examples/post_training/modelopt/eagle3.sh) but runs no training step:
    // beside a command that trains, it is not the training command.
    const auto conversion = [](const ScriptCommand& c, std::size_t k) {
        for (std::size_t j = k; j < c.words.size(); ++j) {
            const ScriptWord& w = c.words[j];
            if (!py_script(w.text)) continue;
            return starts_with(basename(w.unresolved.empty() ? w.text : w.known_tail), "convert");
        }
        return false;
    };
    std::size_t trainers = 0;
    for (const auto& c : script.commands) {
        const std::size_t k = launcher_index(c);
        trainers += k != std::string::npos && !conversion(c, k) ? 1 : 0;
    }
    for (const auto& c : script.commands) {
        const std::size_t k = launcher_index(c);
        if (k == std::string::npos) continue;
        if (trainers > 0 && conversion(c, k)) {
            result_.notes.push_back("line " + std::to_string(c.line) + ": a checkpoint conversion, not the training command");
            continue;
        }
        if (chosen != nullptr) {
            add("line " + std::to_string(c.line),
                "a second training command ('" + c.words[k].text + "') after the one on line " +
                    std::to_string(chosen->line) + ": the script launches training twice");
            continue;
        }
        chosen = &c;
        at = k;
    }
    if (!issues_.empty()) throw InputError(issues_);
    if (chosen == nullptr) return from_variable(script, argv);
    found_command_ = true;
    for (const auto& e : chosen->env) {
        result_.ignored.push_back({"line " + std::to_string(chosen->line), e,
                                   "environment variable: not part of the layout"});
    }
    // What runs the launcher: srun's options are read, other wrappers listed.
    std::size_t k = 0;
    while (k < at) {
        const std::string b = basename(chosen->words[k].text);
        if (b == "srun") {
            k = srun_options(chosen->words, k + 1, at);
            continue;
        }
        if (b == "mpirun" || b == "mpiexec") {
            // mpirun -np N runs the script N times: one process per GPU, as srun does.
            launcher_srun_ = true;
            for (std::size_t j = k + 1; j + 1 < at; ++j) {
                const std::string& o = chosen->words[j].text;
                if (o == "-np" || o == "-n" || o == "--np" || o == "-c") srun_["--ntasks"] = chosen->words[j + 1].text;
                if (o == "-N" || o == "--npernode") srun_["--ntasks-per-node"] = chosen->words[j + 1].text;
            }
        }
        std::string wrapper = chosen->words[k].text;
        ++k;
        while (k < at && basename(chosen->words[k].text) != "srun") wrapper += " " + chosen->words[k++].text;
        result_.ignored.push_back({"line " + std::to_string(chosen->line), wrapper,
                                   "command wrapping the launcher (profiler, environment manager): "
                                   "not part of the layout"});
    }
    argv.assign(chosen->words.begin() + static_cast<std::ptrdiff_t>(at), chosen->words.end());
    command_line_ = chosen->line;
    return launcher(argv);
}

std::string MegatronParser::launched_programs(const ScriptRun& script) {
    std::vector<std::string> programs;
    std::vector<std::string> seen;  // each program once, with the line it first runs on
    bool recipe = false;
    bool child_script = false;
    for (const auto& c : script.commands) {
        const auto& w = c.words;
        std::string program;
        for (std::size_t j = 0; j < w.size() && program.empty(); ++j) {
            const std::string& t = w[j].text;
            // A path with an unknown directory reads as its known tail: ".../run_recipe.py".
            if (py_script(t)) program = w[j].unresolved.empty() ? t : "..." + w[j].known_tail;
            if (t == "-m" && j + 1 < w.size() && !starts_with(w[j + 1].text, "torch.distributed.") &&
                j > 0 && (python_name(basename(w[j - 1].text)) || starts_with(w[j - 1].text, "-")))
                program = "-m " + w[j + 1].text;
        }
        // `bash ds_pretrain_gpt2.sh $CONFIG ...`: another script, with its arguments.
        if (program.empty() && w.size() > 1 && (basename(w[0].text) == "bash" || basename(w[0].text) == "sh")) {
            for (std::size_t j = 1; j < w.size() && program.empty(); ++j) {
                if (starts_with(w[j].text, "-")) continue;
                if (w[j].text.size() > 3 && w[j].text.compare(w[j].text.size() - 3, 3, ".sh") == 0) {
                    program = "bash " + w[j].text;
                    child_script = true;
                }
                break;
            }
        }
        if (program.empty()) continue;
        for (const auto& word : w) recipe = recipe || word.text == "--recipe" || starts_with(word.text, "--recipe=");
        recipe = recipe || basename(program) == "run_recipe.py";
        if (std::find(programs.begin(), programs.end(), program) != programs.end()) continue;
        programs.push_back(program);
        seen.push_back(program + " (line " + std::to_string(c.line) + ")");
    }
    if (seen.empty()) return "";
    std::string out = "; it runs ";
    for (std::size_t i = 0; i < seen.size() && i < 4; ++i) out += (i ? ", " : "") + seen[i];
    if (seen.size() > 4) out += " and " + std::to_string(seen.size() - 4) + " more";
    out += ": none is a Megatron-LM training entry point (pretrain_*.py) or takes its layout arguments";
    if (child_script) {
        out += ". A script run by bash is a file of its own: import that file (its arguments with "
               "--set 1=VALUE, --set 2=VALUE, ...)";
    }
    if (recipe) {
        out += ". A Megatron-Bridge recipe run (--recipe, scripts/training/run_recipe.py) holds its layout in "
               "the recipe function: import that module instead (meshwork-cli import-args RECIPE.py --config NAME, "
               "from a Megatron-Bridge checkout); the script's KEY=VALUE overrides are not read";
    }
    return out;
}

std::size_t MegatronParser::from_variable(const ScriptRun& script, ShellCommand& argv) {
    std::vector<std::string> candidates;
    for (const auto& [name, words] : script.variables) {
        bool model = false;
        for (const auto& w : words) {
            const std::string flag = w.text.substr(0, w.text.find('='));
            model = model || flag == "--num-layers" || flag == "--hybrid-layer-pattern" ||
                    flag == "--hybrid-override-pattern";
        }
        if (model) candidates.push_back(name);
    }
    // A variable whose words are all inside another candidate (GPT_ARGS in ALL_ARGS) is a part.
    std::vector<std::string> outer;
    for (const auto& c : candidates) {
        bool part = false;
        for (const auto& o : candidates) {
            if (o == c) continue;
            const auto& in = script.variables.at(c);
            const auto& big = script.variables.at(o);
            part = part || (big.size() > in.size() &&
                            std::search(big.begin(), big.end(), in.begin(), in.end(),
                                        [](const ScriptWord& a, const ScriptWord& b) { return a.text == b.text; }) !=
                                big.end());
        }
        if (!part) outer.push_back(c);
    }
    if (outer.size() != 1) {
        std::string msg = "no training command (torchrun, python -m torch.distributed.run, deepspeed, "
                          "srun or python with a training script)";
        if (script.exit_line > 0) msg += ": the script stops at exit on line " + std::to_string(script.exit_line);
        if (outer.empty()) msg += launched_programs(script);
        if (outer.size() > 1) {
            msg += ", and several variables hold Megatron-LM arguments:";
            for (const auto& o : outer) msg += " " + o;
        }
        for (const auto& n : script.notes) {
            if (n.find("sourced file") != std::string::npos) msg += "; " + n;
        }
        add("script", msg);
        throw InputError(issues_);
    }
    const std::string& name = outer.front();
    argv = script.variables.at(name);
    from_variable_ = true;
    const int line = script.variable_lines.count(name) ? script.variable_lines.at(name) : 0;
    result_.notes.push_back("no training command in the script: the Megatron-LM arguments are those of " +
                            name + " (line " + std::to_string(line) + ")");
    return 0;
}

std::size_t MegatronParser::srun_options(const ShellCommand& w, std::size_t k, std::size_t end) {
    static const std::map<std::string, std::string> kShort = {{"-N", "--nodes"}, {"-n", "--ntasks"}};
    static const std::vector<std::string> kNoValue = {"--exclusive", "--overlap", "--unbuffered", "-u",
                                                      "--label", "-l", "--kill-on-bad-exit", "-K",
                                                      "--no-container-mount-home", "--container-writable"};
    launcher_srun_ = true;
    while (k < end && starts_with(w[k].text, "-")) {
        std::string opt = w[k].text;
        std::string value;
        const std::size_t at = k;
        if (const auto eq = opt.find('='); eq != std::string::npos) {
            value = opt.substr(eq + 1);
            opt = opt.substr(0, eq);
            ++k;
        } else if (std::find(kNoValue.begin(), kNoValue.end(), opt) != kNoValue.end()) {
            ++k;
        } else {
            value = k + 1 < end ? w[k + 1].text : "";
            if (k + 1 < end && !w[k + 1].unresolved.empty()) value.clear();
            k += 2;
        }
        if (const auto s = kShort.find(opt); s != kShort.end()) opt = s->second;
        if (opt == "--nodes" || opt == "--ntasks" || opt == "--ntasks-per-node" || opt == "--gpus-per-node") {
            srun_[opt] = value;
        } else {
            result_.ignored.push_back({"line " + std::to_string(w[at].line), "srun " + opt + (value.empty() ? "" : " " + value),
                                       "srun option: not part of the layout"});
        }
    }
    return k;
}

std::string MegatronParser::where(std::size_t k, const std::string& flag) const {
    return where(k) + " " + flag;
}

void MegatronParser::add(const std::string& field, const std::string& message) {
    issues_.push_back({file_, field, message});
}

bool MegatronParser::expanded_ok(std::size_t k, const std::string& flag, std::size_t at) {
    const auto& w = (*argv_)[k];
    if (w.unresolved.empty()) return true;
    add(where(at, flag), w.unresolved);
    return false;
}

std::size_t MegatronParser::launcher(const ShellCommand& argv) {
    std::size_t i = 0;
    // `$DIR/finetune.py ARGS` run directly: the unknown directory decides nothing (as for a
    // script after python or torchrun below), the name does.
    const bool script_in_unknown_dir = !argv[0].unresolved.empty() && starts_with(argv[0].known_tail, "/") &&
                                       py_script(argv[0].known_tail);
    const std::string first = script_in_unknown_dir ? argv[0].known_tail.substr(1) : argv[0].text;
    if (!script_in_unknown_dir && !expanded_ok(0, first)) return argv.size();
    if (starts_with(first, "--")) return 0;  // the bare arguments
    const std::string name = basename(first);
    if (name == "torchrun") {
        launched_ = true;
        i = torchrun_options(argv, 1);
    } else if (name == "deepspeed") {
        i = deepspeed_options(argv, 1);
    } else if (python_name(name)) {
        i = 1;
        while (i < argv.size() && starts_with(argv[i].text, "-") && argv[i].text != "-m") {
            const std::string& o = argv[i].text;
            if (python_option_with_value(o)) ++i;
            else if (o != "-u" && o != "-O" && o != "-OO" && o != "-B" && o != "-E" &&
                     o != "-s" && o != "-S" && o != "-I" && o != "-P" && o != "-q" && o != "-b" &&
                     o != "-bb" && o != "-d" && o != "-v") {
                add(where(i, o), "unknown python option");
            }
            ++i;
        }
        if (i < argv.size() && argv[i].text == "-m") {
            const std::string module = i + 1 < argv.size() ? argv[i + 1].text : "";
            if (module == "torch.distributed.run" || module == "torch.distributed.launch") {
                launched_ = true;
                i = torchrun_options(argv, i + 2);
            } else if (!module_script(module).empty()) {
                entry_module_ = true;
                ++i;  // the module is the training script
            } else {
                add(where(i + 1), "python -m '" + module +
                                      "': expected torch.distributed.run, a training module or a training script");
                return argv.size();
            }
        }
    } else if (!py_script(name)) {
        add(where(0), "'" + first +
                          "': expected torchrun, deepspeed, python, a training script or the bare "
                          "Megatron-LM arguments");
        return argv.size();
    }
    if (i >= argv.size()) {
        add(where(i), "the training script is missing (e.g. pretrain_gpt.py)");
        return argv.size();
    }
    // `$DIR/pretrain_gpt.py`: an unknown directory decides nothing of the layout, the name does.
    const bool unknown_dir = !argv[i].unresolved.empty() && starts_with(argv[i].known_tail, "/");
    std::string script = unknown_dir ? argv[i].known_tail.substr(1) : argv[i].text;
    if (entry_module_ && !unknown_dir) {
        const std::string file = module_script(script);
        if (file.empty()) {
            add(where(i, script), "expected the training module (e.g. megatron.training.pretrain_gpt)");
            return argv.size();
        }
        result_.notes.push_back("training module " + script + " read as " + file);
        script = file;
    }
    if (!unknown_dir && !expanded_ok(i, script)) return argv.size();
    if (!py_script(script)) {
        add(where(i, script), "expected the training script (e.g. pretrain_gpt.py)");
        return argv.size();
    }
    entry_script_ = basename(script);
    const std::string& entry = entry_script_;
    if (starts_with(entry, "generate") || entry.find("text_generation") != std::string::npos ||
        entry.find("inference") != std::string::npos) {
        // Generation and inference entry points (examples/academic_paper_scripts/detxoify_lm/
        // generate_samples_gpt.py, tools/run_text_generation_server.py) run the model on the
        // same argparse and parallel axes; their own flags (--out-seq-length, --temperature)
        // are listed as ignored with the file that defines them.
        result_.notes.push_back("script " + script +
                                " generates text rather than training: the layout is its model and parallel "
                                "axes, trained with its micro-batch as the batch");
    } else if (entry != "pretrain_gpt.py") {
        result_.notes.push_back("training script " + script +
                                " read with pretrain_gpt.py's arguments");
    }
    return i + 1;
}

std::size_t MegatronParser::deepspeed_options(const ShellCommand& argv, std::size_t i) {
    launcher_deepspeed_ = true;
    static const std::vector<std::string> kNoValue = {"--no_ssh_check", "--no_local_rank", "--force_multi",
                                                      "--no_python", "--save_pid", "--enable_each_rank_log",
                                                      "--elastic_training", "--bind_cores_to_rank",
                                                      "--module", "--no_ssh"};
    while (i < argv.size() && starts_with(argv[i].text, "-")) {
        std::string flag = argv[i].text;
        std::string value;
        const std::size_t at = i;
        if (const auto eq = flag.find('='); eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
            ++i;
        } else if (std::find(kNoValue.begin(), kNoValue.end(), flag) != kNoValue.end()) {
            ++i;
        } else {
            if (i + 1 >= argv.size()) {
                add(where(i, flag), "the value is missing");
                return argv.size();
            }
            value = argv[i + 1].text;
            if (!expanded_ok(i + 1, flag, at) &&
                (flag == "--num_nodes" || flag == "--num_gpus" || flag == "--num-nodes" || flag == "--num-gpus")) {
                i += 2;
                continue;
            }
            i += 2;
        }
        std::replace(flag.begin(), flag.end(), '-', '_');
        if (flag == "__num_nodes") {
            if (!parse_int_text(value, 1, kMaxGpus, nnodes_)) add(where(at, flag), "'" + value + "': expected a number of nodes");
            ds_nodes_given_ = true;
        } else if (flag == "__num_gpus") {
            if (!parse_int_text(value, 1, kMaxGpus, nproc_)) add(where(at, flag), "'" + value + "': expected a number of GPUs per node");
            ds_gpus_given_ = true;
        } else {
            result_.ignored.push_back({where(at), argv[at].text + (value.empty() || argv[at].text.find('=') != std::string::npos ? "" : " " + value),
                                       "DeepSpeed launcher option: not part of the layout"});
        }
    }
    return i;
}

std::size_t MegatronParser::torchrun_options(const ShellCommand& argv, std::size_t i) {
    while (i < argv.size() && starts_with(argv[i].text, "-")) {
        std::string flag = argv[i].text;
        std::string value;
        bool inline_value = false;
        if (const auto eq = flag.find('='); eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
            inline_value = true;
        }
        const LauncherOption* o = torchrun_option(flag);
        if (o == nullptr) {
            add(where(i, flag), "unknown torchrun option");
            ++i;
            continue;
        }
        const std::size_t at = i;
        if (o->takes_value && !inline_value) {
            if (i + 1 >= argv.size()) {
                add(where(i, flag), "the value is missing");
                return argv.size();
            }
            value = argv[++i].text;
            // Only the world size is read; an unknown port or address does not matter.
            const bool read = flag == "--nnodes" || flag == "--nproc-per-node" || flag == "--nproc_per_node";
            if (read && !expanded_ok(i, flag, at)) {
                ++i;
                continue;
            }
        }
        ++i;
        const std::string norm = flag == "--nproc_per_node" ? "--nproc-per-node" : flag;
        if (norm == "-m" || norm == "--module") {
            entry_module_ = true;
        } else if (norm == "--nnodes") {
            if (!parse_int_text(value, 1, kMaxGpus, nnodes_)) {
                add(where(at, flag), "'" + value +
                                         "': expected a fixed number of nodes (elastic "
                                         "ranges such as 1:4 have no single world size)");
            }
        } else if (norm == "--nproc-per-node") {
            if (!parse_int_text(value, 1, kMaxGpus, nproc_)) {
                add(where(at, flag), "'" + value +
                                         "': expected a number of processes (gpu/auto "
                                         "depend on the machine: give a number)");
            }
        } else {
            result_.ignored.push_back({where(at), flag + (value.empty() ? "" : " " + value),
                                       "launcher rendezvous or process option: not part of "
                                       "the layout"});
        }
    }
    return i;
}

}  // namespace meshwork::megatron_import_detail
