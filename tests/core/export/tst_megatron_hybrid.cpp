// Issue 33: Megatron-LM's hybrid models (pretrain_mamba.py, pretrain_hybrid.py) through
// import-args: the layer pattern into ModelSpec's per-block kinds, the Mamba-2 sizes and
// the squared-ReLU MLP; real scripts of Megatron-LM (tests/fixtures/export/megatron/
// SOURCES.txt); the hybrid export and its import giving the same model back.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/export/exporter.h"
#include "core/export/megatron_import.h"
#include "core/layout/layout_overrides.h"
#include "core/model/hf_config.h"
#include "core/model/hf_hybrid_config.h"

using namespace meshwork;

namespace {

const std::string kFixtures = MESHWORK_TEST_FIXTURES;

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

ImportOptions options(long long vocab = 0) {
    ImportOptions o;
    o.cluster = "dgx-h100";
    if (vocab > 0) o.vocab_size = vocab;
    return o;
}

// A small hybrid command line; `extra` holds the flags under test.
std::string command(const std::string& extra) {
    return "torchrun --nproc_per_node 8 pretrain_mamba.py --hidden-size 256 --num-attention-heads 4 "
           "--seq-length 512 --max-position-embeddings 512 --vocab-size 1024 --micro-batch-size 1 "
           "--global-batch-size 8 --normalization RMSNorm --disable-bias-linear "
           "--untie-embeddings-and-output-weights --position-embedding-type none " + extra + "\n";
}

// The messages of the refusal of `text`, each with its field; empty when it imports.
std::string refusal(const std::string& text) {
    try {
        (void)import_megatron(text, "cmd.sh", options());
    } catch (const InputError& e) {
        std::string s;
        for (const auto& i : e.issues()) s += i.field + ": " + i.message + "\n";
        return s;
    }
    return "";
}

#define EXPECT_REFUSED(text, flag, words)                                                             \
    do {                                                                                              \
        const std::string why = refusal(text);                                                        \
        QVERIFY2(why.find(flag) != std::string::npos && why.find(words) != std::string::npos,         \
                 qPrintable(QString::fromStdString("expected " + std::string(flag) + ": " + words +  \
                                                   ", got: " + why)));                               \
    } while (false)

}  // namespace

class TestMegatronHybrid : public QObject {
    Q_OBJECT
private slots:
    void nemotron_h_config_of_megatron_lm();
    void mamba_example_of_megatron_lm();
    void ratios_build_upstreams_pattern();
    void refusals_name_the_flag();
    void export_then_import_gives_the_model_back();
    void export_declares_kinds_megatron_cannot_spell();
};

// Megatron-LM's ModelOpt config for Nemotron-H 8B: the same model as its Hugging Face
// config.json (the pattern, the Mamba-2 sizes, squared ReLU).
void TestMegatronHybrid::nemotron_h_config_of_megatron_lm() {
    const std::string file = kFixtures + "/export/megatron/mlm__modelopt_conf_Nemotron-H-8B-Base-8K.sh";
    ImportOptions o = options(131072);
    o.gpus = 8;
    const ImportResult r = import_megatron(read(file), file, o);
    const ModelSpec hf = load_model(kFixtures + "/hf/families-2026/nemotron-h-8b-base-8k.config.json");
    const ModelSpec& m = r.layout.model;
    QCOMPARE(m.num_layers, 52);
    QCOMPARE(QString::fromStdString(hybrid_pattern(m)), QString::fromStdString(hybrid_pattern(hf)));
    QVERIFY(m.block_kinds == hf.block_kinds);
    QVERIFY(m.mamba == hf.mamba);
    QCOMPARE(QString::fromStdString(m.mlp_activation), QString("relu2"));
    QVERIFY(m.mlp == MlpKind::Dense);
    QCOMPARE(m.ffn_hidden_size, hf.ffn_hidden_size);
    QCOMPARE(m.num_kv_heads, hf.num_kv_heads);
    QCOMPARE(m.head_dim, hf.head_dim);
    QCOMPARE(QString::fromStdString(m.family), QString("nemotron_h"));
}

// examples/mamba/train.sh: --hybrid-layer-pattern without --num-layers, no --mamba-num-heads
// (hidden × 2 / head dim) and no --squared-relu (GELU MLP layers).
void TestMegatronHybrid::mamba_example_of_megatron_lm() {
    const std::string file = kFixtures + "/export/megatron/mlm__examples_mamba_train.sh";
    const ImportResult r = import_megatron(read(file), file, options(131072));
    const ModelSpec& m = r.layout.model;
    QCOMPARE(QString::fromStdString(hybrid_pattern(m)),
             QString("M-M-M--M-*M-M-M-M--*M-M-M-M-*M--M-M-M-*M-M--M-M-"));
    QCOMPARE(m.num_layers, 48);
    QCOMPARE(m.mamba.num_heads, 32);
    QCOMPARE(m.mamba.head_dim, 64);
    QCOMPARE(m.mamba.state_dim, 128);
    QCOMPARE(m.mamba.num_groups, 8);
    QVERIFY(m.mlp_activation.empty());
    QCOMPARE(r.layout.gpus, 8);
    QCOMPARE(r.layout.training.micro_batch_size, 4);
    QCOMPARE(r.layout.training.global_batch_size, 32);
    bool noted = false;
    for (const auto& n : r.notes) noted = noted || n.find("--mamba-num-heads not given") != std::string::npos;
    QVERIFY(noted);
}

// core_v0.12 … core_v0.16's ratios: the expected patterns are the output of upstream's
// pattern_from_ratios (hybrid_layer_allocation.py:74-125 at d98e8a64), run with Python.
void TestMegatronHybrid::ratios_build_upstreams_pattern() {
    const auto pattern = [](const std::string& extra) {
        return hybrid_pattern(import_megatron(command(extra), "cmd.sh", options()).layout.model);
    };
    QCOMPARE(QString::fromStdString(pattern("--num-layers 24 --hybrid-attention-ratio 0.08 --hybrid-mlp-ratio 0.5")),
             QString("M-M-M--*M-M-M-M-*M--M-M-"));
    QCOMPARE(QString::fromStdString(pattern("--num-layers 10 --hybrid-attention-ratio 0.1 --hybrid-mlp-ratio 0.2")),
             QString("MMMM-*MMM-"));
    QCOMPARE(QString::fromStdString(pattern("--num-layers 8 --hybrid-attention-ratio 0.25")), QString("MM*MM*MM"));
    QCOMPARE(QString::fromStdString(pattern("--num-layers 6 --is-hybrid-model")), QString("MMMMMM"));
    // pretrain_mamba.py without a hybrid flag builds all Mamba-2 layers (its ratios default to
    // 0); pretrain_gpt.py with the same arguments is a GPT model without per-block kinds.
    QCOMPARE(QString::fromStdString(pattern("--num-layers 6")), QString("MMMMMM"));
    std::string gpt = command("--num-layers 6 --swiglu");
    gpt.replace(gpt.find("pretrain_mamba.py"), 17, "pretrain_gpt.py");
    QVERIFY(!import_megatron(gpt, "cmd.sh", options()).layout.model.is_hybrid());
}

void TestMegatronHybrid::refusals_name_the_flag() {
    EXPECT_REFUSED(command("--hybrid-layer-pattern M*G-"), "--hybrid-layer-pattern", "Gated DeltaNet");
    EXPECT_REFUSED(command("--hybrid-layer-pattern M*D-"), "--hybrid-layer-pattern", "sparse attention");
    EXPECT_REFUSED(command("--hybrid-layer-pattern 'M-*|M-*'"), "--hybrid-layer-pattern", "pipeline segments");
    EXPECT_REFUSED(command("--hybrid-layer-pattern M-*/M-"), "--hybrid-layer-pattern", "multi-token");
    EXPECT_REFUSED(command("--hybrid-layer-pattern M-X"), "--hybrid-layer-pattern", "'X'");
    EXPECT_REFUSED(command("--hybrid-layer-pattern M*E-"), "--hybrid-layer-pattern", "--num-experts");
    EXPECT_REFUSED(command("--hybrid-layer-pattern M*-- --hybrid-override-pattern M*--"), "--hybrid-override-pattern",
                   "one layer pattern");
    EXPECT_REFUSED(command("--hybrid-layer-pattern M*-- --squared-relu --swiglu"), "--squared-relu", "one MLP activation");
    EXPECT_REFUSED(command("--hybrid-layer-pattern M*-- --mamba-num-groups 3"), "--mamba-num-groups", "do not divide");
    EXPECT_REFUSED(command("--num-layers 4 --hybrid-attention-ratio 0.6 --hybrid-mlp-ratio 0.6"), "--hybrid-mlp-ratio",
                   "more than 1");
    // The pattern gives the layer count; a different --num-layers is noted, not used.
    const ImportResult r = import_megatron(command("--num-layers 7 --hybrid-layer-pattern M*-M"), "cmd.sh", options());
    QCOMPARE(r.layout.model.num_layers, 4);
    bool noted = false;
    for (const auto& n : r.notes) noted = noted || n.find("--num-layers 7 is not used") != std::string::npos;
    QVERIFY(noted);
}

// The hybrid export (megatron_export.cpp) writes the pattern, the Mamba-2 sizes and squared
// ReLU; importing it gives the same model and axes back.
void TestMegatronHybrid::export_then_import_gives_the_model_back() {
    LayoutOverrides o;
    o.model = kFixtures + "/hf/families-2026/nemotron-h-8b-base-8k.config.json";
    o.cluster = "dgx-h100";
    o.gpus = 16;
    o.tp = 2;
    o.pp = 2;
    o.gbs = 64;
    const Layout l = build_layout(std::nullopt, o);
    const ExportResult e = export_layout(l, ExportFormat::Megatron);
    for (const char* words : {"--is-hybrid-model", "--hybrid-override-pattern 'M-M-M-M*-M-M-M-M-M*-", "--mamba-num-heads 128",
                              "--mamba-head-dim 64", "--mamba-state-dim 128", "--mamba-num-groups 8", "--squared-relu"}) {
        QVERIFY2(e.text.find(words) != std::string::npos, words);
    }
    const ImportResult r = import_megatron(e.text, "export.sh", options());
    const ModelSpec& a = l.model;
    const ModelSpec& b = r.layout.model;
    QCOMPARE(b.num_layers, a.num_layers);
    QVERIFY(b.block_kinds == a.block_kinds);
    QVERIFY(b.mamba == a.mamba);
    QCOMPARE(QString::fromStdString(b.mlp_activation), QString::fromStdString(a.mlp_activation));
    QCOMPARE(b.ffn_hidden_size, a.ffn_hidden_size);
    QCOMPARE(b.vocab_size, a.vocab_size);
    QVERIFY(r.layout.parallel.mesh == l.parallel.mesh);
    QCOMPARE(r.layout.stage_layers(), l.stage_layers());
}

// Gated DeltaNet blocks (Qwen3-Next) have no letter Meshwork writes: the export says so.
void TestMegatronHybrid::export_declares_kinds_megatron_cannot_spell() {
    LayoutOverrides o;
    o.model = kFixtures + "/hf/families-2026/qwen3-next-80b-a3b-instruct.config.json";
    o.cluster = "dgx-h100";
    o.gpus = 64;
    o.tp = 4;
    o.ep = 16;
    o.gbs = 64;
    const ExportResult e = export_layout(build_layout(std::nullopt, o), ExportFormat::Megatron);
    bool declared = false;
    for (const auto& s : e.lost) declared = declared || s.find("per-block kinds") != std::string::npos;
    QVERIFY(declared);
    QVERIFY(e.text.find("--is-hybrid-model") == std::string::npos);
}

QTEST_APPLESS_MAIN(TestMegatronHybrid)
#include "tst_megatron_hybrid.moc"
