// Real Megatron-LM command lines (rewritten from Megatron-LM's examples) import to the right
// layout; bad command lines are refused with the argument's text and position.
#include <QtTest>

#include <fstream>
#include <map>
#include <sstream>

#include "core/common/error.h"
#include "core/export/megatron_export.h"
#include "core/export/megatron_import.h"
#include "core/export/moe_layer_pattern.h"
#include "core/export/pipeline_layout.h"
#include "core/export/shell_script.h"
#include "core/model/hf_config.h"

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
    void shell_script();
    void script_paths();
    void launchers();
    void pipeline_layout();
    void moe_layer_freq();
    void bad_command_lines();
    void pipeline_split_flags();
    void world_size_sources();
    void grad_reduce_in_bf16();
    void fp8_recipe_and_cuda_graphs();
    void moe_dispatcher_and_a2a_overlap();
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
    // Neither overlap flag: Megatron-LM's default, off (arguments.py:3121, 3148).
    QVERIFY(!l.parallel.overlap_grad_reduce && !l.parallel.overlap_param_gather);
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
    // The example passes no --rotary-base: Megatron-LM runs it with its default base 10000,
    // not Llama 3's 500000, so this is not the llama3-70b preset (and the tokenizer leaves
    // the vocabulary to --vocab-size).
    ImportOptions o = cluster("dgx-h100");
    o.vocab_size = 128256;
    const ImportResult r = import_megatron(fixture("llama3-70b.sh"), "llama3-70b.sh", o);
    const Layout& l = r.layout;
    QVERIFY(l.model_ref.empty());
    QCOMPARE(l.model.rope.theta, 10000.0);
    QCOMPARE(l.model.norm_eps, 1e-5);
    ModelSpec preset = load_model("llama3-70b");
    preset.rope.theta = 10000;
    preset.name = l.model.name;
    preset.family = l.model.family;
    QVERIFY(preset == l.model);  // everything else is Llama 3 70B
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
    QVERIFY(l.parallel.overlap_grad_reduce && l.parallel.overlap_param_gather);  // both flags given
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

void TestMegatronImport::shell_script() {
    ScriptOptions o;
    const ScriptRun r = run_shell_script(
        "#!/bin/bash\n"
        "#SBATCH --nodes=4 --ntasks-per-node=8\n"
        "TP=${TP:-2}   # default taken as written\n"
        "NODES=$SLURM_NNODES\n"
        "ARGS=(\n  --tensor-model-parallel-size $TP  # a comment inside the array\n  \"--fp8-format hybrid\"\n)\n"
        "ARGS+=(--seq-length $(( 1024 * TP )))\n"
        "CKPT=<Specify path>/ckpt\n"
        "if [ \"$TP\" -gt 1 ]; then EXTRA=\"--sequence-parallel\"; elif true; then EXTRA=no; fi\n"
        "[[ $TP == 2 && -n \"$EXTRA\" ]] && EXTRA=\"$EXTRA --bf16\"\n"
        "cmd=\"torchrun --nnodes $NODES pretrain_gpt.py ${ARGS[@]} $EXTRA\"\n"
        "eval $cmd |& tee log.txt\n"
        "sh -c \"echo \\$HOME; python -u x.py --lr 1\"\n"
        "GPUS=`nvidia-smi -L | wc -l`\n"
        "python t.py $1 $GPUS\n",
        "job.sh", o, {});
    QCOMPARE(r.exit_line, 0);
    QVERIFY(r.decisions.empty());
    QCOMPARE(r.sbatch.at("--nodes"), std::string("4"));
    QCOMPARE(r.commands.size(), std::size_t(4));
    std::vector<std::string> words;
    for (const auto& w : r.commands[0].words) words.push_back(w.text);
    const std::vector<std::string> expected = {
        "torchrun", "--nnodes", "4", "pretrain_gpt.py", "--tensor-model-parallel-size", "2", "--fp8-format",
        "hybrid", "--seq-length", "2048", "--sequence-parallel", "--bf16"};
    QCOMPARE(words, expected);
    QCOMPARE(r.commands[0].line, 14);  // the eval
    // A <placeholder> after '=' is text, not a redirection.
    QCOMPARE(QString::fromStdString(r.variables.at("CKPT").at(0).text + " " + r.variables.at("CKPT").at(1).text),
             QString("<Specify path>/ckpt"));
    QCOMPARE(QString::fromStdString(r.commands[1].words[0].text), QString("tee"));
    QCOMPARE(QString::fromStdString(r.commands[2].words[0].text), QString("python"));  // from sh -c
    // $1 and the command substitution stay unknown, each named with its variable and line.
    const auto& last = r.commands[3].words;
    QVERIFY(last[2].unresolved.find("--set 1=VALUE") != std::string::npos);
    QVERIFY(last[3].unresolved.find("GPUS (line 16)") != std::string::npos);
    QVERIFY(last[3].unresolved.find("--set GPUS=VALUE") != std::string::npos);
    // --set replaces the script's own value and its default.
    o.set["TP"] = "4";
    const ScriptRun s = run_shell_script("TP=2\nTP=${TP:-8}\necho\nrun.py --tp $TP\n", "f", o, {});
    QCOMPARE(QString::fromStdString(s.commands[0].words[2].text), QString("4"));
    // String operators of braced expansions.
    const ScriptRun ops = run_shell_script(
        "P=/data/llama3_8b.tar.gz\nN=LLaMA\necho\nrun.py ${P##*/} ${P%%.*} ${P#/} ${N,,} ${N^^} ${P:6:5} ${P/data/d} ${P//a/A}\n",
        "f", {}, {});
    std::vector<std::string> got;
    for (const auto& w : ops.commands[0].words) got.push_back(w.text);
    const std::vector<std::string> want = {"run.py", "llama3_8b.tar.gz", "/data/llama3_8b", "data/llama3_8b.tar.gz",
                                           "llama", "LLAMA", "llama", "/d/llama3_8b.tar.gz", "/dAtA/llAmA3_8b.tAr.gz"};
    QCOMPARE(got, want);
    // One element of an array.
    const ScriptRun idx = run_shell_script("A=(--tp 1)\nA[1]=4\nA[2]=--pp\nA[3]=2\nrun.py ${A[@]} ${#A[@]}\n", "f", {}, {});
    got.clear();
    for (const auto& w : idx.commands[0].words) got.push_back(w.text);
    QCOMPARE(got, (std::vector<std::string>{"run.py", "--tp", "4", "--pp", "2", "4"}));
    const ScriptRun re = run_shell_script("M=llama3-70b\nif [[ $M =~ ^llama3-([0-9]+)b$ ]]; then TP=8; else TP=1; fi\nrun.py $TP\n",
                                          "f", {}, {});
    QVERIFY(re.decisions.empty());
    QCOMPARE(QString::fromStdString(re.commands[0].words[1].text), QString("8"));
    QVERIFY_THROWS_EXCEPTION(InputError, run_shell_script("if true; then echo\n", "f", {}, {}));
    QVERIFY_THROWS_EXCEPTION(InputError, run_shell_script("echo 'open", "f", {}, {}));
    QVERIFY_THROWS_EXCEPTION(InputError, run_shell_script("A=(1 2\n", "f", {}, {}));
}

void TestMegatronImport::script_paths() {
    // An if on the environment is a decision; each branch is one path.
    int paths = 0;
    explore_shell_script("if [ -n \"$X\" ]; then A=1; else A=2; fi\nif [ -f y ]; then exit 1; fi\nrun.py\n", "f",
                         {}, 16, [&](const ScriptRun& run) {
                             ++paths;
                             QCOMPARE(run.decisions.size(), run.decisions.front().taken ? std::size_t(2) : std::size_t(2));
                             QVERIFY(run.decisions.front().reason.find("X is not set") != std::string::npos);
                         });
    QCOMPARE(paths, 4);
    const std::string base = "torchrun --nproc-per-node 4 pretrain_gpt.py --num-layers 4 "
                             "--hidden-size 64 --num-attention-heads 4 --seq-length 32 "
                             "--micro-batch-size 1 --vocab-size 256 ";
    // A branch that does not change the layout is a note; one that does is an error naming it.
    const ImportResult same = import_megatron(
        "if [ -n \"$WANDB\" ]; then LOG=--log-throughput; fi\n" + base + "$LOG", "s.sh", cluster("dgx-h100"));
    bool noted = false;
    for (const auto& n : same.notes) noted = noted || n.find("line 1") != std::string::npos;
    QVERIFY(noted);
    EXPECT_ISSUE("if [ -n \"$BIG\" ]; then TP=2; else TP=1; fi\n" + base + "--tensor-model-parallel-size $TP",
                 "line 1", "BIG is not set");
    // The error exit of a check is not followed.
    const ImportResult checked = import_megatron("if [ ! -f pretrain_gpt.py ]; then echo missing; exit 1; fi\n" + base,
                                                 "c.sh", cluster("dgx-h100"));
    QCOMPARE(checked.layout.gpus, 4);
    // A variable holds the arguments when nothing is launched (a sourced config).
    ImportOptions o = cluster("dgx-h100");
    o.gpus = 8;
    const ImportResult config = import_megatron(
        "export PARAMS=\"--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 32 "
        "--micro-batch-size 1 --vocab-size 256 --tensor-model-parallel-size ${TP}\"\n",
        "config.sh", [&] { auto p = o; p.set["TP"] = "2"; return p; }());
    QCOMPARE(config.layout.parallel.mesh.tp, 2);
    QCOMPARE(config.layout.parallel.mesh.dp, 4);
    EXPECT_ISSUE(base + "\n" + base, "line 2", "a second training command");
}

void TestMegatronImport::launchers() {
    const std::string args = "pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                             "--seq-length 32 --micro-batch-size 1 --vocab-size 256 --tensor-model-parallel-size 2";
    // srun runs the script once per task: the world is its tasks (here from #SBATCH).
    const ImportResult s = import_megatron("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\n"
                                           "srun --mpi=pmix python " + args,
                                           "s.sh", cluster("dgx-h100"));
    QCOMPARE(s.layout.gpus, 8);
    // srun starting torchrun: torchrun's count, with SLURM's variables from #SBATCH.
    const ImportResult t = import_megatron("#SBATCH --nodes=3\nsrun torchrun --nnodes $SLURM_NNODES "
                                           "--nproc-per-node 8 " + args,
                                           "t.sh", cluster("dgx-h100"));
    QCOMPARE(t.layout.gpus, 24);
    // deepspeed's launcher; without --num_gpus every GPU of a node.
    const ImportResult d = import_megatron("deepspeed --num_nodes 2 " + args + " --deepspeed --zero-stage 2",
                                           "d.sh", cluster("dgx-h100"));
    QCOMPARE(d.layout.gpus, 16);
    QCOMPARE(d.layout.training.zero_stage, 2);
    // Wrappers before the launcher are listed; python -m torch.distributed.run is torchrun.
    const ImportResult u = import_megatron("uv run nsys profile -o out python -m torch.distributed.run "
                                           "--nproc_per_node 2 " + args,
                                           "u.sh", cluster("dgx-h100"));
    QCOMPARE(u.layout.gpus, 2);
    QVERIFY(ignored(u, "uv run nsys profile -o out") != nullptr);
    // srun ... sh -c "$cmd": the string runs under srun; mpirun -np N is N processes.
    const ImportResult shc = import_megatron("#SBATCH --nodes=2\ncmd=\"torchrun --nnodes $SLURM_NNODES --nproc-per-node 4 " +
                                                 args + "\"\nsrun --ntasks-per-node=1 sh -c \"$cmd\"\n",
                                             "shc.sh", cluster("dgx-h100"));
    QCOMPARE(shc.layout.gpus, 8);
    const ImportResult mpi = import_megatron("mpirun -np 6 --bind-to none python " + args, "mpi.sh", cluster("dgx-h100"));
    QCOMPARE(mpi.layout.gpus, 6);
    // Megatron-DeepSpeed and earlier Megatron-LM spellings.
    ImportOptions o = cluster("dgx-h100");
    o.gpus = 8;
    const ImportResult mds = import_megatron(
        "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 32 --micro-batch-size 1 "
        "--vocab-size 256 --num-key-value-heads 2 --normalization rmsnorm --swiglu --ffn-hidden-size 128 "
        "--disable-bias-linear --position-embedding-type rope --untie-embeddings-and-output-weights "
        "--checkpoint-activations --fp8-hybrid --decoupled-lr 1e-4 --rope-type rope",
        "m.sh", o);
    QCOMPARE(mds.layout.model.num_kv_heads, 2);
    QVERIFY(mds.layout.model.norm == NormKind::RmsNorm);
    QVERIFY(mds.layout.training.recompute == Recompute::Full);
    QVERIFY(mds.layout.training.dtype == DType::Fp8);
    QVERIFY(ignored(mds, "--decoupled-lr 1e-4") != nullptr);
    // Any flag of Megatron-LM's current argparse is known (the generated table); one that
    // changes the layout in a way a layout does not hold is refused, named.
    const ImportResult up = import_megatron(
        "torchrun --nproc-per-node 2 " + args + " --eval-micro-batch-size 2 --no-check-for-nan-in-loss-and-grad",
        "up.sh", cluster("dgx-h100"));
    QVERIFY(ignored(up, "--eval-micro-batch-size 2") != nullptr);
    EXPECT_ISSUE("torchrun --nproc-per-node 2 " + args + " --heterogeneous-layers-config-path h.json",
                 "argv[18] --heterogeneous-layers-config-path", "does not read");
}

void TestMegatronImport::pipeline_layout() {
    PipelineLayout p;
    std::string error;
    QVERIFY(parse_pipeline_layout("Et*3|(tt|)*2,ttL", 2, p, error));
    QCOMPARE(p.layers_per_chunk, (std::vector<int>{3, 2, 2, 2}));
    QCOMPARE(p.vpp, 2);
    QVERIFY(parse_pipeline_layout(format_pipeline_layout({19, 21, 21, 19}, 0), 4, p, error));
    QCOMPARE(p.layers_per_chunk, (std::vector<int>{19, 21, 21, 19}));
    QCOMPARE(p.mtp_layers, 0);
    // MTP layers go last, after the transformer layers of the last chunk (validate_layer_layout).
    QCOMPARE(format_pipeline_layout({3, 2}, 1), std::string("Et*3|t*2mL"));
    QCOMPARE(format_pipeline_layout({3, 2}, 2), std::string("Et*3|t*2m*2L"));
    QVERIFY(parse_pipeline_layout(format_pipeline_layout({3, 2}, 2), 2, p, error));
    QCOMPARE(p.layers_per_chunk, (std::vector<int>{3, 2}));
    QCOMPARE(p.mtp_layers, 2);
    // End chunks may hold only the embedding or only the loss; a middle chunk needs a layer.
    QVERIFY2(parse_pipeline_layout("Ett|tt|L", 3, p, error), error.c_str());
    QCOMPARE(p.layers_per_chunk, (std::vector<int>{2, 2, 0}));
    QVERIFY2(parse_pipeline_layout("E|t*4|t*3L", 3, p, error), error.c_str());
    QCOMPARE(p.layers_per_chunk, (std::vector<int>{0, 4, 3}));
    QCOMPARE(format_pipeline_layout({0, 4, 3, 0}, 0), std::string("E|t*4|t*3|L"));
    QCOMPARE(format_pipeline_layout({1, 2}, 0), std::string("Et|t*2L"));
    QVERIFY(!parse_pipeline_layout("Ett||ttL", 3, p, error));
    QVERIFY(error.find("no transformer layer") != std::string::npos);
    QVERIFY(!parse_pipeline_layout("tt|ttL", 2, p, error));
    QVERIFY(!parse_pipeline_layout("Ett|tx|tL", 3, p, error));
    QVERIFY(!parse_pipeline_layout("Ett|ttL", 3, p, error));
    // Megatron-LM asserts the layout's m count equals --mtp-num-layers.
    EXPECT_ISSUE("torchrun --nproc-per-node 2 pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                 "--seq-length 32 --micro-batch-size 1 --vocab-size 256 --pipeline-model-parallel-size 2 "
                 "--pipeline-model-parallel-layout 'Et*2|t*2mL'",
                 "argv[18] --pipeline-model-parallel-layout", "MTP layers");
    const ImportResult r = import_megatron(
        "torchrun --nproc-per-node 4 pretrain_gpt.py --num-layers 10 --hidden-size 64 --num-attention-heads 4 "
        "--seq-length 32 --micro-batch-size 1 --vocab-size 256 --pipeline-model-parallel-size 2 "
        "--pipeline-model-parallel-layout 'Et|t*4|t*3|t*2L'",
        "p.sh", cluster("dgx-h100"));
    QCOMPARE(r.layout.parallel.vpp, 2);
    QCOMPARE(r.layout.placement.layers_per_stage, (std::vector<int>{1, 4, 3, 2}));
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
    // A flag no release or fork defines is ignored with a warning (tst_import_rules.cpp),
    // unless its name says it may describe the layout.
    EXPECT_ISSUE(base + "--bogus-parallel-flag 3", "argv[16] --bogus-parallel-flag", "unknown Megatron-LM argument");
    EXPECT_ISSUE(base + "--tensor-model-parallel-size ${TP}", "argv[16] --tensor-model-parallel-size",
                 "${TP}");
    EXPECT_ISSUE(base + "--tensor-model-parallel-size=$TP", "argv[16] --tensor-model-parallel-size", "$TP");
    EXPECT_ISSUE(base + "--bf16 --fp16", "argv[17] --fp16", "conflicts with argv[16] --bf16");
    EXPECT_ISSUE(base + "--hidden-size", "argv[16] --hidden-size", "the value is missing");
    EXPECT_ISSUE(base + "--micro-batch-size 1 --global-batch-size two", "argv[18] --global-batch-size",
                 "not an integer");
    EXPECT_ISSUE(base + "--bf16 yes", "argv[17]", "a value without a flag");
    EXPECT_ISSUE(base + "--bf16=1", "argv[16] --bf16", "takes no value");
    EXPECT_ISSUE(base + "--num-query-groups 2", "argv[16] --num-query-groups", "--group-query-attention");
    EXPECT_ISSUE(base + "--recompute-granularity full", "--recompute-method", "uniform or block");
    EXPECT_ISSUE(base + "--tensor-model-parallel-size 3", "argv[16] --tensor-model-parallel-size",
                 "not divisible");
    // Megatron-LM asserts sequence parallelism for --tp-comm-overlap (arguments.py:1441-1442).
    EXPECT_ISSUE(base + "--tp-comm-overlap", "argv[16] --tp-comm-overlap", "--sequence-parallel");
    QVERIFY(issues_of(base + "--tensor-model-parallel-size 2 --sequence-parallel --tp-comm-overlap").empty());
    // --overlap-param-gather asserts --overlap-grad-reduce and a sharded optimizer
    // (arguments.py:1024-1029).
    EXPECT_ISSUE(base + "--use-distributed-optimizer --overlap-param-gather", "argv[17] --overlap-param-gather",
                 "--overlap-grad-reduce");
    EXPECT_ISSUE(base + "--overlap-grad-reduce --overlap-param-gather", "argv[17] --overlap-param-gather",
                 "--use-distributed-optimizer");
    QVERIFY(issues_of(base + "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather").empty());
    QVERIFY(issues_of(base + "|& tee log.txt\necho done").empty());  // a pipe into tee, a second command
    EXPECT_ISSUE("torchrun --nnodes 1:4 pretrain_gpt.py --num-layers 2", "argv[1] --nnodes", "elastic");
    EXPECT_ISSUE("torchrun --nproc-per-node $GPUS pretrain_gpt.py", "argv[1] --nproc-per-node", "$GPUS");
    EXPECT_ISSUE("torchrun --fancy pretrain_gpt.py", "argv[1] --fancy", "unknown torchrun option");
    EXPECT_ISSUE("mpirun -np 4 ./train.sh", "script", "no training command");
    EXPECT_ISSUE("torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64", "--num-attention-heads",
                 "required");
    // Several problems are reported together, each with its position.
    const auto many = issues_of(base + "--foo-layers --bar-stage 1");
    QVERIFY(has_issue(many, "argv[16] --foo-layers", "unknown"));
    QVERIFY(has_issue(many, "argv[17] --bar-stage", "unknown"));
}

void TestMegatronImport::pipeline_split_flags() {
    // Megatron-LM's split flags import to the chunks get_num_layers_to_build gives
    // (transformer_block.py:96-203 at d98e8a64), and export back to the same flags.
    const std::string base = "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 14 "
                             "--hidden-size 64 --num-attention-heads 4 --seq-length 32 "
                             "--micro-batch-size 1 --global-batch-size 16 --vocab-size 256 "
                             "--pipeline-model-parallel-size 4 ";
    auto layers_of = [&](const std::string& extra) {
        return import_megatron(base + extra, "p.sh", cluster("dgx-h100")).layout;
    };
    auto args_of = [](const Layout& l) {
        std::map<std::string, std::string> m;
        for (const auto& [flag, value] : megatron_command(l).args) m[flag] = value;
        return m;
    };
    // 14 + 2 = 16 over pp 4: 4 per rank, 2 per chunk with vpp 2; chunk 0 and chunk 7 build 1.
    const Layout acc = layers_of("--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split "
                                 "--num-layers-per-virtual-pipeline-stage 2");
    QCOMPARE(acc.parallel.vpp, 2);
    // (Meshwork's balanced split of 14 over 8 is the same: the layout keeps it implicit.)
    QCOMPARE(acc.stage_layers(), (std::vector<int>{1, 2, 2, 2, 2, 2, 2, 1}));
    auto a = args_of(acc);
    QVERIFY(a.count("--account-for-embedding-in-pipeline-split") == 1);
    QVERIFY(a.count("--account-for-loss-in-pipeline-split") == 1);
    QCOMPARE(QString::fromStdString(a.at("--num-virtual-stages-per-pipeline-rank")), QString("2"));
    QVERIFY(a.count("--pipeline-model-parallel-layout") == 0);
    // Uneven ranks with virtual stages: first 2, last 4 leave 8 for 2 middle ranks (4 each),
    // every rank's layers halved over its 2 chunks.
    const Layout un = layers_of("--decoder-first-pipeline-num-layers 2 --decoder-last-pipeline-num-layers 4 "
                                "--num-virtual-stages-per-pipeline-rank 2");
    QCOMPARE(un.stage_layers(), (std::vector<int>{1, 2, 2, 2, 1, 2, 2, 2}));
    a = args_of(un);
    QCOMPARE(QString::fromStdString(a.at("--decoder-first-pipeline-num-layers")), QString("2"));
    // The last rank holds the middle count: the export states the same split without it.
    QVERIFY(a.count("--decoder-last-pipeline-num-layers") == 0);
    QCOMPARE(QString::fromStdString(a.at("--num-virtual-stages-per-pipeline-rank")), QString("2"));
    // Refusals as Megatron-LM's: both kinds at once (transformer_config.py:2229-2239), the
    // counted layers not a multiple of pp (:2382), uneven ranks with
    // --num-layers-per-virtual-pipeline-stage (arguments.py:954-956).
    EXPECT_ISSUE(base + "--account-for-embedding-in-pipeline-split --decoder-first-pipeline-num-layers 2",
                 "argv[20] --account-for-embedding-in-pipeline-split", "cannot be combined");
    EXPECT_ISSUE(base + "--account-for-embedding-in-pipeline-split", "argv[20] --account-for-embedding-in-pipeline-split",
                 "pp = 4");
    EXPECT_ISSUE(base + "--decoder-first-pipeline-num-layers 2 --num-layers-per-virtual-pipeline-stage 1",
                 "argv[20] --decoder-first-pipeline-num-layers", "--num-virtual-stages-per-pipeline-rank");
}

void TestMegatronImport::world_size_sources() {
    const std::string args = "--num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                             "--seq-length 32 --micro-batch-size 1 --vocab-size 256 "
                             "--tensor-model-parallel-size 2 --group-query-attention "
                             "--num-query-groups 2 --swiglu --normalization RMSNorm "
                             "--position-embedding-type rope --untie-embeddings-and-output-weights "
                             "--disable-bias-linear --ffn-hidden-size 128 --max-position-embeddings 128 "
                             "--hidden-dropout 0 --attention-dropout 0";  // the preset's (Megatron's default: 0.1)
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

// --grad-reduce-in-bf16 halves the gradient buffers of bf16 training; Megatron-LM ignores it
// otherwise (arguments.py:1204-1216 at d98e8a64). The export writes it back.
void TestMegatronImport::grad_reduce_in_bf16() {
    const std::string base = "torchrun --nproc-per-node 4 pretrain_gpt.py --num-layers 4 "
                             "--hidden-size 64 --num-attention-heads 4 --seq-length 32 "
                             "--micro-batch-size 1 --vocab-size 256 ";
    const auto imported = [&](const std::string& extra) {
        return import_megatron(base + extra, "cmd.sh", cluster("dgx-h100")).layout;
    };
    QVERIFY(!imported("--bf16").training.grad_reduce_in_bf16);
    QVERIFY(imported("--bf16 --grad-reduce-in-bf16").training.grad_reduce_in_bf16);
    QVERIFY(!imported("--fp16 --grad-reduce-in-bf16").training.grad_reduce_in_bf16);
    const Layout l = imported("--bf16 --grad-reduce-in-bf16");
    const std::string script = export_megatron(l).text;
    QVERIFY2(script.find("--grad-reduce-in-bf16") != std::string::npos, script.c_str());
    QVERIFY(import_megatron(script, "exported.sh", cluster("dgx-h100")).layout.training.grad_reduce_in_bf16);
    QVERIFY(export_megatron(imported("--bf16")).text.find("--grad-reduce-in-bf16") == std::string::npos);
}

// --fp8-recipe (transformer_config.py:594 at d98e8a64) and --cuda-graph-impl (:1075; the
// deprecated --enable-cuda-graph is "local", arguments.py:619-624): read into the layout's
// speed knobs and written back by the export.
void TestMegatronImport::fp8_recipe_and_cuda_graphs() {
    const std::string base = "torchrun --nproc-per-node 4 pretrain_gpt.py --num-layers 4 "
                             "--hidden-size 64 --num-attention-heads 4 --seq-length 32 "
                             "--micro-batch-size 1 --vocab-size 256 ";
    const auto imported = [&](const std::string& extra) {
        return import_megatron(base + extra, "cmd.sh", cluster("dgx-h100")).layout;
    };
    QCOMPARE(imported("--bf16 --fp8-format hybrid --fp8-recipe blockwise").training.fp8_recipe, Fp8Recipe::Blockwise);
    QCOMPARE(imported("--bf16 --fp8-format hybrid --fp8-recipe delayed").training.fp8_recipe, Fp8Recipe::Delayed);
    // Megatron-LM's default recipe (transformer_config.py:594-596 at d98e8a64).
    QCOMPARE(imported("--bf16 --fp8-format hybrid").training.fp8_recipe, Fp8Recipe::Delayed);
    QCOMPARE(imported("--bf16 --cuda-graph-impl transformer_engine").training.cuda_graphs, CudaGraphs::PerLayer);
    QCOMPARE(imported("--bf16 --enable-cuda-graph").training.cuda_graphs, CudaGraphs::PerLayer);
    // The deprecated flags replace --cuda-graph-impl none, which Megatron-LM asserts they
    // leave at its default (arguments.py:611-614); another implementation beside them is refused.
    QCOMPARE(imported("--bf16 --cuda-graph-impl none --external-cuda-graph").training.cuda_graphs, CudaGraphs::PerLayer);
    EXPECT_ISSUE(base + "--bf16 --cuda-graph-impl local --external-cuda-graph", "argv[19] --external-cuda-graph",
                 "one CUDA-graph implementation");
    QCOMPARE(imported("--bf16 --cuda-graph-impl full_iteration").training.cuda_graphs, CudaGraphs::FullIteration);
    QCOMPARE(imported("--bf16").training.cuda_graphs, CudaGraphs::None);
    // --cuda-graph-modules and its deprecated name --cuda-graph-scope, whose full_iteration is
    // the old spelling of the full-iteration implementation.
    const Layout attn_router = imported("--bf16 --cuda-graph-impl transformer_engine --cuda-graph-modules attn moe_router");
    QCOMPARE(graph_module_names(attn_router.training.cuda_graph_modules), (std::vector<std::string>{"attn", "moe_router"}));
    QCOMPARE(imported("--bf16 --cuda-graph-impl local --cuda-graph-scope full_iteration").training.cuda_graphs,
             CudaGraphs::FullIteration);
    QVERIFY(imported("--bf16 --cuda-graph-modules mlp").training.cuda_graph_modules.whole_layer());  // no graphs: no effect
    EXPECT_ISSUE(base + "--bf16 --cuda-graph-impl local --cuda-graph-modules attention", "argv[19] --cuda-graph-modules",
                 "'attention' is not a Megatron-LM CUDA-graph module");
    const std::string mlp_only = export_megatron(imported("--bf16 --cuda-graph-impl local --cuda-graph-modules mlp")).text;
    QVERIFY2(mlp_only.find("--cuda-graph-modules mlp") != std::string::npos, mlp_only.c_str());
    EXPECT_ISSUE(base + "--bf16 --cuda-graph-impl per-layer", "argv[17] --cuda-graph-impl", "expected none, local");
    Layout l = imported("--bf16 --fp8-format hybrid --fp8-recipe mxfp8 --cuda-graph-impl full_iteration");
    const std::string script = export_megatron(l).text;
    QVERIFY2(script.find("--fp8-recipe mxfp8") != std::string::npos, script.c_str());
    QVERIFY2(script.find("--cuda-graph-impl full_iteration") != std::string::npos, script.c_str());
    const Layout back = import_megatron(script, "exported.sh", cluster("dgx-h100")).layout;
    QCOMPARE(back.training.fp8_recipe, Fp8Recipe::Mxfp8);
    QCOMPARE(back.training.cuda_graphs, CudaGraphs::FullIteration);
    // Current and delayed scaling are written by name, whatever Megatron-LM's default, and
    // read back as themselves.
    for (const Fp8Recipe r : {Fp8Recipe::Tensorwise, Fp8Recipe::Delayed}) {
        Layout per_tensor = imported("--bf16 --fp8-format hybrid");
        per_tensor.training.fp8_recipe = r;
        const std::string text = export_megatron(per_tensor).text;
        QVERIFY2(text.find("--fp8-recipe " + to_string(r)) != std::string::npos, text.c_str());
        QCOMPARE(import_megatron(text, "exported.sh", cluster("dgx-h100")).layout.training.fp8_recipe, r);
    }
    // torchao's rowwise is no Megatron-LM recipe (core/enums.py:12-19): refused on import,
    // written as tensorwise and named lost on export.
    EXPECT_ISSUE(base + "--bf16 --fp8-format hybrid --fp8-recipe rowwise", "argv[19] --fp8-recipe", "expected tensorwise");
    Layout rowwise = imported("--bf16 --fp8-format hybrid");
    rowwise.training.fp8_recipe = Fp8Recipe::Rowwise;
    const ExportResult rc = export_megatron(rowwise);
    QVERIFY2(rc.text.find("--fp8-recipe tensorwise") != std::string::npos, rc.text.c_str());
    bool named = false;
    for (const auto& lost : rc.lost) named = named || lost.find("rowwise") != std::string::npos;
    QVERIFY(named);
    // fp4 training (transformer_config.py:671-692): --fp4-format e2m1 with the NVFP4 recipe,
    // both ways; refused beside fp8 (arguments.py:1100-1101), with another format or with a
    // custom quantizer; on a GPU without fp4 units validation names training.dtype.
    const Layout fp4 = import_megatron(base + "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4 --fp4-param-gather",
                                       "cmd.sh", cluster("dgx-b200")).layout;
    QCOMPARE(fp4.training.dtype, DType::Fp4);
    const std::string fp4_script = export_megatron(fp4).text;
    QVERIFY2(fp4_script.find("--fp4-format e2m1") != std::string::npos, fp4_script.c_str());
    QVERIFY2(fp4_script.find("--fp4-recipe nvfp4") != std::string::npos, fp4_script.c_str());
    QVERIFY2(fp4_script.find("--fp8-format") == std::string::npos, fp4_script.c_str());
    QCOMPARE(import_megatron(fp4_script, "exported.sh", cluster("dgx-b200")).layout.training.dtype, DType::Fp4);
    EXPECT_ISSUE(base + "--bf16 --fp4-format e2m1 --fp8-format hybrid", "argv[19] --fp8-format", "one low-precision GEMM format");
    EXPECT_ISSUE(base + "--bf16 --fp4-format e3m0", "argv[17] --fp4-format", "expected e2m1");
    EXPECT_ISSUE(base + "--bf16 --fp4-format e2m1 --fp4-recipe custom", "argv[19] --fp4-recipe", "expected nvfp4");
    // --cpu-offloading-num-layers (model_parallel_config.py:461; N > 0 turns offloading on,
    // arguments.py:1950-1951): the layout's activation offload, both ways.
    const Layout offloaded = imported("--bf16 --cpu-offloading-num-layers 2");
    QCOMPARE(offloaded.training.offload_activation_layers, 2);
    const std::string off_script = export_megatron(offloaded).text;
    QVERIFY2(off_script.find("--cpu-offloading-num-layers 2") != std::string::npos, off_script.c_str());
    QCOMPARE(import_megatron(off_script, "exported.sh", cluster("dgx-h100")).layout.training.offload_activation_layers, 2);
    QCOMPARE(imported("--bf16").training.offload_activation_layers, 0);
    EXPECT_ISSUE(base + "--bf16 --cpu-offloading-num-layers two", "argv[17] --cpu-offloading-num-layers",
                 "is not an integer");
}

// --moe-token-dispatcher-type (default allgather), --moe-flex-dispatcher-backend,
// --moe-enable-deepep (needs flex) and --overlap-moe-expert-parallel-comm
// (transformer_config.py:891, :898, :1743-1748, model_parallel_config.py:343 at d98e8a64);
// the export writes them back.
void TestMegatronImport::moe_dispatcher_and_a2a_overlap() {
    const std::string base = "torchrun --nproc-per-node 4 pretrain_gpt.py --num-layers 4 "
                             "--hidden-size 64 --num-attention-heads 4 --seq-length 32 "
                             "--micro-batch-size 1 --vocab-size 256 --bf16 --num-experts 8 "
                             "--moe-router-topk 2 --moe-ffn-hidden-size 128 "
                             "--expert-model-parallel-size 2 --swiglu --normalization RMSNorm "
                             "--disable-bias-linear --position-embedding-type rope "
                             "--untie-embeddings-and-output-weights ";
    const auto imported = [&](const std::string& extra) {
        return import_megatron(base + extra, "cmd.sh", cluster("dgx-h100"));
    };
    QVERIFY(imported("").layout.parallel.moe_dispatcher == MoeDispatcher::AllGather);
    QVERIFY(imported("--moe-token-dispatcher-type alltoall").layout.parallel.moe_dispatcher ==
            MoeDispatcher::AllToAll);
    const std::string flex_flags = "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "
                                   "--overlap-moe-expert-parallel-comm";
    QVERIFY(issues_of(base + flex_flags).empty());
    // HybridEP's per-rank token budget (transformer_config.py:1019-1025 at d98e8a64; an
    // argument of the TransformerConfig group, arguments.py:2373).
    const Layout budget = imported(flex_flags + " --moe-expert-rank-capacity-factor 1.5").layout;
    QCOMPARE(budget.training.moe_rank_capacity_factor, 1.5);
    const std::string budget_script = export_megatron(budget).text;
    QVERIFY2(budget_script.find("--moe-expert-rank-capacity-factor 1.5") != std::string::npos, budget_script.c_str());
    QCOMPARE(import_megatron(budget_script, "exported.sh", cluster("dgx-h100")).layout.training.moe_rank_capacity_factor, 1.5);
    const ImportResult flex = imported(flex_flags);
    const Layout& l = flex.layout;
    QVERIFY(l.parallel.moe_dispatcher == MoeDispatcher::Flex);
    QVERIFY(l.parallel.moe_flex_backend == MoeFlexBackend::HybridEP);
    QVERIFY(l.parallel.moe_a2a_overlap);
    QVERIFY(imported("--moe-token-dispatcher-type flex --moe-enable-deepep").layout.parallel.moe_flex_backend ==
            MoeFlexBackend::DeepEP);
    // The field is "argv[N] --flag": match the flag and the words.
    const auto has_issue = [](const std::vector<InputIssue>& issues, const std::string& flag, const std::string& words) {
        for (const auto& i : issues) {
            if (i.field.find(flag) != std::string::npos && i.message.find(words) != std::string::npos) return true;
        }
        return false;
    };
    QVERIFY(has_issue(issues_of(base + "--moe-enable-deepep"), "--moe-enable-deepep", "needs --moe-token-dispatcher-type flex"));
    QVERIFY(has_issue(issues_of(base + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend ncclep"),
                      "--moe-flex-dispatcher-backend", "ncclep"));
    QVERIFY(has_issue(issues_of(base + "--moe-token-dispatcher-type all2all"), "--moe-token-dispatcher-type",
                      "all2all"));
    const std::string script = export_megatron(l).text;
    QVERIFY2(script.find("--moe-token-dispatcher-type flex") != std::string::npos, script.c_str());
    QVERIFY2(script.find("--moe-flex-dispatcher-backend hybridep") != std::string::npos, script.c_str());
    QVERIFY2(script.find("--overlap-moe-expert-parallel-comm") != std::string::npos, script.c_str());
    const Layout back = import_megatron(script, "exported.sh", cluster("dgx-h100")).layout;
    QVERIFY(back.parallel.moe_dispatcher == MoeDispatcher::Flex);
    QVERIFY(back.parallel.moe_flex_backend == MoeFlexBackend::HybridEP);
    QVERIFY(back.parallel.moe_a2a_overlap);
    // The layout's default, alltoall, is written (Megatron's is allgather) and read back.
    const Layout a2a = imported("--moe-token-dispatcher-type alltoall").layout;
    QVERIFY(import_megatron(export_megatron(a2a).text, "e.sh", cluster("dgx-h100")).layout.parallel.moe_dispatcher ==
            MoeDispatcher::AllToAll);
}

QTEST_GUILESS_MAIN(TestMegatronImport)
#include "tst_megatron_import.moc"

