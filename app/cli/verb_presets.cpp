// meshwork-cli presets: the bundled models, clusters, GPU kinds and example layouts.
#include <algorithm>
#include <iostream>

#include "core/cluster/cluster_spec.h"
#include "core/common/resources.h"
#include "app/cli/exit_codes.h"
#include "app/cli/format.h"
#include "core/model/hf_config.h"
#include "core/model/layer_graph.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

Verb add_presets_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("presets", "List the bundled model, cluster and GPU presets");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "Print JSON (keys: models[], clusters[], gpus[], layouts[])");
    cmd->footer("Exit codes: 0 success, 1 the resource folder cannot be read.");
    return {cmd, [json]() {
                nlohmann::json out;
                out["models"] = nlohmann::json::array();
                out["clusters"] = nlohmann::json::array();
                out["gpus"] = nlohmann::json::array();
                for (const auto& name : list_presets(PresetKind::Model)) {
                    const ModelSpec m = load_model(name);
                    const LayerGraph g = build_layer_graph(m);
                    out["models"].push_back({{"name", name},
                                             {"family", m.family},
                                             {"params_total", g.params_total},
                                             {"params_active", g.params_active},
                                             {"layers", m.num_layers}});
                }
                for (const auto& name : list_presets(PresetKind::Cluster)) {
                    const ClusterSpec c = load_cluster(name);
                    out["clusters"].push_back({{"name", name},
                                               {"gpu", c.gpu.kind},
                                               {"gpus_per_node", c.gpus_per_node},
                                               {"max_nodes", c.max_nodes},
                                               {"description", c.description}});
                }
                for (const auto& name : list_presets(PresetKind::Gpu)) out["gpus"].push_back(name);
                out["layouts"] = list_presets(PresetKind::Layout);
                if (*json) {
                    std::cout << out.dump(2) << "\n";
                    return kExitOk;
                }
                std::cout << "Models (" << resource_dir() << "/models)\n";
                for (const auto& m : out["models"]) {
                    std::cout << "  " << pad_right(m["name"].get<std::string>(), 18)
                              << pad_right(m["family"].get<std::string>(), 13)
                              << pad_left(human_count(m["params_total"].get<double>()), 9)
                              << " params, "
                              << pad_left(human_count(m["params_active"].get<double>()), 8)
                              << " active, " << m["layers"].get<int>() << " layers\n";
                }
                std::cout << "Clusters\n";
                std::size_t gpu_width = 11;  // the GPU column fits the longest kind
                for (const auto& c : out["clusters"])
                    gpu_width = std::max(gpu_width, c["gpu"].get<std::string>().size() + 2);
                for (const auto& c : out["clusters"]) {
                    std::cout << "  " << pad_right(c["name"].get<std::string>(), 18)
                              << pad_right(c["gpu"].get<std::string>(), gpu_width)
                              << c["gpus_per_node"].get<int>() << " GPUs/node, up to "
                              << c["max_nodes"].get<int>() << " nodes\n";
                }
                std::cout << "GPU kinds: ";
                for (const auto& g : out["gpus"]) std::cout << g.get<std::string>() << " ";
                std::cout << "\nExample layouts: ";
                for (const auto& l : out["layouts"]) std::cout << l.get<std::string>() << " ";
                std::cout << "\n";
                return kExitOk;
            }};
}

namespace {
Verb make_presets_verb(CLI::App& app) { return add_presets_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(10, make_presets_verb);

}  // namespace meshwork::cli
