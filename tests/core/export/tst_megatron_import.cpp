// Real Megatron-LM command lines (rewritten from Megatron-LM's examples) import to the right
// layout; bad command lines are refused with the argument's text and position.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "export/megatron_import.h"
#include "export/moe_layer_pattern.h"
#include "export/shell_words.h"

using namespace meshwork;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(MESHWORK_TEST_FIXTURES) + "/export/megatron/" + name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

ImportOptions cluster(const std::string& name) {
    ImportOptions o;
    o.cluster = name;
    return o;
}

// The issues of the InputError that importing `text` raises; empty when it imports.
std::vector<InputIssue> issues_of(const std::string& text, ImportOptions o = cluster("dgx-h100")) {
    try {
        (void)import_megatron(text, "cmd.sh", o);
    } catch (const InputError& e) {
        return e.issues();
    }
    return {};
}

bool has_issue(const std::vector<InputIssue>& issues, const std::string& field,
               const std::string& words) {
    for (const auto& i : issues) {
        if (i.field == field && i.message.find(words) != std::string::npos) return true;
    }
    return false;
}

std::string dump(const std::vector<InputIssue>& issues) {
    std::string s;
    for (const auto& i : issues) s += "\n  " + i.to_string();
    return s.empty() ? " (none)" : s;
}

const IgnoredInput* ignored(const ImportResult& r, const std::string& text) {
    for (const auto& i : r.ignored) {
        if (i.text == text) return &i;
    }
    return nullptr;
}

#define EXPECT_ISSUE(text, field, words)                                                   \
    do {                                                                                  \
        const auto found = issues_of(text);                                               \
        QVERIFY2(has_issue(found, field, words),                                          \
                 qPrintable(QString::fromStdString(std::string("expected ") + field + ": " + \
                                                   words + ", got" + dump(found))));      \
    } while (false)

}  // namespace

class TestMegatronImport : public QObject {
    Q_OBJECT
private slots:
    void gpt3_175b_example();
    void llama3_70b_example();
    void shell_words();
    void moe_layer_freq();
    void bad_command_lines();
    void world_size_sources();
};

void TestMegatronImport::gpt3_175b_example() {
    const ImportResult r = import_megatron(fixture("gpt3-175b.sh"), "gpt3-175b.sh",
                                           cluster("dgx-a100-80gb"));
    const Layout& l = r.layout;
    QCOMPARE(QString::fromStdString(l.model_ref), QString("gpt3-175b"));
    QCOMPARE(l.gpus, 1024);
    QCOMPARE(l.parallel.mesh.tp, 8);
    QCOMPARE(l.parallel.mesh.pp, 16);
    QCOMPARE(l.parallel.mesh.dp, 8);
    QCOMPARE(l.parallel.vpp, 1);
    QVERIFY(!l.parallel.sequence_parallel);
    QCOMPARE(l.training.micro_batch_size, 1);
    QCOMPARE(l.training.global_batch_size, 1536);
    QCOMPARE(l.training.seq_length, 2048);
    QVERIFY(l.training.dtype == DType::Fp16);
    QVERIFY(l.training.recompute == Recompute::None);
    QCOMPARE(l.training.zero_stage, 0);
    QVERIFY(l.training.flash_attention);
    QVERIFY(l.placement.layers_per_stage.empty());  // 96 / 16: the even split
    QCOMPARE(l.num_micro_batches(), 192);
    // Ignored, not dropped: the learning rate, the multi-value ramp-up, the launcher's address.
    QVERIFY(ignored(r, "--lr 6.0e-5") != nullptr);
    const IgnoredInput* ramp = ignored(r, "--rampup-batch-size 16 16 5859375");
    QVERIFY(ramp != nullptr);
    QVERIFY(ramp->where.rfind("argv[", 0) == 0);
    QVERIFY(ignored(r, "--master_addr node001") != nullptr);
    QVERIFY(ignored(r, "CUDA_DEVICE_MAX_CONNECTIONS=1") != nullptr);
}

void TestMegatronImport::llama3_70b_example() {
    const ImportResult r = import_megatron(fixture("llama3-70b.sh"), "llama3-70b.sh", cluster("dgx-h100"));
    const Layout& l = r.layout;
    QCOMPARE(QString::fromStdString(l.model_ref), QString("llama3-70b"));
    QCOMPARE(l.model.num_kv_heads, 8);
    QCOMPARE(l.gpus, 64);
    QCOMPARE(l.parallel.mesh.tp, 8);
    QCOMPARE(l.parallel.mesh.pp, 4);
    QCOMPARE(l.parallel.mesh.dp, 2);
    QCOMPARE(l.parallel.mesh.etp, 1);
    QVERIFY(l.parallel.sequence_parallel);
    QCOMPARE(l.training.global_batch_size, 128);
    QCOMPARE(l.training.seq_length, 8192);
    QVERIFY(l.training.dtype == DType::Bf16);
    QCOMPARE(l.training.zero_stage, 1);
    // block recompute of 80 layers per stage covers all 20 of each stage
    QVERIFY(l.training.recompute == Recompute::Full);
    QCOMPARE(l.training.recompute_num_layers, 0);
    QVERIFY(ignored(r, "--tokenizer-model meta-llama/Meta-Llama-3-70B") != nullptr);
    QVERIFY(ignored(r, "--eval-iters 10") != nullptr);
    QVERIFY(ignored(r, "--node_rank 0") != nullptr);
    const IgnoredInput* tokenizer = ignored(r, "--tokenizer-type HuggingFaceTokenizer");
    QVERIFY(tokenizer != nullptr);
    QVERIFY(tokenizer->where.rfind("argv[", 0) == 0 && tokenizer->where.find("--") == std::string::npos);
}

void TestMegatronImport::shell_words() {
    const auto cmds = split_shell_commands(
        "# comment line\n"
        "A=1 B='two words' torchrun --nproc-per-node=4 \\\n"
        "  pretrain_gpt.py --moe-layer-freq '([0]*1+[1]*3)' \"--x=${Y}\" # trailing\n"
        "echo a\\ b; echo \"q\\\"q\"\n",
        "f");
    QCOMPARE(cmds.size(), std::size_t(3));
    const auto& c = cmds[0];
    QCOMPARE(c.size(), std::size_t(8));
    QVERIFY(c[0].assignment && c[1].assignment && !c[2].assignment);
    QCOMPARE(QString::fromStdString(c[1].text), QString("B=two words"));
    QCOMPARE(QString::fromStdString(c[3].text), QString("--nproc-per-node=4"));
    QCOMPARE(c[4].line, 3);  // after the continuation
    QCOMPARE(QString::fromStdString(c[6].text), QString("([0]*1+[1]*3)"));
    QVERIFY(c[6].expansion.empty());
    QCOMPARE(QString::fromStdString(c[7].text), QString("--x=${Y}"));
    QCOMPARE(QString::fromStdString(c[7].expansion), QString("${Y}"));
    QCOMPARE(QString::fromStdString(cmds[1][1].text), QString("a b"));
    QCOMPARE(QString::fromStdString(cmds[2][1].text), QString("q\"q"));
    QVERIFY_THROWS_EXCEPTION(InputError, split_shell_commands("echo 'open", "f"));
}

void TestMegatronImport::moe_layer_freq() {
    int k = -1, f = -1;
    std::string error;
    QVERIFY(parse_moe_layer_freq("([0]*3+[1]*58)", 61, k, f, error));
    QCOMPARE(k, 3);
    QCOMPARE(f, 1);
    QVERIFY(parse_moe_layer_freq("2", 8, k, f, error));
    QCOMPARE(k, 0);
    QCOMPARE(f, 2);
    QVERIFY(parse_moe_layer_freq("[0,1,0,1,0,1]", 6, k, f, error));
    QCOMPARE(k, 1);
    QCOMPARE(f, 2);
    QVERIFY(!parse_moe_layer_freq("([1]*3+[0]*1)*2", 8, k, f, error));  // not k dense + every N
    QVERIFY(!parse_moe_layer_freq("([0]*3+[1]*5)", 9, k, f, error));    // wrong length
    QVERIFY(error.find("entries") != std::string::npos);
    QVERIFY(!parse_moe_layer_freq("__import__('os')", 9, k, f, error));
}

void TestMegatronImport::bad_command_lines() {
    const std::string base = "torchrun --nproc-per-node 4 pretrain_gpt.py --num-layers 4 "
                             "--hidden-size 64 --num-attention-heads 4 --seq-length 32 "
                             "--micro-batch-size 1 --vocab-size 256 ";
    // argv[0] torchrun [1] --nproc-per-node [2] 4 [3] pretrain_gpt.py [4] --num-layers [5] 4
    // ... [14] --vocab-size [15] 256, so the next argument is argv[16].
    QVERIFY2(issues_of(base).empty(), qPrintable(QString::fromStdString(dump(issues_of(base)))));
    EXPECT_ISSUE(base + "--bogus-flag 3", "argv[16] --bogus-flag", "unknown Megatron-LM argument");
    EXPECT_ISSUE(base + "--tensor-model-parallel-size ${TP}", "argv[16] --tensor-model-parallel-size",
                 "${TP}");
    EXPECT_ISSUE(base + "--tensor-model-parallel-size=$TP", "argv[16] --tensor-model-parallel-size", "$TP");
    EXPECT_ISSUE(base + "--bf16 --fp16", "argv[17] --fp16", "conflicts with argv[16] --bf16");
    EXPECT_ISSUE(base + "--num-layers 8", "argv[16] --num-layers", "conflicts with '4'");
    EXPECT_ISSUE(base + "--hidden-size", "argv[16] --hidden-size", "the value is missing");
    EXPECT_ISSUE(base + "--micro-batch-size 1 --global-batch-size two", "argv[18] --global-batch-size",
                 "not an integer");
    EXPECT_ISSUE(base + "--bf16 yes", "argv[17]", "a value without a flag");
    EXPECT_ISSUE(base + "--bf16=1", "argv[16] --bf16", "takes no value");
    EXPECT_ISSUE(base + "--num-query-groups 2", "argv[16] --num-query-groups", "--group-query-attention");
    EXPECT_ISSUE(base + "--recompute-granularity full", "--recompute-method", "uniform or block");
    EXPECT_ISSUE(base + "--tensor-model-parallel-size 3", "argv[16] --tensor-model-parallel-size",
                 "not divisible");
    EXPECT_ISSUE(base + "|& tee log.txt", "line 1", "pipes");
    EXPECT_ISSUE(base + "\necho done", "line 2", "a second command");
    EXPECT_ISSUE("torchrun --nnodes 1:4 pretrain_gpt.py --num-layers 2", "argv[1] --nnodes", "elastic");
    EXPECT_ISSUE("torchrun --nproc-per-node $GPUS pretrain_gpt.py", "argv[1] --nproc-per-node", "$GPUS");
    EXPECT_ISSUE("torchrun --fancy pretrain_gpt.py", "argv[1] --fancy", "unknown torchrun option");
    EXPECT_ISSUE("deepspeed pretrain_gpt.py", "argv[0]", "expected torchrun");
    EXPECT_ISSUE("torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64", "--num-attention-heads",
                 "required");
    // Several problems are reported together, each with its position.
    const auto many = issues_of(base + "--foo --bar 1");
    QVERIFY(has_issue(many, "argv[16] --foo", "unknown"));
    QVERIFY(has_issue(many, "argv[17] --bar", "unknown"));
}

void TestMegatronImport::world_size_sources() {
    const std::string args = "--num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                             "--seq-length 32 --micro-batch-size 1 --vocab-size 256 "
                             "--tensor-model-parallel-size 2 --group-query-attention "
                             "--num-query-groups 2 --swiglu --normalization RMSNorm "
                             "--position-embedding-type rope --untie-embeddings-and-output-weights "
                             "--disable-bias-linear --ffn-hidden-size 128 --max-position-embeddings 128";
    EXPECT_ISSUE(args, "world size", "--gpus");
    ImportOptions o = cluster("cpu-local");
    o.gpus = 4;
    const ImportResult bare = import_megatron(args, "x", o);
    QCOMPARE(bare.layout.gpus, 4);
    QCOMPARE(bare.layout.parallel.mesh.dp, 2);
    QCOMPARE(QString::fromStdString(bare.layout.model_ref), QString("tiny"));
    o.gpus = 8;
    QVERIFY(has_issue(issues_of("torchrun --nproc-per-node 4 pretrain_gpt.py " + args, o), "--gpus",
                      "disagree"));
}

QTEST_GUILESS_MAIN(TestMegatronImport)
#include "tst_megatron_import.moc"
