// What upstream accepts is read as upstream reads it (issues 33 and 34): repeated and implied
// flags, the padded vocabulary, RoPE flags that must not vanish, interpreter options, which
// command trains, a stated world size over a launcher's assumption, offload, forks' flags
// and flags no release defines. Each case is the few lines that reproduced the problem.
#include <QtTest>

#include "core/common/error.h"
#include <fstream>
#include <sstream>

#include "core/export/exporter.h"
#include "core/export/importer.h"
#include "core/export/megatron_export.h"
#include "core/export/megatron_import.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"
#include "core/model/model_spec.h"

using namespace meshwork;

namespace {

ImportOptions opts(int gpus = 0) {
    ImportOptions o;
    o.cluster = "dgx-h100";
    if (gpus > 0) o.gpus = gpus;
    return o;
}

std::vector<InputIssue> issues_of(const std::string& text, ImportOptions o = opts()) {
    try {
        (void)import_megatron(text, "cmd.sh", o);
    } catch (const InputError& e) {
        return e.issues();
    }
    return {};
}

std::string dump(const std::vector<InputIssue>& issues) {
    std::string s;
    for (const auto& i : issues) s += "\n  " + i.to_string();
    return s.empty() ? " (none)" : s;
}

bool has_issue(const std::vector<InputIssue>& issues, const std::string& field, const std::string& words) {
    for (const auto& i : issues) {
        if (i.field == field && i.message.find(words) != std::string::npos) return true;
    }
    return false;
}

const IgnoredInput* ignored(const ImportResult& r, const std::string& text) {
    for (const auto& i : r.ignored) {
        if (i.text == text) return &i;
    }
    return nullptr;
}

bool has_note(const ImportResult& r, const std::string& words) {
    for (const auto& n : r.notes) {
        if (n.find(words) != std::string::npos) return true;
    }
    return false;
}

// The import, or an empty result after recording the failure (the checks that follow fail).
ImportResult import_ok(const std::string& text, ImportOptions o = opts()) {
    try {
        return import_megatron(text, "cmd.sh", o);
    } catch (const InputError& e) {
        QTest::qFail(qPrintable(QString::fromStdString("import failed:" + dump(e.issues()))), __FILE__, __LINE__);
        return {};
    }
}

// A small model; argv[0] torchrun [1] --nproc-per-node [2] 8 [3] pretrain_gpt.py, then
// 12 words of model, so the next argument is argv[16].
const std::string kBase = "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 64 "
                          "--num-attention-heads 4 --seq-length 32 --micro-batch-size 1 --vocab-size 256 ";
// Unmodified upstream files (tests/fixtures/export/upstream/SOURCES.txt).
std::string upstream_file(const std::string& name) {
    std::ifstream in(std::string(MESHWORK_TEST_FIXTURES) + "/export/upstream/" + name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

ImportResult import_any(const std::string& text, const std::string& file, ImportOptions o = opts()) {
    try {
        return import_config(text, file, ImportFormat::Auto, o);
    } catch (const InputError& e) {
        QTest::qFail(qPrintable(QString::fromStdString("import failed:" + dump(e.issues()))), __FILE__, __LINE__);
        return {};
    }
}

std::vector<InputIssue> any_issues(const std::string& text, ImportOptions o = opts()) {
    try {
        (void)import_config(text, "c.toml", ImportFormat::Auto, o);
    } catch (const InputError& e) {
        return e.issues();
    }
    return {};
}

const std::string kArgs = "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 32 "
                          "--micro-batch-size 1 --vocab-size 256";

}  // namespace

class TestImportRules : public QObject {
    Q_OBJECT
private slots:
    void repeated_flags_last_wins();
    void recompute_activations_implies_selective();
    void padded_vocab_size();
    void rope_flags_never_vanish();
    void interpreter_options();
    void only_training_commands_train();
    void stated_world_wins_over_assumed();
    void optimizer_offload();
    void unknown_and_fork_flags();
    void megatron_deepspeed_moe();
    void upstream_gptoss_example();
    void upstream_generation_scripts();
    void torchtitan_schemas();
    void torchtitan_cpu_offload();
    void hybrid_sharding();
    void torchtitan_flavors();
    void torchtitan_module_names();
    void sweep_of_real_scripts();
};

void TestImportRules::repeated_flags_last_wins() {
    // argparse keeps the last value (its "store" action): an appended override wins.
    const ImportResult r = import_ok(kBase + "--seq-length 64 --tensor-model-parallel-size 2 --tensor-model-parallel-size 4");
    QCOMPARE(r.layout.training.seq_length, 64);
    QCOMPARE(r.layout.parallel.mesh.tp, 4);
    QVERIFY(has_note(r, "--tensor-model-parallel-size is given twice"));
}

void TestImportRules::recompute_activations_implies_selective() {
    // Issue 34 item 1: Megatron-LM accepts the pair (arguments.py:607-608 at d98e8a64).
    const ImportResult a = import_ok(kBase + "--recompute-activations --recompute-granularity selective");
    QVERIFY(a.layout.training.recompute == Recompute::Selective);
    // --recompute-activations wins over an explicit full granularity, as validate_args does.
    const ImportResult b = import_ok(kBase + "--recompute-granularity full --recompute-activations");
    QVERIFY(b.layout.training.recompute == Recompute::Selective);
    QVERIFY(has_note(b, "--recompute-activations sets --recompute-granularity selective"));
    // ... and then a method is refused as Megatron-LM refuses it with selective (arguments.py:1425-1426).
    QVERIFY(has_issue(issues_of(kBase + "--recompute-granularity full --recompute-method uniform --recompute-activations"),
                      "argv[18] --recompute-method", "full only"));
}

void TestImportRules::padded_vocab_size() {
    // Issue 34 item 2: --padded-vocab-size is the embedding (argument_utils.py:474-478).
    const std::string cmd = "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 64 "
                            "--num-attention-heads 4 --seq-length 32 --micro-batch-size 1 --padded-vocab-size 512 "
                            "--tokenizer-type HuggingFaceTokenizer";
    const ImportResult r = import_ok(cmd);
    QCOMPARE(r.layout.model.vocab_size, std::int64_t{512});
    QVERIFY(ignored(r, "--padded-vocab-size 512") == nullptr);
    const ImportResult both = import_ok(kBase + "--padded-vocab-size 384");
    QCOMPARE(both.layout.model.vocab_size, std::int64_t{384});
}

void TestImportRules::rope_flags_never_vanish() {
    // Issue 34 item 3: an MLA model with YaRN 40 and a stray --use-rope-scaling.
    // (MLA is written as DeepSeek's config.json, which has experts.)
    const std::string moe = "--swiglu --normalization RMSNorm --disable-bias-linear --untie-embeddings-and-output-weights "
                            "--num-experts 4 --moe-router-topk 2 --moe-ffn-hidden-size 32 ";
    const std::string mla = kBase + moe + "--multi-latent-attention --q-lora-rank 32 --kv-lora-rank 32 --qk-head-dim 16 "
                                    "--qk-pos-emb-head-dim 8 --v-head-dim 16 --position-embedding-type rope "
                                    "--rope-type yarn --rotary-scaling-factor 40 --use-rope-scaling --bf16";
    const ImportResult r = import_ok(mla);
    QCOMPARE(QString::fromStdString(r.layout.model.rope.scaling), QString("yarn"));
    QCOMPARE(r.layout.model.rope.factor, 40.0);
    // The flag MLA does not read is listed, not dropped.
    const IgnoredInput* u = ignored(r, "--use-rope-scaling");
    QVERIFY(u != nullptr);
    QVERIFY(u->reason.find("multi_latent_attention.py") != std::string::npos);
    // The export writes YaRN (MLA's default rope type) with the factor, never --use-rope-scaling.
    const ExportResult e = export_megatron(r.layout);
    QVERIFY2(e.text.find("--rotary-scaling-factor 40") != std::string::npos, e.text.c_str());
    QVERIFY(e.text.find("--use-rope-scaling") == std::string::npos);
    QVERIFY(e.text.find("--rope-type rope") == std::string::npos);
    // MLA with plain RoPE needs --no-rope-fusion (transformer_config.py:3345-3346).
    const std::string plain = kBase + moe + "--multi-latent-attention --q-lora-rank 32 --kv-lora-rank 32 --qk-head-dim 16 "
                                      "--qk-pos-emb-head-dim 8 --v-head-dim 16 --position-embedding-type rope --rope-type rope";
    QVERIFY2(has_issue(issues_of(plain), "argv[40] --rope-type", "--no-rope-fusion"), dump(issues_of(plain)).c_str());
    const ImportResult p = import_ok(plain + " --no-rope-fusion");
    QVERIFY(p.layout.model.rope.scaling.empty());
    const ExportResult pe = export_megatron(p.layout);
    QVERIFY(pe.text.find("--rope-type rope") != std::string::npos);
    QVERIFY(pe.text.find("--no-rope-fusion") != std::string::npos);
    // Other attention: --rope-type yarn is asserted away upstream (argument_utils.py:339-340).
    QVERIFY(has_issue(issues_of(kBase + "--position-embedding-type rope --rope-type yarn"), "argv[18] --rope-type",
                      "asserts rope"));
    // A factor that nothing reads is listed with the reason.
    const ImportResult f = import_ok(kBase + "--position-embedding-type rope --rotary-scaling-factor 4");
    QVERIFY(ignored(f, "--rotary-scaling-factor 4") != nullptr);
    QVERIFY(f.layout.model.rope.scaling.empty());
}

void TestImportRules::interpreter_options() {
    // Issue 34 item 4: interpreter options before -m.
    const ImportResult r = import_ok("python -u -m torch.distributed.run --nproc_per_node 4 pretrain_gpt.py " + kArgs);
    QCOMPARE(r.layout.gpus, 4);
    const ImportResult w = import_ok("python3 -W ignore -X faulthandler -m torch.distributed.launch --nproc_per_node 2 "
                                     "pretrain_gpt.py " + kArgs);
    QCOMPARE(w.layout.gpus, 2);
}

void TestImportRules::only_training_commands_train() {
    // Issue 34 item 5: data preparation before the launcher is not a training command.
    const ImportResult r = import_ok("#!/bin/bash\npython load_ratios.py --split train --seed 1\n"
                                     "torchrun --nproc-per-node 8 pretrain_gpt.py " + kArgs + "\n");
    QCOMPARE(r.layout.gpus, 8);
    // Two commands carrying the training arguments are still two launches.
    QVERIFY(has_issue(issues_of("torchrun --nproc-per-node 8 pretrain_gpt.py " + kArgs + "\n" +
                                "torchrun --nproc-per-node 8 pretrain_gpt.py " + kArgs + "\n"),
                      "line 2", "a second training command"));
    // A training entry point whose arguments come from elsewhere still trains.
    QVERIFY(has_issue(issues_of("torchrun --nproc-per-node 8 pretrain_gpt.py --lr 1\n"), "--num-layers", "required"));
}

void TestImportRules::stated_world_wins_over_assumed() {
    // Issue 34 item 7: deepspeed without --num_nodes assumes one node; --gpus says 128.
    const ImportResult d = import_ok("deepspeed pretrain_gpt.py " + kArgs + " --tensor-model-parallel-size 8", opts(128));
    QCOMPARE(d.layout.gpus, 128);
    QCOMPARE(d.layout.parallel.mesh.dp, 16);
    QVERIFY(has_note(d, "wins over deepspeed's"));
    // srun without -n or -N likewise.
    const ImportResult s = import_ok("srun python pretrain_gpt.py " + kArgs, opts(16));
    QCOMPARE(s.layout.gpus, 16);
    // A count the script states still disagrees.
    QVERIFY(has_issue(issues_of(kBase, opts(16)), "--gpus", "disagree with torchrun's"));
}

void TestImportRules::optimizer_offload() {
    // Issue 34 item 8: Megatron-LM's hybrid optimizer, fraction 1.0 by default (arguments.py:2918-2922).
    const ImportResult up = import_ok(kBase + "--bf16 --use-distributed-optimizer --optimizer-cpu-offload "
                                              "--use-precision-aware-optimizer");
    QVERIFY(up.layout.training.offload_optimizer == Offload::Cpu);
    QVERIFY(has_issue(issues_of(kBase + "--use-distributed-optimizer --optimizer-cpu-offload"),
                      "argv[17] --optimizer-cpu-offload", "--use-precision-aware-optimizer"));
    // Pai-Megatron-Patch's hybridadam, static policy, fraction 1.0.
    const ImportResult pai = import_ok(kBase + "--use-distributed-optimizer --optimizer hybridadam "
                                               "--optimizer-offload-policy static --optimizer-offload-fraction 1.0");
    QVERIFY(pai.layout.training.offload_optimizer == Offload::Cpu);
    // A part of the optimizer on the host, or Pai's auto policy, is refused: a layout holds all or none.
    QVERIFY(has_issue(issues_of(kBase + "--use-distributed-optimizer --optimizer-cpu-offload "
                                        "--use-precision-aware-optimizer --optimizer-offload-fraction 0.5"),
                      "argv[19] --optimizer-offload-fraction", "a fraction 0.5"));
    QVERIFY(has_issue(issues_of(kBase + "--optimizer hybridadam --optimizer-offload-policy auto"),
                      "argv[18] --optimizer-offload-policy", "'auto'"));
    // Without an offloading optimizer the fraction is read by nothing: listed.
    const ImportResult plain = import_ok(kBase + "--optimizer adam --optimizer-offload-fraction 1.0");
    QVERIFY(plain.layout.training.offload_optimizer == Offload::None);
    QVERIFY(ignored(plain, "--optimizer-offload-fraction 1.0") != nullptr);
    QVERIFY(ignored(plain, "--optimizer adam") != nullptr);
}

void TestImportRules::unknown_and_fork_flags() {
    // Issue 33 item 1: flags of extra argument providers and forks are known; a flag no
    // release defines is ignored with a warning unless its name says it may be a layout one.
    const ImportResult r = import_ok(kBase + "--enable-gpt-oss --export-force-local-attention --data-path2 a b "
                                             "--valid-num-workers 2 --log-level-replica info --wandb-name x --use-mpi "
                                             "--log-optimizer-states-to-tensorboard --my-own-flag 3");
    const IgnoredInput* gptoss = ignored(r, "--enable-gpt-oss");
    QVERIFY(gptoss != nullptr);
    QVERIFY(gptoss->reason.find("megatron/post_training/arguments.py") != std::string::npos);
    const IgnoredInput* detox = ignored(r, "--data-path2 a b");
    QVERIFY(detox != nullptr);
    QVERIFY2(detox->reason.find("core_v0.") != std::string::npos, detox->reason.c_str());  // the release named
    QVERIFY(ignored(r, "--valid-num-workers 2")->reason.find("BigScience") != std::string::npos);
    QVERIFY(ignored(r, "--wandb-name x")->reason.find("llm-jp") != std::string::npos);
    QVERIFY(ignored(r, "--log-optimizer-states-to-tensorboard")->reason.find("Megatron-DeepSpeed") != std::string::npos);
    QVERIFY(ignored(r, "--my-own-flag 3") != nullptr);
    QCOMPARE(r.warnings.size(), std::size_t{1});
    QVERIFY(r.warnings[0].find("--my-own-flag") != std::string::npos);
    // A name that may describe the layout is refused, whatever else.
    QVERIFY(has_issue(issues_of(kBase + "--tensor-parallel-size 8"), "argv[16] --tensor-parallel-size", "'parallel'"));
    // --strict: Megatron-LM's own arguments only.
    ImportOptions strict = opts();
    strict.strict = true;
    QVERIFY(has_issue(issues_of(kBase + "--wandb-name x", strict), "argv[16] --wandb-name", "--strict"));
    QVERIFY(has_issue(issues_of(kBase + "--my-own-flag 3", strict), "argv[16] --my-own-flag", "--strict"));
    QVERIFY(issues_of(kBase + "--enable-gpt-oss --lr 1", strict).empty());
    // Pai-Megatron-Patch's window is read (transformers' sliding_window: W keys).
    const ImportResult w = import_ok(kBase + "--swiglu --normalization RMSNorm --disable-bias-linear "
                                             "--position-embedding-type rope --sliding-window 16");
    QCOMPARE(w.layout.model.sliding_window, std::int64_t{16});
}

void TestImportRules::megatron_deepspeed_moe() {
    // Issue 33 item 2: Megatron-DeepSpeed's MoE flags (megatron/arguments.py:608-615, :1159
    // at 4efb479d): experts in every second layer by default, split over 4 ranks.
    // (A Qwen2-MoE-like model: experts every decoder_sparse_step blocks from block step-1.)
    const std::string llama = " --swiglu --normalization rmsnorm --disable-bias-linear --add-qkv-bias "
                              "--position-embedding-type rope";
    const ImportResult r = import_ok("deepspeed --num_gpus 8 pretrain_gpt.py " + kArgs + llama +
                                     " --num-experts 8 --moe-expert-parallel-size 4 --topk 2 --deepspeed "
                                     "--create-moe-param-group --disable-moe-token-dropping");
    const auto& m = r.layout.model;
    QCOMPARE(m.moe.num_experts, 8);
    QCOMPARE(m.moe.top_k, 2);
    QCOMPARE(m.moe.first_k_dense, 1);
    QCOMPARE(m.moe.layer_freq, 2);
    QVERIFY(!m.is_moe_block(0) && m.is_moe_block(1) && !m.is_moe_block(2) && m.is_moe_block(3));
    QCOMPARE(r.layout.parallel.mesh.ep, 4);
    QCOMPARE(r.layout.training.moe_capacity_factor, 0.0);
    // One count for every expert layer; different counts (pyramid MoE) are refused, named.
    QVERIFY(has_issue(issues_of("deepspeed --num_gpus 8 pretrain_gpt.py " + kArgs + " --num-experts 8 16 --deepspeed"),
                      "argv[16] --num-experts", "pyramid"));
    // --num-experts 1 (Megatron-DeepSpeed's default) is a dense model.
    const ImportResult dense = import_ok("deepspeed --num_gpus 8 pretrain_gpt.py " + kArgs + llama +
                                         " --num-experts 1 --deepspeed");
    QVERIFY(!dense.layout.model.is_moe());
}

void TestImportRules::upstream_gptoss_example() {
    // Megatron-LM's own examples/gptoss/02_train.sh: post-training's flags (--enable-gpt-oss,
    // --export-force-local-attention, megatron/post_training/arguments.py) are known, and its
    // gpt-oss blocks without any bias (--disable-bias-linear, line 128) are a model Meshwork
    // holds: it imports as written, with the axes the script writes (lines 104-120, 196-236):
    // 4 GPUs as 4 pipeline stages, fp8, --recompute-activations.
    const std::string text = upstream_file("mlm__gptoss_02_train.sh");
    QVERIFY(!text.empty());
    ImportOptions o = opts();
    o.set["GPUS_PER_NODE"] = "4";
    const ImportResult r = import_ok(text, o);
    const Layout& l = r.layout;
    QCOMPARE(l.gpus, 4);
    QCOMPARE(l.parallel.mesh.pp, 4);
    QCOMPARE(l.parallel.mesh.tp, 1);
    QCOMPARE(l.training.micro_batch_size, 1);
    QCOMPARE(l.training.global_batch_size, 128);
    QCOMPARE(l.training.seq_length, 8192);
    QVERIFY(l.training.dtype == DType::Fp8);
    QVERIFY(l.training.recompute == Recompute::Selective);
    QCOMPARE(l.training.zero_stage, 1);
    bool gptoss = false;
    for (const auto& i : r.ignored) gptoss = gptoss || (i.text == "--enable-gpt-oss" &&
                                                        i.reason.find("post_training") != std::string::npos);
    QVERIFY(gptoss);
    QVERIFY(r.warnings.empty());
    // The model: gpt-oss's sinks, 4 experts top-2, and no bias anywhere (router included:
    // moe/router.py:67-72), so the router holds h·E weights and no more.
    const ModelSpec& m = l.model;
    QVERIFY(m.attention_sinks);
    QVERIFY(!m.qkv_bias && !m.linear_bias);
    QCOMPARE(m.moe.num_experts, 4);
    QCOMPARE(m.moe.top_k, 2);
    QCOMPARE(m.family, std::string("gpt_oss"));
    // It reads back from the config.json Meshwork writes for it ("mlp_bias": false), and the
    // Megatron export states --disable-bias-linear again.
    const nlohmann::json hf = model_to_hf_config(m);
    QCOMPARE(hf.value("mlp_bias", true), false);
    QCOMPARE(hf.value("attention_bias", true), false);
    QVERIFY(model_from_hf_config(hf, "gptoss.json", m.name) == m);
    const ExportResult e = export_megatron(l);
    QVERIFY2(e.text.find("--disable-bias-linear") != std::string::npos, e.text.c_str());
    QVERIFY(e.text.find("--add-qkv-bias") == std::string::npos);
    // transformers' gpt_oss with "attention_bias": false alone keeps its experts' biases: a
    // half-biased model ModelSpec cannot hold, refused naming the key that would complete it.
    nlohmann::json half = hf;
    half.erase("mlp_bias");
    bool refused = false;
    try {
        (void)model_from_hf_config(half, "half.json", "half");
    } catch (const InputError& err) {
        refused = std::string(err.what()).find("mlp_bias") != std::string::npos &&
                  err.issues().front().field == "attention_bias";
    }
    QVERIFY(refused);
    // The biased form (transformers' gpt_oss) stays biased.
    std::string biased = text;
    biased.replace(biased.find("    --disable-bias-linear\n"), std::string("    --disable-bias-linear\n").size(), "");
    const ImportResult b = import_ok(biased, o);
    QVERIFY(b.layout.model.qkv_bias && b.layout.model.linear_bias);
    QVERIFY(model_to_hf_config(b.layout.model).count("mlp_bias") == 0);
}

void TestImportRules::upstream_generation_scripts() {
    // Megatron-LM's own text-generation scripts (examples/academic_paper_scripts/detxoify_lm):
    // generate_samples_gpt.py runs Megatron-LM's argparse with a provider of its own
    // (--out-seq-length, --temperature, --top_p, --sample-input-file, --num-samples,
    // --genfile, lines 84-106 at d98e8a64). Those are listed as ignored with the file that
    // defines them; the model and the axes are the layout. Only $1 and $2 (input file and
    // checkpoint) are asked for: $RANDOM and $(wc -l < $1) reach no layout argument.
    for (const char* file : {"mlm__detxoify_generate-1.3b.sh", "mlm__detxoify_selfgenerate-1.3b-unconditional.sh"}) {
        const std::string text = upstream_file(file);
        QVERIFY2(!text.empty(), file);
        ImportOptions o = opts();
        o.set["1"] = "prompts.txt";
        o.set["2"] = "/ckpt/gpt-1.3b";
        o.set["3"] = "1234";
        o.set["SHARE_DATA"] = "/data";
        const ImportResult r = import_ok(text, o);
        const Layout& l = r.layout;
        QCOMPARE(l.gpus, 1);
        QCOMPARE(l.parallel.mesh.tp, 1);
        QCOMPARE(l.model.num_layers, 24);
        QCOMPARE(l.model.hidden_size, 2048);
        QCOMPARE(l.model.num_heads, 32);
        QCOMPARE(l.training.seq_length, 2048);
        QVERIFY(l.training.dtype == DType::Fp16);
        bool out_seq = false;
        for (const auto& i : r.ignored) {
            out_seq = out_seq || (i.text.rfind("--out-seq-length", 0) == 0 &&
                                  i.reason.find("generate_samples_gpt.py") != std::string::npos);
        }
        QVERIFY2(out_seq, file);
        QVERIFY(has_note(r, "generates text rather than training"));
        QVERIFY(r.warnings.empty());
    }
    // NVLM's generation script (examples/multimodal/nvlm): the launch sits in a for-loop over
    // `$( eval echo {$START..$END} )`, run once with PARTITION_ID unknown (it reaches only the
    // generation's own --partition-id); its vision and multimodal flags are defined in
    // examples/multimodal/multimodal_args.py; the layout is the language model's, with a warning.
    ImportOptions o = opts();
    o.vocab_size = 152064;  // Qwen2.5-7B's; the script takes it from its tokenizer
    const ImportResult nvlm = import_ok(upstream_file("mlm__nvlm_run_text_generation_qwen25_7b_siglip.sh"), o);
    QCOMPARE(nvlm.layout.parallel.mesh.tp, 4);
    QCOMPARE(nvlm.layout.model.num_layers, 28);
    QVERIFY(has_note(nvlm, "ran once with PARTITION_ID unknown"));
    bool vision = false;
    for (const auto& w : nvlm.warnings) vision = vision || w.find("vision encoder is not modelled") != std::string::npos;
    QVERIFY(vision);
    // MIMO's per-module grids (examples/mimo/training/args.py) change the layout: refused by name.
    bool refused = false;
    try {
        (void)import_megatron(kBase + "--llm-tp 2", "cmd.sh", opts());
    } catch (const InputError& e) {
        refused = std::string(e.what()).find("MIMO's language grid") != std::string::npos;
    }
    QVERIFY(refused);
}

void TestImportRules::torchtitan_schemas() {
    // torchtitan's schema of 2025-03 (config_manager.py at 38e7ee705): data parallelism under
    // [training], context and pipeline parallelism under [experimental]; its own
    // llama3_70b.toml, on 64 GPUs.
    const ImportResult r = import_any(upstream_file("tt__2025-03_llama3_70b.toml"), "llama3_70b.toml", opts(64));
    const Layout& l = r.layout;
    QCOMPARE(QString::fromStdString(l.model_ref), QString("llama3-70b"));
    QCOMPARE(l.parallel.mesh.tp, 8);
    QCOMPARE(l.parallel.mesh.dp, 8);
    QCOMPARE(l.parallel.mesh.cp, 1);
    QCOMPARE(l.training.zero_stage, 3);
    QCOMPARE(l.training.seq_length, 8192);
    QCOMPARE(l.training.micro_batch_size, 8);
    QVERIFY(l.training.recompute == Recompute::Full);
    // A key of another schema is listed with the commit that defines it.
    bool norm_type = false;
    for (const auto& i : r.ignored) norm_type = norm_type || (i.where == "model.norm_type");
    QVERIFY(norm_type);
    QVERIFY(r.warnings.empty());
    // Newer or forked keys and sections: ignored with a warning; --strict refuses them.
    const std::string v02 = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 8\n"
                            "prefetch_before_data = true\n[training]\nskip_optimizer_step = false\n[infra]\nx = 1\n";
    const ImportResult w = import_any(v02, "c.toml", opts(8));
    QCOMPARE(w.warnings.size(), std::size_t{3});
    ImportOptions strict = opts(8);
    strict.strict = true;
    QVERIFY(has_issue(any_issues(v02, strict), "parallelism.prefetch_before_data", "--strict"));
    // One schema per config: a v0.2 layout key in a config of the earlier schema is refused.
    QVERIFY(has_issue(any_issues("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nbatch_size = 2\n"
                                 "[parallelism]\ntensor_parallel_degree = 2\n", opts(8)),
                      "parallelism.tensor_parallel_degree", "one schema"));
}

void TestImportRules::torchtitan_cpu_offload() {
    // Issue 34 item 8: FSDP2's CPUOffloadPolicy moves parameters, gradients and optimizer
    // states (job_config.py:270-273, llama3/infra/parallelize.py:315-317 at v0.2.2).
    const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"70B\"\n[training]\nenable_cpu_offload = true\n"
                             "seq_len = 4096\nlocal_batch_size = 1\n[parallelism]\ndata_parallel_shard_degree = 8\n";
    const ImportResult r = import_any(toml, "c.toml", opts(8));
    QVERIFY(r.layout.training.offload_params == Offload::Cpu);
    QVERIFY(r.layout.training.offload_optimizer == Offload::Cpu);
    // ... and the exports write it back.
    const ExportResult e = export_layout(r.layout, ExportFormat::TorchtitanToml);
    QVERIFY2(e.text.find("enable_cpu_offload = true") != std::string::npos, e.text.c_str());
    const ExportResult m = export_layout(r.layout, ExportFormat::Torchtitan);
    QVERIFY(m.text.find("config.training.enable_cpu_offload = True") != std::string::npos);
    // Under ZeRO-2 (never resharding) a layout cannot hold the parameters on the host.
    QVERIFY(has_issue(any_issues(toml + "fsdp_reshard_after_forward = \"never\"\n", opts(8)),
                      "training.enable_cpu_offload (line 5)", "ZeRO-3 only"));
}

// Hybrid sharding moves memory (the ZeRO state is sharded over a shard group, not all of
// dp), so it is read from every format into training.zero_replicas and written back.
void TestImportRules::hybrid_sharding() {
    // Megatron-LM: N distributed-optimizer instances (parallel_state.py:922-929 at d98e8a64).
    const ImportResult m = import_ok(kBase + "--use-distributed-optimizer --num-distributed-optimizer-instances 4");
    QCOMPARE(m.layout.parallel.mesh.dp, 8);
    QCOMPARE(m.layout.training.zero_stage, 1);
    QCOMPARE(m.layout.training.zero_replicas, 4);
    const ExportResult me = export_layout(m.layout, ExportFormat::Megatron);
    QVERIFY2(me.text.find("--num-distributed-optimizer-instances 4") != std::string::npos, me.text.c_str());
    // Without the distributed optimizer DDP all-reduces over everything: listed, not read.
    const ImportResult ddp = import_ok(kBase + "--num-distributed-optimizer-instances 4");
    QCOMPARE(ddp.layout.training.zero_replicas, 1);
    QVERIFY(ignored(ddp, "--num-distributed-optimizer-instances 4") != nullptr);
    // A count that does not divide the data-parallel ranks is read, and refused by validation
    // (import-args validates what it imports: exit 2 naming training.zero_replicas).
    // Megatron-FSDP's HFSDP (optimizer states sharded across the replicas too) is refused;
    // without hybrid sharding the flag is listed.
    QVERIFY(has_issue(issues_of(kBase + "--use-megatron-fsdp --num-distributed-optimizer-instances 2 "
                                        "--outer-dp-sharding-strategy optim"),
                      "argv[19] --outer-dp-sharding-strategy", "across the 2 replicas"));
    const ImportResult outer = import_ok(kBase + "--use-megatron-fsdp --outer-dp-sharding-strategy optim");
    QVERIFY(ignored(outer, "--outer-dp-sharding-strategy optim") != nullptr);
    const ImportResult three = import_ok(kBase + "--use-distributed-optimizer --num-distributed-optimizer-instances 3");
    QVERIFY(has_issue(validate_layout(three.layout, "cmd.sh").errors, "training.zero_replicas", "do not divide dp 8"));

    // torchtitan: HSDP, replicate × shard.
    const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nseq_len = 4096\n"
                             "local_batch_size = 1\n[parallelism]\ndata_parallel_replicate_degree = 4\n"
                             "data_parallel_shard_degree = 8\n";
    const ImportResult t = import_any(toml, "c.toml", opts(32));
    QCOMPARE(t.layout.parallel.mesh.dp, 32);
    QCOMPARE(t.layout.training.zero_stage, 3);
    QCOMPARE(t.layout.training.zero_replicas, 4);
    const ExportResult te = export_layout(t.layout, ExportFormat::TorchtitanToml);
    QVERIFY2(te.text.find("data_parallel_replicate_degree = 4") != std::string::npos, te.text.c_str());
    QVERIFY2(te.text.find("data_parallel_shard_degree = 8") != std::string::npos, te.text.c_str());

    // DeepSpeed: MiCS shard groups of 8 under ZeRO-3 on 32 data-parallel ranks.
    ImportOptions ds = opts(32);
    ds.model = "llama3-8b";
    ds.seq = 4096;
    const std::string mics = R"({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 1,
        "zero_optimization": {"stage": 3, "mics_shard_size": 8}, "bf16": {"enabled": true}})";
    const ImportResult d = import_any(mics, "ds.json", ds);
    QCOMPARE(d.layout.training.zero_replicas, 4);
    const ExportResult de = export_layout(d.layout, ExportFormat::DeepSpeed);
    QVERIFY2(de.text.find("\"mics_shard_size\": 8") != std::string::npos, de.text.c_str());
    // MiCS is a ZeRO-3 optimizer: under stage 2 the key is listed, not read.
    const std::string stage2 = R"({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 1,
        "zero_optimization": {"stage": 2, "mics_shard_size": 8}, "bf16": {"enabled": true}})";
    const ImportResult d2 = import_any(stage2, "ds.json", ds);
    QCOMPARE(d2.layout.training.zero_replicas, 1);
    bool listed = false;
    for (const auto& i : d2.ignored) listed = listed || i.where == "zero_optimization.mics_shard_size";
    QVERIFY(listed);
    // Parameter offload is a ZeRO-3 setting ("Valid only with stage 3"): configs of stages 0-2
    // that carry it (HF Trainer templates do) import with the parameters on the GPU and the
    // key listed, in both its spellings.
    for (const char* zero : {R"({"stage": 0, "offload_param": {"device": "cpu"}})",
                             R"({"stage": 2, "offload_param": {"device": "nvme"}, "offload_optimizer": {"device": "cpu"}})",
                             R"({"stage": 1, "cpu_offload_param": true})"}) {
        const std::string text = std::string(R"({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 1, "zero_optimization": )") +
                                 zero + R"(, "bf16": {"enabled": true}})";
        const ImportResult p = import_any(text, "ds.json", ds);
        QCOMPARE(static_cast<int>(p.layout.training.offload_params), static_cast<int>(Offload::None));
        bool param_listed = false;
        for (const auto& i : p.ignored) param_listed = param_listed || i.where.find("offload_param") != std::string::npos;
        QVERIFY2(param_listed, zero);
    }
}

void TestImportRules::torchtitan_flavors() {
    // Issue 33 item 4: flavors as users write them. Qwen3 32B (qwen3/__init__.py _32b at main
    // b5bcd76c) against the published Qwen3-32B: 32.8B parameters (Qwen3 model card).
    const ImportResult q = import_any("[model]\nname = \"qwen3\"\nflavor = \"32B\"\n[parallelism]\n"
                                      "data_parallel_shard_degree = 8\ntensor_parallel_degree = 8\n",
                                      "q.toml", opts(64));
    QCOMPARE(q.layout.model.num_layers, 64);
    QCOMPARE(q.layout.model.hidden_size, std::int64_t{5120});
    QVERIFY(q.layout.model.qk_norm);
    // Llama 4 Scout and DeepSeek 16B.
    const ImportResult s = import_any("[model]\nname = \"llama4\"\nflavor = \"17bx16e\"\n[parallelism]\n"
                                      "data_parallel_shard_degree = 8\n", "s.toml", opts(8));
    QCOMPARE(QString::fromStdString(s.layout.model_ref), QString("llama4-scout"));
    const ImportResult d = import_any("[model]\nname = \"deepseek_v3\"\nflavor = \"16B\"\n[parallelism]\n"
                                      "data_parallel_shard_degree = 8\n", "d.toml", opts(8));
    QVERIFY(d.layout.model.uses_mla);
    QCOMPARE(d.layout.model.moe.num_experts, 64);
    // Issue 34 item 9: a Qwen3 read from a config.json exports as torchtitan's qwen3 model.
    Layout l = q.layout;
    l.model = model_from_hf_config(
        nlohmann::json::parse(R"({"model_type":"qwen3","hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":64,
            "num_key_value_heads":8,"head_dim":128,"intermediate_size":25600,"vocab_size":151936,"max_position_embeddings":40960,
            "rope_theta":1000000,"rms_norm_eps":1e-6,"tie_word_embeddings":false,"hidden_act":"silu","attention_dropout":0.0})"),
        "Qwen3-32B/config.json", "qwen3-32b");
    const ExportResult e = export_layout(l, ExportFormat::Torchtitan);
    QVERIFY2(e.text.find("from torchtitan.models.qwen3 import config_registry, model_registry") != std::string::npos,
             e.text.c_str());
    QVERIFY(e.text.find("model_registry(\"32B\"") != std::string::npos);
    QVERIFY(e.text.find("config_registry.qwen3_32b()") != std::string::npos);
}

void TestImportRules::torchtitan_module_names() {
    // Issue 34 item 9: a layout named after the module it is imported from must not shadow it.
    Layout l = import_any("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 8\n",
                          "c.toml", opts(8))
                   .layout;
    l.name = "config_registry";
    const ExportResult e = export_layout(l, ExportFormat::Torchtitan);
    QVERIFY2(e.text.find("def config_registry(") == std::string::npos, e.text.c_str());
    QVERIFY(e.text.find("def layout_config_registry(") != std::string::npos);
}


void TestImportRules::sweep_of_real_scripts() {
    // Issue 33: refusals found by importing 313 real scripts of Megatron-LM's releases,
    // Pai-Megatron-Patch, Megatron-DeepSpeed and Megatron-Bridge (the wrong ones, fixed).
    // Pai's --use-llama2-rotary-position-embeddings is its older name for RoPE, its
    // --rotary-scale-factor 1 the default interpolation (megatron_patch/arguments.py:256-260,
    // :296 at a098ca5a): 17 of its scripts.
    const ImportResult pai = import_ok(kBase + "--swiglu --normalization RMSNorm --disable-bias-linear "
                                               "--use-llama2-rotary-position-embeddings --rotary-scale-factor 1 "
                                               "--embed-layernorm --source-seq-len 8");
    QVERIFY(!pai.layout.model.learned_position_embeddings);
    QVERIFY(ignored(pai, "--rotary-scale-factor 1")->reason.find("Pai-Megatron-Patch") != std::string::npos);
    QVERIFY(ignored(pai, "--embed-layernorm") != nullptr);
    // Pai's multi-query heads change the K/V heads: refused with the upstream spelling.
    QVERIFY(has_issue(issues_of(kBase + "--attention-head-type multiquery"), "argv[16] --attention-head-type",
                      "--num-query-groups 1"));
    QVERIFY(issues_of(kBase + "--attention-head-type multihead").empty());
    // Pai's MLA head widths are upstream's --qk-head-dim and --qk-pos-emb-head-dim.
    const std::string mla = "--multi-latent-attention --kv-lora-rank 64 --v-head-dim 16 --swiglu "
                            "--normalization RMSNorm --disable-bias-linear --position-embedding-type rope "
                            "--num-experts 4 --moe-router-topk 2 --moe-ffn-hidden-size 32 --ffn-hidden-size 128 ";
    const ImportResult a = import_ok(kBase + mla + "--qk-head-dim 16 --qk-pos-emb-head-dim 8");
    const ImportResult b = import_ok(kBase + mla + "--qk-nope-head-dim 16 --qk-rope-head-dim 8");
    QCOMPARE(b.layout.model.mla.qk_nope_head_dim, a.layout.model.mla.qk_nope_head_dim);
    QCOMPARE(b.layout.model.mla.qk_rope_head_dim, std::int64_t{8});
    QCOMPARE(a.layout.model.mla.qk_rope_head_dim, std::int64_t{8});
    // mrope (multimodal RoPE) has RoPE's shapes: 6 Qwen-VL scripts.
    const ImportResult mrope = import_ok(kBase + "--swiglu --normalization RMSNorm --disable-bias-linear "
                                                 "--position-embedding-type mrope --mrope-section 2 3 3");
    QVERIFY(has_note(mrope, "read as rope"));
    // Megatron-DeepSpeed's Ulysses degree 1 is its default; more is a layout import-args
    // does not read, and its fork's other layout flags are named as such.
    QVERIFY(issues_of(kBase + "--ds-sequence-parallel-size 1").empty());
    QVERIFY(has_issue(issues_of(kBase + "--ds-sequence-parallel-size 2"), "argv[16] --ds-sequence-parallel-size",
                      "Ulysses"));
    QVERIFY(has_issue(issues_of(kBase + "--enable-zbh1-pipeline"), "argv[16] --enable-zbh1-pipeline", "zero-bubble"));
    QVERIFY(has_issue(issues_of(kBase + "--num-layers-teacher 4"), "argv[16] --num-layers-teacher", "distillation"));
    // The multimodal example's own arguments are known (the vision side).
    const ImportResult mm = import_ok(kBase + "--packing-seq-length 64 --recompute-vision");
    QVERIFY(ignored(mm, "--recompute-vision")->reason.find("multimodal") != std::string::npos);
    // A world the launcher only assumes (srun without -n or -N) asks for --gpus instead of
    // refusing tp × pp.
    QVERIFY(has_issue(issues_of("srun python pretrain_gpt.py " + kArgs + " --tensor-model-parallel-size 8", opts(0)),
                      "world size", "--gpus N"));
    // tools/preprocess_data.py's --tokenizer-type does not make data preparation a training
    // command.
    const ImportResult prep =
        import_ok("python tools/preprocess_data.py --input x.json --output-prefix b --vocab-file v --merge-file m "
                  "--tokenizer-type GPT2BPETokenizer --workers 32 --append-eod\n"
                  "torchrun --nproc-per-node 8 pretrain_gpt.py " + kArgs + "\n");
    QCOMPARE(prep.layout.gpus, 8);
    // A training entry point whose arguments are a variable the environment sets asks for it
    // (it is still the training command).
    QVERIFY(has_issue(issues_of("python pretrain_gpt.py ${P}\n"), "argv[2]", "--set P=VALUE"));
    // No length at all: asked for by name, not "0 is outside the allowed range".
    QVERIFY(has_issue(issues_of("torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 64 "
                                "--num-attention-heads 4 --micro-batch-size 1 --vocab-size 256"),
                      "--seq-length", "required"));
    // A command string run by a shell with options before -c (`bash -x -c "$CMD"`, the
    // -o form, options clustered with c) is the script's command.
    for (const char* shell : {"bash -x -c", "bash -ec", "sh -o pipefail -c", "/bin/bash --noprofile -x -c"}) {
        const ImportResult run = import_ok("CMD=\"torchrun --nproc-per-node 8 pretrain_gpt.py " + kArgs +
                                           " --tensor-model-parallel-size 2\"\n" + shell + " \"$CMD\"\n");
        QVERIFY2(run.layout.parallel.mesh.tp == 2, shell);
    }
    // Process substitution: `exec > >(tee -a log) 2>&1` and `| tee >(grep loss > l)` pass a
    // pipe's path; the list inside launches nothing.
    const ImportResult tee = import_ok("LOG=train.log\nexec > >(tee -a \"$LOG\") 2>&1\n"
                                       "exec 2> >(tee -a err.log >&2)\n"
                                       "torchrun --nproc-per-node 8 pretrain_gpt.py " + kArgs +
                                       " --tensor-model-parallel-size 2 2>&1 | tee >(grep loss > loss.log)\n");
    QCOMPARE(tee.layout.parallel.mesh.tp, 2);
    QVERIFY(has_issue(issues_of("exec > >(tee log\n"), "line 1", "unterminated process substitution"));
    // A training module in place of the script: torchrun's -m / --module (torch/distributed/
    // run.py) and python -m, as Megatron-LM's mimo examples launch (`python -m
    // torch.distributed.run ... -m examples.mimo.pretrain_mimo`).
    for (const std::string launch : {"torchrun --nproc-per-node 8 -m megatron.training.pretrain_gpt ",
                                     "python -m torch.distributed.run --nproc-per-node 8 --module pretrain_gpt ",
                                     "uv run --extra ssm python -m torch.distributed.run --nproc-per-node 8 -m "
                                     "examples.pretrain_gpt "}) {
        const ImportResult m = import_ok(launch + kArgs + " --tensor-model-parallel-size 2\n");
        QCOMPARE(m.layout.parallel.mesh.tp, 2);
        QVERIFY2(has_note(m, "read as pretrain_gpt.py"), launch.c_str());
    }
    const ImportResult single = import_ok("python -u -m megatron.training.pretrain_gpt " + kArgs + "\n", opts(1));
    QCOMPARE(single.layout.gpus, 1);
    QVERIFY(has_issue(issues_of("torchrun --nproc-per-node 8 -m not/a/module.py " + kArgs), "argv[4] not/a/module.py",
                      "training module"));
    // Megatron-LM's examples/post_training/modelopt/eagle3.sh (d98e8a64): a checkpoint
    // conversion with the layout's arguments, then the training script run directly from a
    // directory the script computes (`${LAUNCH_SCRIPT} ${SCRIPT_DIR}/finetune.py`): the
    // conversion is not training, and the unknown directory decides nothing.
    const ImportResult modelopt = import_ok("SCRIPT_DIR=\"$(dirname \"$(readlink -f \"$0\")\")\"\n"
                                            "${SCRIPT_DIR}/convert_model.py " + kArgs +
                                            " --tensor-model-parallel-size 4\n"
                                            "${SCRIPT_DIR}/finetune.py " + kArgs + " --tensor-model-parallel-size 2\n",
                                            opts(8));
    QCOMPARE(modelopt.layout.parallel.mesh.tp, 2);
    QVERIFY(has_note(modelopt, "line 2: a checkpoint conversion"));
    // Alone, a conversion's layout is still read (the parallelism it shards for).
    QCOMPARE(import_ok("python tools/checkpoint/convert_model.py " + kArgs + " --tensor-model-parallel-size 4\n", opts(8))
                 .layout.parallel.mesh.tp,
             4);
    // Nothing trains: the message names what the script does run, once each, and says what a
    // Megatron-Bridge recipe is (its examples launch scripts/training/run_recipe.py --recipe).
    const auto none = issues_of("python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py "
                                "--recipe llama3_8b_pretrain model.tensor_model_parallel_size=2\n"
                                "python examples/conversion/convert.py --hf-model x\n"
                                "python examples/conversion/convert.py --hf-model y\n");
    QVERIFY2(has_issue(none, "script", "it runs scripts/training/run_recipe.py (line 1), examples/conversion/convert.py "
                                       "(line 2): none is"),
             dump(none).c_str());
    QVERIFY(has_issue(none, "script", "Megatron-Bridge recipe run"));
    QVERIFY(has_issue(none, "script", "import-args RECIPE.py --config NAME"));
    QVERIFY(has_issue(issues_of("python tools/checkpoint/convert.py --model-type GPT\n"), "script",
                      "it runs tools/checkpoint/convert.py (line 1)"));
    // Megatron-DeepSpeed's curriculum_learning/ds_train.sh runs its training script with bash.
    QVERIFY(has_issue(issues_of("CONFIG=x\nbash ds_pretrain_gpt2.sh $CONFIG 8\n"), "script",
                      "it runs bash ds_pretrain_gpt2.sh (line 2)"));
    QVERIFY(has_issue(issues_of("bash -x run.sh\n"), "script", "import that file"));
}

QTEST_GUILESS_MAIN(TestImportRules)
#include "tst_import_rules.moc"
