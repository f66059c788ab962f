#include "layout_flags.h"

#include "common/error.h"

namespace meshwork::cli {

struct LayoutFlags::Values {
    std::string file;
    std::string model, cluster, order, schedule, recompute, dtype, layers_per_stage;
    int gpus = 0, nodes = 0, tp = 0, pp = 0, dp = 0, cp = 0, ep = 0, etp = 0, vpp = 0;
    int mbs = 0, gbs = 0, seq = 0, zero = 0;
    bool sp = false, no_sp = false;
    std::map<std::string, CLI::Option*> options;
};

LayoutFlags::LayoutFlags(CLI::App* c) : v_(std::make_shared<Values>()) {
    auto& v = *v_;
    auto add = [&](const std::string& name, auto& target, const std::string& help) {
        v.options[name] = c->add_option(name, target, help);
    };
    v.options["layout"] =
        c->add_option("layout", v.file, "Layout file (docs/layout-format.md); flags override it");
    add("--model", v.model, "Model preset (meshwork-cli presets) or a Hugging Face config.json");
    add("--cluster", v.cluster, "Cluster preset or cluster JSON");
    add("--gpus", v.gpus, "World size (GPUs)");
    add("--nodes", v.nodes, "World size in nodes (× GPUs per node)");
    add("--tp", v.tp, "Tensor-parallel size");
    add("--pp", v.pp, "Pipeline-parallel size");
    add("--dp", v.dp, "Data-parallel size (default: world / (tp·pp·cp))");
    add("--cp", v.cp, "Context-parallel size");
    add("--ep", v.ep, "Expert-parallel size");
    add("--etp", v.etp, "Tensor-parallel size inside experts");
    add("--vpp", v.vpp, "Virtual pipeline stages per rank (interleaved schedule)");
    add("--order", v.order, "Axis order for rank mapping (default tp-cp-ep-dp-pp)");
    add("--mbs", v.mbs, "Micro-batch size (sequences)");
    add("--gbs", v.gbs, "Global batch size (sequences)");
    add("--seq", v.seq, "Sequence length (tokens)");
    add("--schedule", v.schedule, "Pipeline schedule: gpipe, 1f1b, interleaved");
    add("--recompute", v.recompute, "Activation recomputation: none, selective, full");
    add("--zero", v.zero, "ZeRO stage 0-3 (1 = distributed optimizer)");
    add("--dtype", v.dtype, "Training precision: bf16, fp16, fp8, fp32");
    add("--layers-per-stage", v.layers_per_stage, "Uneven pipeline split, e.g. 7,8,8,7");
    v.options["--sp"] = c->add_flag("--sp", v.sp, "Sequence parallelism with TP");
    v.options["--no-sp"] = c->add_flag("--no-sp", v.no_sp, "No sequence parallelism");
    v.options["--sp"]->excludes(v.options["--no-sp"]);
}

std::string LayoutFlags::source() const {
    return v_->options.at("layout")->count() ? v_->file : std::string("<flags>");
}

LayoutOverrides LayoutFlags::overrides() const {
    const auto& v = *v_;
    auto given = [&](const std::string& name) { return v.options.at(name)->count() > 0; };
    LayoutOverrides o;
    if (given("--model")) o.model = v.model;
    if (given("--cluster")) o.cluster = v.cluster;
    if (given("--gpus")) o.gpus = v.gpus;
    if (given("--nodes")) o.nodes = v.nodes;
    if (given("--tp")) o.tp = v.tp;
    if (given("--pp")) o.pp = v.pp;
    if (given("--dp")) o.dp = v.dp;
    if (given("--cp")) o.cp = v.cp;
    if (given("--ep")) o.ep = v.ep;
    if (given("--etp")) o.etp = v.etp;
    if (given("--vpp")) o.vpp = v.vpp;
    if (given("--order")) o.order = v.order;
    if (given("--mbs")) o.mbs = v.mbs;
    if (given("--gbs")) o.gbs = v.gbs;
    if (given("--seq")) o.seq = v.seq;
    if (given("--schedule")) o.schedule = v.schedule;
    if (given("--recompute")) o.recompute = v.recompute;
    if (given("--zero")) o.zero = v.zero;
    if (given("--dtype")) o.dtype = v.dtype;
    if (given("--sp")) o.sequence_parallel = true;
    if (given("--no-sp")) o.sequence_parallel = false;
    if (given("--layers-per-stage")) {
        std::vector<int> split;
        std::string cur;
        for (char ch : v.layers_per_stage + ",") {
            if (ch == ',') {
                try {
                    std::size_t used = 0;
                    const int n = std::stoi(cur, &used);
                    if (used != cur.size()) throw std::invalid_argument(cur);
                    split.push_back(n);
                } catch (const std::exception&) {
                    throw InputError("<flags>", "--layers-per-stage",
                                     "'" + cur + "' is not an integer in '" + v.layers_per_stage +
                                         "'");
                }
                cur.clear();
            } else {
                cur += ch;
            }
        }
        o.layers_per_stage = split;
    }
    return o;
}

Layout LayoutFlags::build() const {
    std::optional<std::string> file;
    if (v_->options.at("layout")->count()) file = v_->file;
    return build_layout(file, overrides());
}

}  // namespace meshwork::cli
