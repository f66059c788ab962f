// Layout -> a torchtitan main config module: a Python function returning Trainer.Config, run
// with --module/--config (torchtitan/config/README.md at kTorchtitanMainCommit). The shipped
// config function of the flavor supplies data, tokenizer, optimizer and loss; this module
// replaces what the layout decides: the model spec, the batch in tokens, the parallelism and
// activation checkpointing.
#include <cctype>

#include "core/export/canonical_layout.h"
#include "core/export/torchtitan_config.h"
#include "core/export/torchtitan_facts.h"

namespace meshwork {

namespace {


std::string py_bool(bool b) { return b ? "True" : "False"; }

// A comment line: no newline may end it early.
std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return s;
}

}  // namespace

std::string torchtitan_function_name(const std::string& layout_name) {
    std::string out;
    for (char c : layout_name) {
        const auto u = static_cast<unsigned char>(c);
        out += std::isalnum(u) != 0 ? static_cast<char>(std::tolower(u)) : '_';
    }
    // The module's own imports (and Python's keywords) must not be shadowed: a layout
    // imported from config_registry.py would otherwise define config_registry() over the
    // module it calls (config_registry.deepseek_v3_671b: AttributeError).
    static constexpr const char* kTaken[] = {"config_registry", "model_registry", "ParallelismConfig", "Trainer",
                                             "FullAC", "SelectiveAC", "Float8LinearConverter",
                                             "Float8GroupedExpertsConverter", "False", "None", "True", "and",
                                             "as", "assert", "async", "await", "break", "class", "continue", "def",
                                             "del", "elif", "else", "except", "finally", "for", "from", "global",
                                             "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
                                             "pass", "raise", "return", "try", "while", "with", "yield"};
    bool taken = false;
    for (const char* t : kTaken) taken = taken || out == t;
    if (taken || out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) != 0) out = "layout_" + out;
    return out;
}

ExportResult export_torchtitan(const Layout& layout) {
    const Layout l = canonical_layout(layout);
    const auto& m = l.parallel.mesh;
    const auto& t = l.training;
    ExportResult r;
    auto& lost = r.lost;

    const TorchtitanFlavor* known = torchtitan_flavor_of_layout(l, TorchtitanTarget::Main);
    const std::string name = known != nullptr ? known->name : "llama3";
    std::string flavor = known != nullptr ? known->flavor : "";
    // A flavor without a shipped config function starts from the model's debug config, whose
    // model spec the module replaces.
    const std::string base = known == nullptr                 ? "llama3_debugmodel"
                             : std::string(known->main_config).empty() ? name + "_debugmodel"
                                                                       : known->main_config;
    if (known == nullptr) {
        flavor = l.model_ref.empty() ? l.model.name : l.model_ref;
        lost.push_back("model " + flavor +
                       ": torchtitan has no flavor of this architecture "
                       "(written as flavor \"" +
                       flavor + "\", which torchtitan must register)");
    }
    const std::string fn = torchtitan_function_name(l.name);
    const bool fp8 = t.dtype == DType::Fp8;
    const TorchtitanDataParallel dp =
        plan_torchtitan_data_parallel(l, TorchtitanTarget::Main, lost);

    std::string s;
    s += "# torchtitan config module for the Meshwork layout '" + one_line(l.name) + "'\n";
    s += "# (meshwork-cli export --format torchtitan), for torchtitan main as of commit " +
         std::string(kTorchtitanMainCommit).substr(0, 12) + ".\n";
    s += "# " + one_line(l.description.empty() ? l.name : l.description) + "\n";
    s +=
        "# Put this file where Python imports it (e.g. torchtitan_recipes/" + fn + ".py) and run\n";
    s += "# from the torchtitan repository root:\n";
    s += "#   NGPU=" + std::to_string(l.gpus) + " MODULE=torchtitan_recipes." + fn +
         " CONFIG=" + fn + " ./run_train.sh\n";
    s += "# or: torchrun ... -m torchtitan.train --module torchtitan_recipes." + fn + " --config " +
         fn + "\n\n";
    if (fp8) {
        s += "from torchtitan.components.quantization import Float8LinearConverter";
        s += l.model.is_moe() ? ", Float8GroupedExpertsConverter\n" : "\n";
    }
    s += "from torchtitan.config import ParallelismConfig\n";
    if (t.recompute != Recompute::None) {
        s += std::string("from torchtitan.distributed.activation_checkpoint import ") +
             (t.recompute == Recompute::Full ? "FullAC" : "SelectiveAC") + "\n";
    }
    // The base is called through its module: the layout's function may have the same name.
    s += "from torchtitan.models." + name + " import config_registry, model_registry\n";
    s += "from torchtitan.trainer import Trainer\n\n\n";
    s += "def " + fn + "() -> Trainer.Config:\n";
    s += "    config = config_registry." + base + "()\n";
    s += "    config.model_spec = model_registry(" + torchtitan_quoted(flavor);
    if (fp8) {
        // recipe_name (torchtitan b5bcd76c components/quantization/float8.py:58): written for
        // torchao's rowwise; the other recipes keep the class default.
        s += l.training.fp8_recipe == Fp8Recipe::Rowwise ? ", converters=[Float8LinearConverter.Config(recipe_name=\"rowwise\")"
                                                         : ", converters=[Float8LinearConverter.Config()";
        if (l.model.is_moe()) s += ", Float8GroupedExpertsConverter.Config()";
        s += "]";
    }
    s += ")\n";

    // The batch in tokens: one micro-batch of micro_batch_size sequences per DP rank; with
    // pp > 1 all micro-batches of a step go through one pipeline round, so gradient
    // accumulation is 1; without it torchtitan accumulates global / (micro · dp) steps.
    const long long seq = t.seq_length;
    s += "    config.training.max_context_length = " + std::to_string(seq) + "\n";
    s += "    config.training.num_tokens_per_microbatch_per_dp_rank = " +
         std::to_string(seq * t.micro_batch_size) + "  # " + std::to_string(t.micro_batch_size) +
         " × " + std::to_string(seq) + "\n";
    s += "    config.training.num_tokens_per_train_step = " +
         std::to_string(seq * t.global_batch_size) + "  # " + std::to_string(t.global_batch_size) +
         " sequences\n";
    if (t.dtype == DType::Fp32) {
        s += "    config.training.mixed_precision_param = \"float32\"\n";
    } else {
        s += "    config.training.mixed_precision_param = \"bfloat16\"\n";
        if (t.dtype == DType::Fp16)
            lost.push_back("fp16: torchtitan trains in bfloat16 or float32");
        if (t.dtype == DType::Tf32) lost.push_back("tf32: torchtitan has no TF32 switch");
    }
    if (torchtitan_cpu_offload(layout)) s += "    config.training.enable_cpu_offload = True\n";
    // CUDA graphs refuse pipeline parallelism and the default EP token dispatcher.
    if (m.pp > 1 || m.ep > 1) s += "    config.training.disable_cuda_graphs = True\n";

    s += "    config.parallelism = ParallelismConfig(\n";
    s += "        data_parallel_replicate_degree=" + std::to_string(dp.replicate) + ",\n";
    s += "        data_parallel_shard_degree=" + std::to_string(dp.shard) + ",\n";
    if (!dp.reshard.empty())
        s += "        fsdp_reshard_after_forward=" + torchtitan_quoted(dp.reshard) + ",\n";
    s += "        tensor_parallel_degree=" + std::to_string(m.tp) + ",\n";
    if (m.tp > 1) {
        s += "        enable_sequence_parallel=" + py_bool(l.parallel.sequence_parallel) + ",\n";
    }
    s += "        pipeline_parallel_degree=" + std::to_string(m.pp) + ",\n";
    if (m.pp > 1) {
        s += "        pipeline_parallel_schedule=" +
             torchtitan_quoted(torchtitan_schedule_name(t.schedule)) + ",\n";
        s += "        num_pp_microbatches=" + std::to_string(l.num_micro_batches()) + ",\n";
        const TorchtitanStages st = torchtitan_stages(l, lost);
        if (st.written) {
            s += "        pipeline_parallel_layers_per_stage=" +
                 std::to_string(st.layers_per_stage) + ",\n";
            s += "        pipeline_parallel_first_stage_less_layers=" +
                 std::to_string(st.first_less) + ",\n";
            s +=
                "        pipeline_parallel_last_stage_less_layers=" + std::to_string(st.last_less) +
                ",\n";
        }
    }
    s += "        context_parallel_degree=" + std::to_string(m.cp) + ",\n";
    if (l.model.is_moe() || m.ep > 1)
        s += "        expert_parallel_degree=" + std::to_string(m.ep) + ",\n";
    s += "    )\n";
    // Fused element-wise kernels are torch.compile's; torchtitan also refuses async TP unless
    // the model is compiled (config/configs.py:307-312).
    if (torchtitan_writes_compile(l)) s += "    config.compile.enable = True\n";
    if (torchtitan_writes_async_tp(l)) s += "    config.compile.enable_async_tensor_parallel = True\n";
    torchtitan_common_lost(l, lost);

    switch (t.recompute) {
        case Recompute::None:
            s += "    config.activation_checkpoint = None\n";
            break;
        case Recompute::Selective:
        case Recompute::SelectiveOp:
            // Op-level selective AC: saves matmul outputs, recomputes the cheap ops around them.
            s += "    config.activation_checkpoint = SelectiveAC.Config()\n";
            break;
        case Recompute::Full:
            s += "    config.activation_checkpoint = FullAC.Config()\n";
            break;
    }
    s += "    return config\n";
    r.text = s;
    return r;
}

}  // namespace meshwork
