// Megatron-Bridge recipes (Python functions building a ConfigContainer) read as layouts: real
// performance recipes of NVIDIA-NeMo/Megatron-Bridge 067f987d in a checkout's layout
// (tests/fixtures/bridge/src, SOURCES.txt), the same recipe outside a checkout, and the
// refusals, each naming the file, line and setting.
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/common/error.h"
#include "core/export/importer.h"
#include "core/export/python_source.h"
#include "core/export/text_file.h"
#include "core/layout/layout_validate.h"

using namespace meshwork;

namespace {

std::string recipe_path(const std::string& rel) {
    return std::string(MESHWORK_TEST_FIXTURES) + "/bridge/src/megatron/bridge/perf_recipes/" + rel;
}

ImportResult import_recipe(const std::string& path, const std::string& function, ImportOptions o = {}) {
    o.config_function = function;
    return import_config(read_text_input(path), path, ImportFormat::Auto, o);
}

// The first issue of a refused import, "field: message".
std::string refusal(const std::string& text, const std::string& file, ImportOptions o) {
    try {
        (void)import_config(text, file, ImportFormat::Auto, o);
    } catch (const InputError& e) {
        return e.issues().front().field + ": " + e.issues().front().message;
    }
    return "(imported)";
}

bool any_ignored(const ImportResult& r, const std::string& text_part, const std::string& reason_part) {
    return std::any_of(r.ignored.begin(), r.ignored.end(), [&](const IgnoredInput& i) {
        return i.text.find(text_part) != std::string::npos && i.reason.find(reason_part) != std::string::npos;
    });
}

// A one-function recipe: ConfigContainer(sections), micro-batch 1 and the sequence length,
// then `body` (statements indented by four).
ImportResult import_recipe_body(const std::string& body, const ImportOptions& o, int seq = 8192,
                                const std::string& sections = "model=None, train=None") {
    const std::string text = "from megatron.bridge.training.config import ConfigContainer\n\n"
                             "def recipe() -> ConfigContainer:\n    cfg = ConfigContainer(" + sections + ")\n"
                             "    cfg.train.micro_batch_size = 1\n    cfg.model.seq_length = " + std::to_string(seq) +
                             "\n" + body + "    return cfg\n";
    return import_config(text, "r.py", ImportFormat::Bridge, o);
}

std::string qwen3_30b_config() {
    const std::string path = (std::filesystem::temp_directory_path() / "mw_bridge_qwen3_30b.json").string();
    std::ofstream(path) << R"({"model_type":"qwen3_moe","hidden_size":2048,"num_hidden_layers":48,
        "num_attention_heads":32,"num_key_value_heads":4,"head_dim":128,"intermediate_size":6144,
        "moe_intermediate_size":768,"num_experts":128,"num_experts_per_tok":8,"decoder_sparse_step":1,
        "mlp_only_layers":[],"norm_topk_prob":true,"vocab_size":151936,"max_position_embeddings":40960,
        "rms_norm_eps":1e-6,"rope_theta":1000000.0,"hidden_act":"silu","tie_word_embeddings":false,
        "attention_bias":false})";
    return path;
}

}  // namespace

class TestBridgeRecipeImport : public QObject {
    Q_OBJECT
  private slots:
    void python_statements_and_expressions() {
        const auto st = py_statements(
            "def f() -> X:\n    \"\"\"Doc\n    more.\"\"\"\n    cfg.a = g(1, k=[\"x\", 'y'],\n          n=8 * 1024)  # c\n"
            "    return cfg\n");
        QCOMPARE(st.size(), std::size_t(4));
        QCOMPARE(st[0].indent, 0);
        QCOMPARE(st[2].line, 4);
        QCOMPARE(st[2].indent, 4);
        QCOMPARE(st[3].line, 6);
        std::string target, value;
        QVERIFY(split_py_assignment(st[2].text, target, value));
        QCOMPARE(target, std::string("cfg.a"));
        const PyExpr e = parse_py_expr(value);
        QCOMPARE(e.kind, PyExpr::Call);
        QCOMPARE(e.s, std::string("g"));
        QCOMPARE(e.items.front().i, 1LL);
        QCOMPARE(e.keywords.size(), std::size_t(2));
        QCOMPARE(e.keywords[0].second.items[1].s, std::string("y"));
        QCOMPARE(e.keywords[1].second.i, 8192LL);
        QCOMPARE(parse_py_expr("2 + 3 * 4").i, 14LL);  // * binds tighter than +
        QCOMPARE(parse_py_expr("2 * 3 + 4 * 5 - 6").i, 20LL);
        QVERIFY(!split_py_assignment("x == 1", target, value));
        QVERIFY(!split_py_assignment("f(a=1)", target, value));
        QCOMPARE(parse_py_expr("a.b(c)[0]").kind, PyExpr::Subscript);
        QCOMPARE(parse_py_expr("lambda x: x").kind, PyExpr::Other);
        const PyExpr cond = parse_py_expr("1 if vp is None else vp");
        QCOMPARE(cond.kind, PyExpr::Cond);
        QCOMPARE(cond.items[1].kind, PyExpr::Compare);
        QCOMPARE(cond.items[1].s, std::string("is"));
        const PyExpr layout = parse_py_expr("[[\"embedding\"] + [\"decoder\"] * 4] + [[\"decoder\"] * 4] * 2");
        QCOMPARE(layout.kind, PyExpr::BinOp);
        QCOMPARE(parse_py_expr("{(1, 1): None, (4, 2): [\"loss\"]}").items.size(), std::size_t(2));
        std::string conditionals;
        for (int i = 0; i < 50000; ++i) conditionals += "1 if 1 else ";
        QCOMPARE(parse_py_expr(conditionals + "1").kind, PyExpr::Other);
        // Hostile nesting is refused, not recursed into.
        QCOMPARE(parse_py_expr(std::string(100000, '(') + "1" + std::string(100000, ')')).kind, PyExpr::Other);
        QCOMPARE(parse_py_expr(std::string(100000, '-') + "1").kind, PyExpr::Other);
        QCOMPARE(parse_py_expr("[[[[1]]]]").kind, PyExpr::List);
        const PyExpr chain = parse_py_expr("AutoBridge.from_hf_pretrained(\"org/m\").to_megatron_provider(load_weights=False)");
        QCOMPARE(chain.kind, PyExpr::Call);
        QCOMPARE(chain.s, std::string("to_megatron_provider"));
        QVERIFY(chain.object && chain.object->s == "AutoBridge.from_hf_pretrained");
    }

    // The B200 Qwen3 30B recipe (perf_recipes/qwen/b200/qwen3_moe.py:177) over its H100 base
    // (recipes/qwen/h100/qwen3_moe.py:32, :146) and _pretrain_common's DDP settings.
    void qwen3_30b_b200_bf16() {
        const std::string path = recipe_path("qwen/b200/qwen3_moe.py");
        QCOMPARE(detect_import_format(read_text_input(path)), ImportFormat::Bridge);
        ImportOptions o;
        o.model = qwen3_30b_config();
        const ImportResult r = import_recipe(path, "qwen3_30b_a3b_pretrain_8gpu_b200_bf16_config", o);
        const Layout& l = r.layout;
        QCOMPARE(r.format, ImportFormat::Bridge);
        QCOMPARE(l.cluster_ref, std::string("dgx-b200"));
        QCOMPARE(l.gpus, 8);
        QCOMPARE(l.parallel.mesh.tp, 1);
        QCOMPARE(l.parallel.mesh.pp, 1);
        QCOMPARE(l.parallel.mesh.ep, 8);
        QCOMPARE(l.parallel.mesh.dp, 8);
        QCOMPARE(l.parallel.moe_dispatcher, MoeDispatcher::Flex);
        QCOMPARE(l.parallel.moe_flex_backend, MoeFlexBackend::HybridEP);
        QCOMPARE(l.training.micro_batch_size, 4);
        QCOMPARE(l.training.global_batch_size, 512);
        QCOMPARE(l.training.seq_length, 4096);
        QCOMPARE(l.training.dtype, DType::Bf16);
        QVERIFY(l.training.grad_reduce_in_bf16);  // _benchmark_common, perf_recipes/_common.py:75
        QCOMPARE(l.training.zero_stage, 1);       // _pretrain_common's distributed optimizer
        QCOMPARE(l.training.cuda_graphs, CudaGraphs::PerLayer);
        // cuda_graph_scope = ["attn", "moe_router", "moe_preprocess"] (qwen/b200/qwen3_moe.py:203).
        QCOMPARE(graph_module_names(l.training.cuda_graph_modules),
                 (std::vector<std::string>{"attn", "moe_router", "moe_preprocess"}));
        QCOMPARE(l.parallel.tp_comm_overlap, TpOverlap::None);
        QVERIFY(any_ignored(r, "tp_comm_overlap", "comm_overlap.py:442-451"));
        // _benchmark_common's ifs: one whose condition the recipe's settings decide runs
        // (moe_flex_dispatcher_backend "hybridep", recipe line 307: moe_hybridep_num_sms, then
        // the recipe's own 64); one the reader cannot compute (isinstance) is listed, not read.
        QVERIFY(!any_ignored(r, "moe_hybridep_num_sms", "inside 'if"));
        QVERIFY(any_ignored(r, "cfg.mixed_precision.grad_reduce_in_fp32", "the condition is not computed from constants"));
        QVERIFY(r.warnings.empty());
    }

    void qwen3_30b_b200_mxfp8() {
        ImportOptions o;
        o.model = qwen3_30b_config();
        const ImportResult r = import_recipe(recipe_path("qwen/b200/qwen3_moe.py"), "qwen3_30b_a3b_pretrain_8gpu_b200_fp8mx_config", o);
        QCOMPARE(r.layout.training.dtype, DType::Fp8);
        QCOMPARE(r.layout.training.fp8_recipe, Fp8Recipe::Mxfp8);
        QVERIFY(r.layout.parallel.moe_a2a_overlap);
    }

    // GPT-OSS 120B on 64 GB200 in MXFP8: full-iteration graphs over HybridEP's per-rank token
    // budget (perf_recipes/gpt_oss/common.py:25-36, moe_expert_rank_capacity_factor 1.5): static
    // shapes, so no "cannot capture" warning (it was given before the budget was read).
    void gpt_oss_120b_gb200_full_iteration_with_rank_budget() {
        const ImportResult r = import_recipe(recipe_path("gpt_oss/gb200/gpt_oss.py"), "gpt_oss_120b_pretrain_64gpu_gb200_fp8mx_config");
        const Layout& l = r.layout;
        QCOMPARE(l.training.cuda_graphs, CudaGraphs::FullIteration);
        QCOMPARE(l.training.moe_rank_capacity_factor, 1.5);
        QCOMPARE(l.parallel.moe_flex_backend, MoeFlexBackend::HybridEP);
        QVERIFY(std::none_of(r.warnings.begin(), r.warnings.end(),
                             [](const std::string& w) { return w.find("cannot capture") != std::string::npos; }));
        const auto v = validate_layout(l, "gpt_oss.py");
        QVERIFY(v.valid());
        QVERIFY(std::none_of(v.warnings.begin(), v.warnings.end(),
                             [](const InputIssue& w) { return w.to_string().find("training.cuda_graphs") != std::string::npos; }));
    }

    // GPT-OSS 120B on 64 B200: the model from the preset made from openai/gpt-oss-120b, which
    // the base recipe names (recipes/gpt_oss/h100/gpt_oss.py:170).
    void gpt_oss_120b_b200_model_from_repository() {
        const ImportResult r = import_recipe(recipe_path("gpt_oss/b200/gpt_oss.py"), "gpt_oss_120b_pretrain_64gpu_b200_bf16_config");
        const Layout& l = r.layout;
        QCOMPARE(l.model_ref, std::string("gpt-oss-120b"));
        QCOMPARE(l.gpus, 64);
        QCOMPARE(l.parallel.mesh.ep, 8);
        QCOMPARE(l.training.micro_batch_size, 4);
        QCOMPARE(l.training.global_batch_size, 1280);
        QCOMPARE(l.training.recompute, Recompute::Selective);
        QCOMPARE(l.training.recompute_modules.size(), std::size_t(2));
        QVERIFY(std::any_of(r.notes.begin(), r.notes.end(),
                            [](const std::string& n) { return n.find("openai/gpt-oss-120b") != std::string::npos; }));
    }

    // Dense Llama 3 70B on 64 H100 with FP8 current scaling: the layout of Bridge's published
    // H100 LLAMA3_70B row (TP4 PP8 VP5, GBS 256; tst_cost_published_heldout), with TP overlap
    // (CommOverlapConfig with TP 4 and sequence parallelism) and the interleaved schedule.
    void llama3_70b_h100_fp8cs() {
        const ImportResult r = import_recipe(recipe_path("llama/h100/llama3.py"), "llama3_70b_pretrain_64gpu_h100_fp8cs_config");
        const Layout& l = r.layout;
        QCOMPARE(l.model_ref, std::string("llama3-70b"));
        QCOMPARE(l.cluster_ref, std::string("dgx-h100"));
        QCOMPARE(l.parallel.mesh.tp, 4);
        QCOMPARE(l.parallel.mesh.pp, 8);
        QCOMPARE(l.parallel.vpp, 5);
        QCOMPARE(l.parallel.mesh.dp, 2);
        QVERIFY(l.parallel.sequence_parallel);
        QCOMPARE(l.parallel.tp_comm_overlap, TpOverlap::Ring);
        QCOMPARE(l.training.schedule, Schedule::Interleaved);
        QCOMPARE(l.training.dtype, DType::Fp8);
        QCOMPARE(l.training.fp8_recipe, Fp8Recipe::Tensorwise);
        QCOMPARE(l.training.global_batch_size, 256);
        QCOMPARE(l.training.seq_length, 8192);
        // The library recipe it starts from sets Transformer Engine's cross entropy
        // (recipes/llama/h100/llama3.py at 067f987d); Bridge pins TE 2.18.
        QCOMPARE(l.training.cross_entropy, CrossEntropy::Te);
        QVERIFY(r.warnings.empty());
    }

    // The loss: Transformer Engine's cross entropy with loss fusion on (Bridge's provider
    // default) and cross_entropy_fusion_impl "te"; Megatron-LM's vocabulary-parallel one
    // otherwise (fusion off, or the "native" implementation).
    void loss_implementation() {
        ImportOptions o;
        o.model = "llama3-8b";
        o.gpus = 8;
        const auto loss_of = [&](const std::string& body) {
            return import_recipe_body(body, o).layout.training.cross_entropy;
        };
        QCOMPARE(loss_of(""), CrossEntropy::VocabParallel);
        QCOMPARE(loss_of("    cfg.model.cross_entropy_fusion_impl = \"te\"\n"), CrossEntropy::Te);
        QCOMPARE(loss_of("    cfg.model.cross_entropy_loss_fusion = True\n    cfg.model.cross_entropy_fusion_impl = \"te\"\n"),
                 CrossEntropy::Te);
        QCOMPARE(loss_of("    cfg.model.cross_entropy_loss_fusion = False\n    cfg.model.cross_entropy_fusion_impl = \"te\"\n"),
                 CrossEntropy::VocabParallel);
        QCOMPARE(loss_of("    cfg.model.cross_entropy_fusion_impl = \"native\"\n"), CrossEntropy::VocabParallel);
        // Read, not listed as ignored; the note says which Transformer Engine it assumes.
        const ImportResult te = import_recipe_body("    cfg.model.cross_entropy_fusion_impl = \"te\"\n", o);
        QVERIFY(!any_ignored(te, "cross_entropy", ""));
        QVERIFY(std::any_of(te.notes.begin(), te.notes.end(),
                            [](const std::string& n) { return n.find("te-inplace") != std::string::npos; }));
    }

    // NVFP4 (perf_recipes/llama/gb200/llama3.py:348-385 at 067f987d): _perf_precision("nvfp4")
    // is fp4 training (training/mixed_precision.py:405-417); the recipe's own
    // cfg.model.virtual_pipeline_model_parallel_size = 5 is Megatron-LM's
    // --num-virtual-stages-per-pipeline-rank; TP overlap off; whole-layer CUDA graphs.
    void llama3_70b_gb200_nvfp4() {
        const ImportResult r = import_recipe(recipe_path("llama/gb200/llama3.py"), "llama3_70b_pretrain_64gpu_gb200_nvfp4_config");
        const Layout& l = r.layout;
        QCOMPARE(l.cluster_ref, std::string("gb200-nvl72"));
        QCOMPARE(l.training.dtype, DType::Fp4);
        QCOMPARE(l.parallel.mesh.tp, 2);
        QCOMPARE(l.parallel.mesh.pp, 4);
        QCOMPARE(l.parallel.vpp, 5);
        QCOMPARE(l.training.schedule, Schedule::Interleaved);
        QCOMPARE(l.parallel.tp_comm_overlap, TpOverlap::None);
        QCOMPARE(l.training.cuda_graphs, CudaGraphs::PerLayer);
        QVERIFY(!any_ignored(r, "virtual_pipeline_model_parallel_size", ""));
        const ImportResult mx = import_recipe(recipe_path("llama/gb200/llama3.py"), "llama3_70b_pretrain_64gpu_gb200_fp8mx_config");
        QCOMPARE(mx.layout.training.dtype, DType::Fp8);
        QCOMPARE(mx.layout.training.fp8_recipe, Fp8Recipe::Mxfp8);
        QCOMPARE(mx.layout.parallel.vpp, 5);
    }

    // apply_flex_dispatcher_backend(cfg.model, "deepep") in the H100 base
    // (recipes/qwen/h100/qwen3_moe.py:137): flex with DeepEP on an H100, alltoall on a GB200,
    // where Bridge falls back (training/flex_dispatcher_backend.py:27-30, :60-62).
    void flex_backend_follows_the_gpu() {
        const std::string path = std::string(MESHWORK_TEST_FIXTURES) + "/bridge/src/megatron/bridge/recipes/qwen/h100/qwen3_moe.py";
        ImportOptions o;
        o.model = qwen3_30b_config();
        o.gpus = 8;
        o.cluster = "dgx-h100";
        const ImportResult h100 = import_recipe(path, "qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config", o);
        QCOMPARE(h100.layout.parallel.moe_dispatcher, MoeDispatcher::Flex);
        QCOMPARE(h100.layout.parallel.moe_flex_backend, MoeFlexBackend::DeepEP);
        o.cluster = "gb200-nvl72";
        const ImportResult gb200 = import_recipe(path, "qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config", o);
        QCOMPARE(gb200.layout.parallel.moe_dispatcher, MoeDispatcher::AllToAll);
        QVERIFY(std::any_of(gb200.notes.begin(), gb200.notes.end(),
                            [](const std::string& n) { return n.find("falls back to the alltoall") != std::string::npos; }));
    }

    // Kimi-K2 on 256 B200: the pipeline layout is a table the recipe looks up by PP and VP
    // (recipes/kimi/h100/kimi_k2.py:29-51: a dict keyed by (pp, vp), lists built with + and *,
    // `1 if vp_size is None else vp_size`), computed from constants: 61 layers as 4 on each of
    // 15 stages and 1 with the loss; the model from moonshotai/Kimi-K2-Instruct's preset.
    void kimi_k2_layout_table() {
        const ImportResult r = import_recipe(recipe_path("kimi/b200/kimi_k2.py"), "kimi_k2_pretrain_256gpu_b200_bf16_config");
        const Layout& l = r.layout;
        QCOMPARE(l.model_ref, std::string("kimi-k2"));
        QCOMPARE(l.parallel.mesh.pp, 16);
        QCOMPARE(l.parallel.mesh.ep, 16);
        QCOMPARE(l.placement.layers_per_stage.size(), std::size_t(16));
        QCOMPARE(l.placement.layers_per_stage.front(), 4);
        QCOMPARE(l.placement.layers_per_stage.back(), 1);
        QVERIFY(r.warnings.empty());
    }

    // The same recipe file outside a checkout: its own settings, a warning for the base that
    // was not read, and the model asked for.
    void outside_a_checkout() {
        const std::string text = read_text_input(recipe_path("qwen/b200/qwen3_moe.py"));
        const std::string lone = (std::filesystem::temp_directory_path() / "mw_lone_qwen3_moe.py").string();
        ImportOptions o;
        o.config_function = "qwen3_30b_a3b_pretrain_8gpu_b200_bf16_config";
        QVERIFY(refusal(text, lone, o).find("pass --model") != std::string::npos);
        o.model = qwen3_30b_config();
        const ImportResult r = import_config(text, lone, ImportFormat::Bridge, o);
        QCOMPARE(r.layout.parallel.mesh.ep, 8);
        QCOMPARE(r.layout.training.micro_batch_size, 4);
        QVERIFY(std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
            return w.find("qwen3_30b_a3b_pretrain_config() was not found") != std::string::npos;
        }));
    }

    // MixedPrecisionConfig(...) written out (recipes/kimi/h100/kimi_k2.py:174 at 067f987d) is
    // read field by field with the dataclass's defaults (training/mixed_precision.py:40-66);
    // the mixed-precision config's grad_reduce_in_fp32 is the one the run uses, written over
    // the DDP config's (training/config.py:2011-2016).
    void precision_written_out_and_its_gradient_reduction() {
        ImportOptions o;
        o.model = "llama3-8b";
        o.gpus = 8;
        const auto layout_of = [&](const std::string& body) { return import_recipe_body(body, o); };
        const ImportResult bf16 = layout_of(
            "    cfg.mixed_precision = MixedPrecisionConfig(bf16=True, params_dtype=torch.bfloat16, "
            "autocast_enabled=False)\n");
        QCOMPARE(bf16.layout.training.dtype, DType::Bf16);
        QVERIFY(!bf16.layout.training.grad_reduce_in_bf16);  // the dataclass's True
        QVERIFY(any_ignored(bf16, "cfg.mixed_precision.params_dtype", "mixed-precision detail"));
        const ImportResult bf16_reduce = layout_of(
            "    cfg.mixed_precision = MixedPrecisionConfig(bf16=True, grad_reduce_in_fp32=False)\n");
        QVERIFY(bf16_reduce.layout.training.grad_reduce_in_bf16);
        const ImportResult fp8 = layout_of("    cfg.mixed_precision = MixedPrecisionConfig(bf16=True, fp8=\"hybrid\")\n");
        QCOMPARE(fp8.layout.training.dtype, DType::Fp8);
        QCOMPARE(fp8.layout.training.fp8_recipe, Fp8Recipe::Tensorwise);  // fp8_recipe's default
        const ImportResult fp32 = layout_of("    cfg.mixed_precision = MixedPrecisionConfig(fp32=True)\n");
        QCOMPARE(fp32.layout.training.dtype, DType::Fp32);
        // The DDP config's own setting is written over by bf16_mixed's True.
        const ImportResult ddp = layout_of(
            "    cfg.mixed_precision = \"bf16_mixed\"\n    cfg.ddp.grad_reduce_in_fp32 = False\n");
        QVERIFY(!ddp.layout.training.grad_reduce_in_bf16);
        QVERIFY(any_ignored(ddp, "cfg.ddp.grad_reduce_in_fp32", "grad_reduce_in_fp32 is written over this one"));
        // _perf_precision reduces in bf16 (perf_recipes/_common.py:122); a field refines it.
        QVERIFY(layout_of("    cfg.mixed_precision = _perf_precision(\"bf16\")\n").layout.training.grad_reduce_in_bf16);
        QVERIFY(!layout_of("    cfg.mixed_precision = _perf_precision(\"bf16\")\n"
                           "    cfg.mixed_precision.grad_reduce_in_fp32 = True\n")
                     .layout.training.grad_reduce_in_bf16);
    }

    // The reader runs what constants decide: an if/elif/else branch, `or`/`and`, a helper
    // handed one section (set_deepseek_v3_pipeline_model_parallel_layout(cfg.model, ...),
    // recipes/deepseek/h100/deepseek_v3.py:71-102 at 067f987d, the shape this follows), a try
    // body; what they cannot decide is listed, not read.
    void branches_sections_and_try_blocks() {
        ImportOptions o;
        o.model = "llama3-8b";
        o.gpus = 16;
        const std::string text =
            "from megatron.bridge.training.config import ConfigContainer\n\n"
            "def _layout(pp_size, vp_size):\n"
            "    table = {(4, 1): [[\"embedding\"] + [\"decoder\"] * 9] + [[\"decoder\"] * 8] * 2 + [[\"decoder\"] * 7 + [\"loss\"]]}\n"
            "    if (pp_size, vp_size) not in table:\n"
            "        raise ValueError(\"no layout\")\n"
            "    return table[(pp_size, vp_size)]\n\n"
            "def set_layout(model_cfg, layout=None, *, standalone=False):\n"
            "    if layout is not None:\n"
            "        model_cfg.pipeline_model_parallel_layout = layout\n"
            "        return\n"
            "    pp_size = model_cfg.pipeline_model_parallel_size or 1\n"
            "    vp_size = model_cfg.virtual_pipeline_model_parallel_size or 1\n"
            "    if standalone:\n"
            "        model_cfg.pipeline_model_parallel_layout = None\n"
            "    else:\n"
            "        try:\n"
            "            model_cfg.pipeline_model_parallel_layout = _layout(pp_size, vp_size)\n"
            "        except ValueError:\n"
            "            pass\n\n"
            "def recipe() -> ConfigContainer:\n"
            "    kind = \"adam\"\n"
            "    cfg = ConfigContainer(model=None, train=None)\n"
            "    cfg.train.micro_batch_size = 1\n    cfg.model.seq_length = 8192\n"
            "    cfg.model.pipeline_model_parallel_size = PP\n"
            "    cfg.model.virtual_pipeline_model_parallel_size = None\n"
            "    if kind == \"muon\":\n"
            "        cfg.model.tensor_model_parallel_size = 4\n"
            "    elif kind == \"adam\" and cfg.model.pipeline_model_parallel_size:\n"
            "        cfg.model.tensor_model_parallel_size = 2\n"
            "    else:\n"
            "        cfg.model.tensor_model_parallel_size = 8\n"
            "    if cfg.optimizer.unknown_flag:\n"
            "        cfg.model.context_parallel_size = 2\n"
            "    set_layout(cfg.model)\n"
            "    return cfg\n";
        const auto with_pp = [&](int pp) {
            std::string t = text;
            t.replace(t.find("= PP"), 4, "= " + std::to_string(pp));
            return t;
        };
        const ImportResult four = import_config(with_pp(4), "r.py", ImportFormat::Bridge, o);
        QCOMPARE(four.layout.parallel.mesh.tp, 2);  // the elif taken
        QCOMPARE(four.layout.parallel.mesh.pp, 4);
        QCOMPARE(four.layout.placement.layers_per_stage, (std::vector<int>{9, 8, 8, 7}));
        QVERIFY(any_ignored(four, "cfg.model.tensor_model_parallel_size = 4", "the condition is false here"));
        QVERIFY(any_ignored(four, "cfg.model.tensor_model_parallel_size = 8", "an earlier branch of the chain is taken"));
        QVERIFY(any_ignored(four, "cfg.model.context_parallel_size = 2", "the condition is not computed from constants"));
        QVERIFY(any_ignored(four, "model_cfg.pipeline_model_parallel_layout = None", "the condition is false here"));
        QVERIFY(four.warnings.empty());
        // No table entry for PP 2: Python raises inside the try; the layout stays unset.
        const ImportResult two = import_config(with_pp(2), "r.py", ImportFormat::Bridge, o);
        QVERIFY(any_ignored(two, "model_cfg.pipeline_model_parallel_layout = _layout(pp_size, vp_size)",
                            "inside a try block, not computed"));
        QVERIFY(two.layout.placement.layers_per_stage.empty());  // the even split
        // The layout handed to the helper is set before its early return.
        std::string given = with_pp(4);
        given.replace(given.find("set_layout(cfg.model)"), 21, "set_layout(cfg.model, \"Et*10|t*8|t*8|t*6L\")");
        const ImportResult stated = import_config(given, "r.py", ImportFormat::Bridge, o);
        QCOMPARE(stated.layout.placement.layers_per_stage, (std::vector<int>{10, 8, 8, 6}));
    }

    // _sft_common's shape (recipes/common.py:160-200 at 067f987d): the optimizer config from
    // a helper that returns (OptimizerConfig(...), SchedulerConfig(...))
    // (recipes/utils/optimizer_utils.py:138-167) with use_distributed_optimizer=True, a DDP
    // config that leaves it unset. ConfigContainer.validate() turns it on for both
    // (training/config.py:2111-2123): ZeRO-1. The optimizer's bf16 is the mixed-precision
    // config's, not read.
    void optimizer_from_a_helper_and_the_distributed_optimizer() {
        ImportOptions o;
        o.model = "llama3-8b";
        o.gpus = 8;
        const std::string text =
            "from megatron.bridge.training.config import ConfigContainer\n\n"
            "def adam_with_cosine(precision=\"bf16-mixed\", max_lr=1e-4, min_lr=None):\n"
            "    min_lr = min_lr if min_lr is not None else (0.1 * max_lr)\n"
            "    optimizer = OptimizerConfig(optimizer=\"adam\", lr=max_lr, min_lr=min_lr, bf16=precision == \"bf16-mixed\",\n"
            "                                use_distributed_optimizer=DIST)\n"
            "    scheduler = SchedulerConfig(lr_warmup_iters=10)\n"
            "    return optimizer, scheduler\n\n"
            "def recipe() -> ConfigContainer:\n"
            "    opt_cfg, scheduler_cfg = adam_with_cosine(max_lr=5e-6)\n"
            "    cfg = ConfigContainer(model=None, train=None, optimizer=opt_cfg, scheduler=scheduler_cfg,\n"
            "                          ddp=DistributedDataParallelConfig(check_for_nan_in_grad=True))\n"
            "    cfg.mixed_precision = \"fp16_mixed\"\n"
            "    cfg.train.micro_batch_size = 1\n    cfg.model.seq_length = 4096\n"
            "    return cfg\n";
        const auto with = [&](const std::string& dist) {
            std::string t = text;
            t.replace(t.find("DIST"), 4, dist);
            return import_config(t, "r.py", ImportFormat::Bridge, o);
        };
        const ImportResult on = with("True");
        QCOMPARE(on.layout.training.zero_stage, 1);
        QCOMPARE(on.layout.training.dtype, DType::Fp16);  // not the optimizer's bf16
        QVERIFY(any_ignored(on, "cfg.optimizer.bf16 = True", "the mixed-precision config's bf16 is written over this one"));
        QVERIFY(any_ignored(on, "cfg.optimizer.use_distributed_optimizer = True", "either turns it on"));
        QCOMPARE(with("False").layout.training.zero_stage, 0);
    }

    // CommOverlapConfig.setup (training/comm_overlap.py:562-583, :636-642) writes the DDP
    // config's overlaps with the distributed optimizer: its own where it states them, else on
    // with more than one data-parallel rank. A gather overlapped without the reduction
    // (DeepSeek-V3's H100 performance recipes) is priced with neither, with a warning.
    void comm_overlap_writes_the_data_parallel_overlaps() {
        ImportOptions o;
        o.model = "llama3-8b";
        o.gpus = 16;
        const auto layout_of = [&](const std::string& body) {
            return import_recipe_body("    cfg.ddp.overlap_grad_reduce = False\n" + body, o, 4096,
                                      "model=None, train=None, ddp=DistributedDataParallelConfig(use_distributed_optimizer=True)");
        };
        const ImportResult written = layout_of("    cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=False)\n");
        QVERIFY(written.layout.parallel.overlap_grad_reduce);
        QVERIFY(written.layout.parallel.overlap_param_gather);
        QVERIFY(any_ignored(written, "cfg.ddp.overlap_grad_reduce = False", "CommOverlapConfig.setup writes overlap_grad_reduce = True"));
        QVERIFY(!layout_of("").layout.parallel.overlap_grad_reduce);  // no CommOverlapConfig: the DDP's own
        const ImportResult gather_only = layout_of(
            "    cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=False)\n    cfg.comm_overlap.overlap_grad_reduce = False\n");
        QVERIFY(!gather_only.layout.parallel.overlap_grad_reduce);
        QVERIFY(!gather_only.layout.parallel.overlap_param_gather);
        QCOMPARE(gather_only.warnings.size(), std::size_t(1));
        QVERIFY(gather_only.warnings.front().find("priced with neither overlapped") != std::string::npos);
        // One data-parallel rank: off.
        o.gpus = 1;
        QVERIFY(!layout_of("    cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=False)\n").layout.parallel.overlap_grad_reduce);
    }

    // A repository's earlier name, which Hugging Face redirects and recipes still load
    // (recipes/llama/h100/llama3.py:1207), finds the preset made from it (its _renamed_from).
    void model_from_a_renamed_repository() {
        ImportOptions o;
        o.gpus = 1152;
        const std::string text =
            "from megatron.bridge.training.config import ConfigContainer\n\n"
            "def recipe() -> ConfigContainer:\n"
            "    cfg = ConfigContainer(model=AutoBridge.from_hf_pretrained(\"REPO\").to_megatron_provider(load_weights=False), train=None)\n"
            "    cfg.train.micro_batch_size = 1\n    cfg.model.seq_length = 8192\n"
            "    cfg.model.tensor_model_parallel_size = 8\n    cfg.model.pipeline_model_parallel_size = 9\n"
            "    return cfg\n";
        const auto with = [&](const std::string& repo) {
            std::string t = text;
            t.replace(t.find("REPO"), 4, repo);
            return t;
        };
        QCOMPARE(import_config(with("meta-llama/Meta-Llama-3.1-405B"), "r.py", ImportFormat::Bridge, o).layout.model_ref,
                 std::string("llama3.1-405b"));
        QCOMPARE(import_config(with("meta-llama/Llama-3.1-405B"), "r.py", ImportFormat::Bridge, o).layout.model_ref,
                 std::string("llama3.1-405b"));
        QVERIFY(refusal(with("meta-llama/Meta-Llama-3.1-8B"), "r.py", o).find("no bundled preset is made from that repository") !=
                std::string::npos);
    }

    // A recipe for a GPU no bundled cluster describes (Vera Rubin's VR200) is priced on the
    // default cluster with a warning (import-args prints it before the validation error the
    // assumed GPU causes); Blackwell Ultra's B300 and GB300 have presets since issue 28.
    void gpu_without_a_cluster_preset() {
        ImportOptions o;
        o.model = "llama3-8b";
        const std::string text =
            "from megatron.bridge.training.config import ConfigContainer\n\n"
            "def llama3_8b_pretrain_8gpu_GPU_PRECISION_config() -> ConfigContainer:\n"
            "    cfg = ConfigContainer(model=None, train=None)\n"
            "    cfg.train.micro_batch_size = 1\n    cfg.model.seq_length = 8192\n"
            "    cfg.mixed_precision = _perf_precision(\"PRECISION\")\n    return cfg\n";
        const auto with = [&](const std::string& gpu, const std::string& precision) {
            std::string t = text;
            for (std::size_t at; (at = t.find("PRECISION")) != std::string::npos;) t.replace(at, 9, precision);
            for (std::size_t at; (at = t.find("GPU_")) != std::string::npos;) t.replace(at, 4, gpu + "_");
            return t;
        };
        const ImportResult bf16 = import_config(with("vr200", "bf16"), "r.py", ImportFormat::Bridge, o);
        QCOMPARE(bf16.layout.cluster_ref, std::string("dgx-h100"));
        QVERIFY(std::any_of(bf16.warnings.begin(), bf16.warnings.end(), [](const std::string& w) {
            return w.find("is for vr200 GPUs, which no bundled cluster describes") != std::string::npos;
        }));
        const ImportResult fp4 = import_config(with("vr200", "nvfp4"), "r.py", ImportFormat::Bridge, o);
        const auto checked = validate_layout(fp4.layout, "r.py");
        QVERIFY(!checked.valid());
        QVERIFY(checked.errors.front().message.find("has no fp4 units") != std::string::npos);
        QCOMPARE(fp4.warnings.size(), bf16.warnings.size());
        QVERIFY(fp4.warnings.front().find("is for vr200 GPUs") != std::string::npos);
        o.cluster = "dgx-b200";
        QCOMPARE(import_config(with("vr200", "nvfp4"), "r.py", ImportFormat::Bridge, o).layout.training.dtype, DType::Fp4);
        // The Blackwell Ultra recipes take their presets, with no warning, and NVFP4 validates.
        o.cluster.reset();
        for (const auto& [gpu, cluster] : {std::pair<std::string, std::string>{"b300", "dgx-b300"}, {"gb300", "gb300-nvl72"}}) {
            const ImportResult r = import_config(with(gpu, "nvfp4"), "r.py", ImportFormat::Bridge, o);
            QCOMPARE(r.layout.cluster_ref, cluster);
            QVERIFY(r.warnings.empty());
            QVERIFY(validate_layout(r.layout, "r.py").valid());
        }
    }

    void refusals_name_the_file_line_and_setting() {
        const std::string path = recipe_path("qwen/b200/qwen3_moe.py");
        ImportOptions o;
        o.model = "llama3-8b";
        QVERIFY(refusal(read_text_input(path), path, o).find("recipe functions: pass --config NAME") != std::string::npos);
        o.config_function = "no_such_config";
        QVERIFY(refusal(read_text_input(path), path, o).rfind("--config: no function no_such_config()", 0) == 0);

        o.config_function.reset();
        const std::string head =
            "from megatron.bridge.training.config import ConfigContainer\n\n"
            "def recipe() -> ConfigContainer:\n"
            "    cfg = ConfigContainer(model=None, train=None)\n";
        const std::string computed = head + "    cfg.model.tensor_model_parallel_size = pick()\n    return cfg\n";
        QCOMPARE(refusal(computed, "r.py", o),
                 std::string("r.py:5 cfg.model.tensor_model_parallel_size: 'pick()' is not a constant: Meshwork "
                             "reads recipes without running them"));
        const std::string precision = head + "    cfg.mixed_precision = \"bf17_mixed\"\n    return cfg\n";
        QVERIFY(refusal(precision, "r.py", o).rfind("r.py:5 cfg.mixed_precision: '\"bf17_mixed\"'", 0) == 0);
        // A value Megatron-LM itself refuses is named by the recipe line it came from.
        const std::string bad = head + "    cfg.model.tensor_model_parallel_size = 0\n    return cfg\n";
        QVERIFY(refusal(bad, "r.py", o).rfind("r.py:5 cfg.model.tensor_model_parallel_size", 0) == 0);
        // A helper called many times: the statements read are bounded.
        std::string big = "from megatron.bridge.training.config import ConfigContainer\n\ndef helper(cfg):\n";
        for (int i = 0; i < 2000; ++i) big += "    cfg.train.x" + std::to_string(i) + " = 1\n";
        big += "\ndef recipe() -> ConfigContainer:\n    cfg = ConfigContainer(model=None)\n";
        for (int i = 0; i < 200; ++i) big += "    helper(cfg)\n";
        big += "    return cfg\n";
        QVERIFY(refusal(big, "r.py", o).find("statements read through the recipe's calls") != std::string::npos);
        // A helper that calls itself twice: bounded too (2^24 calls otherwise).
        const std::string recursive =
            "from megatron.bridge.training.config import ConfigContainer\n\ndef h(cfg):\n    h(cfg)\n    h(cfg)\n"
            "    cfg.train.micro_batch_size = 1\n\ndef recipe() -> ConfigContainer:\n"
            "    cfg = ConfigContainer(model=None)\n    h(cfg)\n    return cfg\n";
        QVERIFY(refusal(recursive, "r.py", o).find("statements read through the recipe's calls") != std::string::npos);
        // Values the evaluator would build without end are not built.
        const std::string huge = head + "    cfg.model.pipeline_model_parallel_layout = [[\"decoder\"] * 100000] * 100000\n    return cfg\n";
        QVERIFY(refusal(huge, "r.py", o).find("is not a constant") != std::string::npos);
        std::string doubling = "from megatron.bridge.training.config import ConfigContainer\n\ndef grow():\n    x = [1]\n";
        for (int i = 0; i < 64; ++i) doubling += "    x = x + x\n";
        doubling += "    return x\n\ndef recipe() -> ConfigContainer:\n    cfg = ConfigContainer(model=None)\n"
                    "    cfg.model.pipeline_model_parallel_layout = grow()\n    return cfg\n";
        QVERIFY(refusal(doubling, "r.py", o).find("is not a constant") != std::string::npos);
        const std::string none = "from megatron.bridge.training.config import ConfigContainer\nx = 1\n";
        QVERIFY(refusal(none, "r.py", o).find("no recipe function") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestBridgeRecipeImport)
#include "tst_bridge_recipe_import.moc"
