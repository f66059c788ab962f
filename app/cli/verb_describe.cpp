// meshwork-cli describe: the model and mesh summary of a layout.
#include <iostream>

#include "app/cli/exit_codes.h"
#include "app/cli/format.h"
#include "core/layout/layout_summary.h"
#include "core/layout/layout_validate.h"
#include "app/cli/layout_flags.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

namespace {

void print_issues(const std::vector<InputIssue>& issues, const char* prefix) {
    for (const auto& i : issues) std::cerr << prefix << i.to_string() << "\n";
}

void print_human(const nlohmann::json& model, const nlohmann::json& mesh, bool show_ranks) {
    std::cout << "Model " << model["name"].get<std::string>() << " ("
              << model["family"].get<std::string>() << ")\n"
              << "  layers " << model["layers"] << ", hidden " << model["hidden_size"]
              << ", heads " << model["num_heads"] << " (" << model["num_kv_heads"] << " KV, "
              << model["attention"].get<std::string>() << "), ffn " << model["ffn_hidden_size"]
              << ", vocab " << model["vocab_size"] << "\n"
              << "  parameters " << human_count(model["params_total"].get<double>())
              << " total, " << human_count(model["params_active"].get<double>()) << " active\n"
              << "  training FLOPs per token at seq " << model["seq_length"] << ": "
              << human_flops(model["flops_per_token"].get<double>()) << "\n";
    if (model.contains("full_attention_blocks")) {
        const auto& f = model["full_attention_blocks"];
        std::cout << "  full-attention blocks " << f["layers"] << ": head dim " << f["head_dim"] << ", "
                  << f["num_kv_heads"] << " KV heads" << (f["values_are_keys"].get<bool>() ? ", keys as values" : "")
                  << "\n";
    }
    if (model.contains("moe")) {
        const auto& moe = model["moe"];
        std::cout << "  experts " << moe["num_experts"] << " (top-" << moe["top_k"] << ", "
                  << moe["num_shared_experts"] << " shared) in " << moe["moe_layers"]
                  << " layers\n";
    }
    const auto& axes = mesh["axes"];
    std::cout << "Mesh " << mesh["world_size"] << " GPUs (" << mesh["nodes"] << " nodes × "
              << mesh["gpus_per_node"] << " " << mesh["gpu"].get<std::string>() << ") order "
              << mesh["order"].get<std::string>() << "\n"
              << "  tp " << axes["tp"] << "  pp " << axes["pp"] << "  dp " << axes["dp"]
              << "  cp " << axes["cp"] << "  ep " << axes["ep"] << "  etp " << axes["etp"]
              << "  vpp " << axes["vpp"] << "\n";
    std::cout
              << "  micro-batches per step " << mesh["micro_batches"] << ", layers per stage "
              << mesh["layers_per_stage"].dump() << "\n";
    for (const auto& [axis, g] : mesh["groups"].items()) {
        if (g["size"].get<int>() <= 1) continue;
        const bool expert_axis = axis == "ep" || axis == "etp" || axis == "edp";
        if (expert_axis && !model.contains("moe")) continue;
        std::cout << "  " << pad_right(axis, 4) << g["count"] << " groups of " << g["size"]
                  << (g["crosses_nodes"].get<bool>() ? ", crossing nodes" : ", inside a node")
                  << "\n";
    }
    if (mesh.contains("zero")) {
        const auto& z = mesh["zero"];
        std::cout << "  ZeRO-" << z["stage"] << " shard groups of " << z["shard_group_size"] << " ("
                  << z["replicas"] << " replicas)"
                  << (z["shard_group_crosses_nodes"].get<bool>() ? ", crossing nodes" : ", inside a node") << "\n";
    }
    if (show_ranks) {
        std::cout << "  rank  node gpu   tp  cp  dp  pp  ep etp edp\n";
        for (const auto& r : mesh["ranks"]) {
            std::cout << "  " << pad_left(std::to_string(r["rank"].get<int>()), 4)
                      << pad_left(std::to_string(r["node"].get<int>()), 6)
                      << pad_left(std::to_string(r["local_gpu"].get<int>()), 4);
            for (const char* k : {"tp", "cp", "dp", "pp", "ep", "etp", "edp"}) {
                std::cout << pad_left(std::to_string(r[k].get<int>()), 4);
            }
            std::cout << "\n";
        }
    }
}

}  // namespace

Verb add_describe_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("describe", "Summarise the model and the device mesh of a layout");
    auto flags = std::make_shared<LayoutFlags>(cmd);
    auto json = std::make_shared<bool>(false);
    auto ranks = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json,
                  "Print JSON: model.params_total, model.params_active, model.flops_per_token, "
                  "model.local_attention (models with windows or chunks), mesh.world_size, mesh.ranks[]");
    cmd->add_flag("--ranks", *ranks, "List every rank's coordinates in the table output");
    cmd->footer("Exit codes: 0 success, 2 bad input (an invalid layout; the message names the "
                "field).");
    return {cmd, [flags, json, ranks]() {
                const Layout layout = flags->build();
                const auto result = validate_layout(layout, flags->source());
                print_issues(result.warnings, "warning: ");
                if (!result.valid()) throw InputError(result.errors);
                const auto model = model_summary_json(layout.model, layout.training.seq_length);
                const auto mesh = mesh_summary_json(layout, *json || *ranks);
                if (*json) {
                    std::cout << nlohmann::json{{"model", model}, {"mesh", mesh}}.dump(2) << "\n";
                } else {
                    print_human(model, mesh, *ranks);
                }
                return kExitOk;
            }};
}

namespace {
Verb make_describe_verb(CLI::App& app) { return add_describe_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(20, make_describe_verb);

}  // namespace meshwork::cli
