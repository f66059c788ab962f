// The training command's arguments: read against the flag tables (the layout's, upstream's
// per release, the forks'), remembered, and typed on access: MegatronParser, megatron_import_parser.h.
#include "core/export/megatron_import_parser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>
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

void MegatronParser::arguments(const ShellCommand& argv, std::size_t i) {
    while (i < argv.size()) {
        std::string flag = argv[i].text;
        if (!argv[i].unresolved.empty() && !starts_with(flag, "--")) {
            add(where(i), "an unknown word where an argument was expected: " + argv[i].unresolved);
            ++i;
            continue;
        }
        if (!starts_with(flag, "--")) {
            add(where(i), "'" + flag + "': a value without a flag");
            ++i;
            continue;
        }
        std::string inline_value;
        bool has_inline = false;
        if (const auto eq = flag.find('='); eq != std::string::npos) {
            inline_value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
            has_inline = true;
        }
        const std::size_t at = i++;
        if (options_.strict && megatron_upstream_flag_source(flag) == nullptr) {
            strict_refusal(at, flag);
        }
        if (const FlagSpec* spec = layout_flag(flag)) {
            std::string value;
            if (spec->takes_value) {
                if (has_inline) {
                    value = inline_value;
                } else if (i < argv.size() && !starts_with(argv[i].text, "--")) {
                    value = argv[i++].text;
                    if (!expanded_ok(i - 1, flag, at)) continue;
                    bool expanded = true;
                    while (spec->many && i < argv.size() && !starts_with(argv[i].text, "--")) {
                        value += " " + argv[i++].text;
                        expanded = expanded && expanded_ok(i - 1, flag, at);
                    }
                    if (!expanded) continue;
                } else {
                    add(where(at, flag), "the value is missing");
                    continue;
                }
                if (has_inline && !expanded_ok(at, flag)) continue;
            } else if (has_inline) {
                add(where(at, flag), "takes no value (found '=" + inline_value + "')");
                continue;
            }
            remember(at, flag, value);
            continue;
        }
        // Ignored or unknown: the values are the words up to the next --flag.
        std::string text = argv[at].text;
        bool unexpanded = !argv[at].unresolved.empty();
        while (i < argv.size() && !starts_with(argv[i].text, "--")) {
            text += " " + argv[i].text;
            unexpanded = unexpanded || !argv[i].unresolved.empty();
            ++i;
        }
        ignored_flags_.insert(flag);
        if (const char* unread = megatron_unread_layout_flag(flag)) {
            add(where(at, flag), std::string("changes the layout in a way import-args does not read: ") + unread);
        } else if (const char* reason = megatron_ignored_flag_reason(flag)) {
            // An unexpanded value of an ignored flag is harmless: it is not read.
            (void)unexpanded;
            std::string why = reason;
            // A flag of an earlier release or of an extra arguments provider names where
            // upstream defines it.
            const char* source = megatron_upstream_flag_source(flag);
            if (source != nullptr && (starts_with(source, "core_v") || !starts_with(source, "megatron/training/"))) {
                why += std::string(" (Megatron-LM ") + source + ")";
            }
            result_.ignored.push_back({where(at), text, why});
        } else if (options_.strict) {
            // strict_refusal has named it.
        } else if (const char* word = megatron_layout_like_word(flag); word != nullptr) {
            add(where(at, flag), std::string("unknown Megatron-LM argument whose name ('") + word +
                                     "') says it may change the layout: neither a layout argument nor a known "
                                     "ignored one of Megatron-LM (core_v0.12.0 to d98e8a64) or a known fork "
                                     "(docs/export.md)");
        } else {
            // A flag that no known release or fork defines: a fork's or a user's own
            // (--data-path2, --wandb-name). It is taken as not changing the layout, with a
            // warning; --strict refuses it.
            result_.ignored.push_back({where(at), text,
                                       "not an argument of Megatron-LM (core_v0.12.0 to d98e8a64) or of the "
                                       "forks import-args knows: taken as not changing the layout"});
            result_.warnings.push_back(where(at) + " " + flag + ": " + kUnknownFlagWarning);
        }
    }
}

void MegatronParser::strict_refusal(std::size_t at, const std::string& flag) {
    std::string why = "not an argument of Megatron-LM (core_v0.12.0 to d98e8a64); --strict accepts upstream's "
                      "arguments only";
    if (const char* reason = megatron_ignored_flag_reason(flag)) why += std::string(" (") + reason + ")";
    else if (layout_flag(flag) != nullptr) why += " (a fork's layout argument: Megatron-DeepSpeed, Pai-Megatron-Patch "
                                                  "or an earlier Megatron-LM)";
    add(where(at, flag), why);
}

void MegatronParser::remember(std::size_t at, const std::string& flag, const std::string& value) {
    const auto it = seen_.find(flag);
    if (it != seen_.end() && it->second.value != value) {
        result_.notes.push_back(flag + " is given twice ('" + it->second.value + "' at " +
                                where(static_cast<std::size_t>(it->second.index)) + ", '" + value + "' at " +
                                where(at) + "): Megatron-LM's argparse keeps the last");
    }
    seen_[flag] = {static_cast<int>(at), value};
}

namespace {
// The words of a nargs "+" value (kept space-separated by the parser).
std::vector<std::string> words_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}
}  // namespace

void MegatronParser::recompute_modules(TrainingConfig& t) {
    if (!has("--recompute-modules")) return;
    for (const std::string& name : words_of(text("--recompute-modules"))) {
        RecomputeModule m{};
        if (parse_recompute_module(name, m)) {
            t.recompute_modules.push_back(m);
        } else if (name == "gdn_norm_out" || name == "gdp_in_proj" || name == "gdp_qkv" || name == "mhc") {
            add(field("--recompute-modules"), "'" + name + "': a module of gated delta nets or hyper-connections, "
                                              "which no Meshwork model has");
        } else {
            add(field("--recompute-modules"), "'" + name + "' is not a Megatron-LM recompute module (" +
                                                  recompute_module_names() + ")");
        }
    }
}

// --cuda-graph-modules (transformer_config.py:1090-1100 at d98e8a64) and its deprecated name
// --cuda-graph-scope, whose "full_iteration" entry is the old spelling of
// --cuda-graph-impl full_iteration (docs/user-guide/features/cuda_graph.md:205-215); the
// inference scopes say nothing about training.
void MegatronParser::cuda_graph_modules(TrainingConfig& t) {
    if (has("--cuda-graph-modules") && has("--cuda-graph-scope")) {
        conflict("--cuda-graph-modules", "--cuda-graph-scope", "one list of CUDA-graph modules");
    }
    const std::string flag = has("--cuda-graph-modules") ? "--cuda-graph-modules" : "--cuda-graph-scope";
    if (!has(flag)) return;
    for (const std::string& name : words_of(text(flag))) {
        if (name == "full_iteration_inference") continue;
        if (name == "full_iteration") {
            t.cuda_graphs = CudaGraphs::FullIteration;
            continue;
        }
        if (!add_graph_module(name, t.cuda_graph_modules)) {
            add(field(flag), "'" + name + "' is not a Megatron-LM CUDA-graph module (" + graph_module_name_list() + ")");
        }
    }
    // Full iteration captures everything; without graphs the list has no effect.
    if (t.cuda_graphs != CudaGraphs::PerLayer) t.cuda_graph_modules = GraphModules{};
}

std::string MegatronParser::field(const std::string& flag) const {
    const auto it = seen_.find(flag);
    return it == seen_.end() ? flag : where(static_cast<std::size_t>(it->second.index), flag);
}

std::string MegatronParser::position(const std::string& flag) const {
    const auto it = seen_.find(flag);
    return it == seen_.end() ? flag : where(static_cast<std::size_t>(it->second.index));
}

std::string MegatronParser::text(const std::string& flag, const std::string& fallback) const {
    const auto it = seen_.find(flag);
    return it == seen_.end() ? fallback : it->second.value;
}

long long MegatronParser::integer(const std::string& flag, long long fallback, long long min_value,
                  long long max_value) {
    if (!has(flag)) return fallback;
    long long v = 0;
    if (!parse_int_text(text(flag), min_value, max_value, v)) {
        add(field(flag), "'" + text(flag) + "' is not an integer in [" +
                             std::to_string(min_value) + ", " + std::to_string(max_value) + "]");
        return fallback;
    }
    return v;
}

long long MegatronParser::required(const std::string& flag, long long min_value, long long max_value) {
    if (!has(flag)) {
        add(flag, "required: the layout cannot be built without it");
        return min_value;
    }
    return integer(flag, min_value, min_value, max_value);
}

void MegatronParser::conflict(const std::string& a, const std::string& b, const std::string& why) {
    if (has(a) && has(b)) add(field(b), "conflicts with " + field(a) + ": " + why);
}

void MegatronParser::needs(const std::string& flag, const std::string& other, const std::string& why) {
    if (has(flag) && !has(other)) add(field(flag), "has no effect without " + other + ": " + why);
}

}  // namespace meshwork::megatron_import_detail
