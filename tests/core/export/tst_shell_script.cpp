// The bash interpreter of import-args (core/export/shell_script.cpp) on hostile and careless
// scripts (issue 31's table: each ends with an InputError naming the line, or runs as bash
// runs it, and the ordinary torchrun line after it is read), on bash's semantics for
// arithmetic, `local`, subshells and pipelines (issue 36), and on the constructs real scripts
// use that it must follow (issue 33: `for ((;;))`, unknown directories of the training script;
// issue 34: a here-document job holding `bash -c "$CMD"`).
#include <QTest>

#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/common/printable.h"
#include "core/export/megatron_import.h"
#include "core/export/shell_arith.h"
#include "core/export/shell_match.h"
#include "core/export/shell_script.h"

using namespace meshwork;

namespace {

const std::string kTorchrun =
    "torchrun --nproc-per-node 4 pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
    "--seq-length 32 --micro-batch-size 1 --vocab-size 256 --tensor-model-parallel-size 2\n";

std::vector<std::string> words_of(const ScriptCommand& c) {
    std::vector<std::string> out;
    for (const auto& w : c.words) out.push_back(w.text);
    return out;
}

// The last command named `name`, or an empty list.
std::vector<std::string> last(const ScriptRun& r, const std::string& name) {
    for (auto it = r.commands.rbegin(); it != r.commands.rend(); ++it) {
        if (!it->words.empty() && it->words[0].text == name) return words_of(*it);
    }
    return {};
}

std::string var(const ScriptRun& r, const std::string& name) {
    const auto it = r.variables.find(name);
    if (it == r.variables.end()) return "<unset>";
    std::string s;
    for (const auto& w : it->second) s += (s.empty() ? "" : " ") + w.text;
    return s;
}

ScriptRun run(const std::string& text) { return run_shell_script(text, "job.sh", {}, {}); }

// The InputError's text, or "" when the script runs.
std::string error_of(const std::string& text) {
    try {
        (void)run(text);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

std::string repeat(const std::string& s, int n) {
    std::string out;
    for (int k = 0; k < n; ++k) out += s;
    return out;
}

}  // namespace

class TestShellScript : public QObject {
    Q_OBJECT
private slots:
    void hostile_table();
    void forged_unknowns();
    void arithmetic_semantics();
    void arithmetic_commands();
    void local_and_subshells();
    void nul_bytes();
    void patterns_linear();
    void control_characters();
    void arithmetic_for();
    void for_over_unknown_words();
    void unknown_directory_of_the_training_script();
    void file_tests_both_ways();
    void heredoc_job();
    void limits();
    void parsed_once_and_charged();
};

void TestShellScript::hostile_table() {
    // LLONG_MIN / -1 is LLONG_MIN in bash (expr.c), not SIGFPE; the torchrun line is read.
    const ScriptRun a = run("X=$(( (-9223372036854775807-1) / -1 ))\nY=$(( (-9223372036854775807-1) % -1 ))\n" + kTorchrun);
    QCOMPARE(var(a, "X"), std::string("-9223372036854775808"));
    QCOMPARE(var(a, "Y"), std::string("0"));
    QCOMPARE(last(a, "torchrun").back(), std::string("2"));
    QCOMPARE(import_megatron("X=$(( (-9223372036854775807-1) / -1 ))\n" + kTorchrun, "job.sh", {}).layout.parallel.mesh.tp, 2);

    // 10,000 parentheses: refused by depth, naming the line, no stack overflow.
    const std::string parens = "echo\n$(( " + repeat("(", 10000) + "1" + repeat(")", 10000) + " ))\n" + kTorchrun;
    QVERIFY(error_of(parens).find("line 2") != std::string::npos);
    QVERIFY(error_of(parens).find("nested more than") != std::string::npos);

    // 5,000 nested subshells, with and without blanks between the parentheses.
    const std::string spaced = repeat("( ", 5000) + "echo" + repeat(" )", 5000) + "\n" + kTorchrun;
    QVERIFY(error_of(spaced).find("nested more than 200 deep") != std::string::npos);
    const std::string tight = repeat("(", 5000) + "echo" + repeat(")", 5000) + "\n" + kTorchrun;
    const std::string tight_error = error_of(tight);
    QVERIFY2(tight_error.empty() || tight_error.find("line 1") != std::string::npos, tight_error.c_str());

    // Nested loops over long lists: the work budget ends it, naming the line.
    std::string list;
    for (int k = 0; k < 2000; ++k) list += " w" + std::to_string(k);
    const std::string loops = "L=\"" + list + "\"\nfor a in $L; do\n for b in $L; do\n  for c in $L; do X=$a$b$c; done\n done\ndone\n" + kTorchrun;
    const std::string loops_error = error_of(loops);
    QVERIFY2(loops_error.find("million steps of work") != std::string::npos, loops_error.c_str());
    QVERIFY2(loops_error.find("job.sh: line ") != std::string::npos, loops_error.c_str());

    // ${S//pattern/repl} on a long string: linear per position, bounded by the budget.
    const std::string long_s = "S=" + repeat("ab", 200000) + "\nT=${S//a/x}\nU=${S//*c/y}\n" + kTorchrun;
    const std::string replace_error = error_of(long_s);
    QVERIFY2(replace_error.find("line 3") != std::string::npos, replace_error.c_str());
    const ScriptRun replaced = run("S=" + repeat("ab", 200000) + "\nT=${S//a/x}\n" + kTorchrun);
    QCOMPARE(var(replaced, "T").substr(0, 6), std::string("xbxbxb"));

    // Catastrophic backtracking: a set of NFA states instead.
    const ScriptRun re = run("S=" + repeat("a", 100000) + "\nif [[ $S =~ ^(a|a)*b$ ]]; then TP=8; else TP=1; fi\n"
                             "if [[ $S =~ ^(a|a)*$ ]]; then PP=2; fi\n" + kTorchrun);
    QCOMPARE(var(re, "TP"), std::string("1"));
    QCOMPARE(var(re, "PP"), std::string("2"));

    // Text that looks like the old in-band marker is text.
    for (const std::string s : {"X='${__meshwork_unknown_99999999999999999999999}'\n", "X='${__meshwork_unknown_0'\n",
                                "mytool '${__meshwork_unknown_0'\n", "X='${__meshwork_unknown_0}'\necho $X\n"}) {
        const ScriptRun r = run(s + kTorchrun);
        QCOMPARE(last(r, "torchrun").back(), std::string("2"));
        for (const auto& c : r.commands) {
            for (const auto& w : c.words) QVERIFY(w.unresolved.empty());
        }
    }
}

void TestShellScript::forged_unknowns() {
    // A real unknown keeps its reason through eval, arrays and sh -c; a look-alike stays text.
    const ScriptRun r = run("G=$(nproc)\nA=(--tp $G)\nC=\"run.py ${A[*]} '\\${__meshwork_unknown_0}'\"\neval $C\nbash -c \"$C\"\n");
    QCOMPARE(r.commands.size(), std::size_t(2));
    for (const auto& c : r.commands) {
        QCOMPARE(c.words.size(), std::size_t(4));
        QVERIFY(c.words[2].unresolved.find("G (line 1)") != std::string::npos);
        QCOMPARE(c.words[3].text, std::string("${__meshwork_unknown_0}"));
        QVERIFY(c.words[3].unresolved.empty());
    }
}

void TestShellScript::arithmetic_semantics() {
    // As bash 5.2 prints them (checked with bash here).
    const ScriptRun r = run(
        "a=$((9223372036854775807+1))\nb=$((2**63))\nc=$((1<<64))\nd=$((1<<-1))\ne=$((-5/2))\nf=$((-5%3))\n"
        "g=$((010+0x1f+2#101+64#_))\nh=$((x=3, x+=2))\ni=$((1?2:3))\nB=2\nA=B+1\nj=$((A*2))\nk=$((0 && 1/0))\n"
        "l=$((-2**2))\nm=$((~5 ^ 3 | 8 & 12))\n");
    QCOMPARE(var(r, "a"), std::string("-9223372036854775808"));
    QCOMPARE(var(r, "b"), std::string("-9223372036854775808"));
    QCOMPARE(var(r, "c"), std::string("1"));
    QCOMPARE(var(r, "d"), std::string("-9223372036854775808"));
    QCOMPARE(var(r, "e"), std::string("-2"));
    QCOMPARE(var(r, "f"), std::string("-2"));
    QCOMPARE(var(r, "g"), std::string("107"));
    QCOMPARE(var(r, "h"), std::string("5"));
    QCOMPARE(var(r, "x"), std::string("5"));
    QCOMPARE(var(r, "i"), std::string("2"));
    QCOMPARE(var(r, "j"), std::string("6"));
    QCOMPARE(var(r, "k"), std::string("0"));
    QCOMPARE(var(r, "l"), std::string("4"));
    QCOMPARE(var(r, "m"), std::string("-7"));
    QCOMPARE(var(run("n=$((5--3))\n"), "n"), std::string("8"));
    // Division by 0 in $((...)): bash drops the rest of the line (of the script, a sourced
    // file, an eval'd string) and goes on with the next; a subshell exits.
    const ScriptRun z = run("X=$((1/0)); TP=9\nPP=3; eval 'Y=$((1%0)); PP=4'; CP=5\n( EP=$((1/0)) ); EP=2\n" + kTorchrun);
    QCOMPARE(z.exit_line, 0);
    QCOMPARE(var(z, "X"), std::string("<unset>"));
    QCOMPARE(var(z, "TP"), std::string("<unset>"));
    QCOMPARE(var(z, "PP"), std::string("3"));
    QCOMPARE(var(z, "CP"), std::string("5"));
    QCOMPARE(var(z, "EP"), std::string("2"));
    QCOMPARE(last(z, "torchrun").back(), std::string("2"));
    QVERIFY(!z.notes.empty() && z.notes.front().find("division by 0") != std::string::npos);
    // In ((...)) and let it fails the command; the script goes on.
    const ScriptRun y = run("((X=1/0)) || TP=3\nlet Y=2**-1 || PP=5\n" + kTorchrun);
    QCOMPARE(y.exit_line, 0);
    QCOMPARE(var(y, "TP"), std::string("3"));
    QCOMPARE(var(y, "PP"), std::string("5"));
    QCOMPARE(var(y, "X"), std::string("<unset>"));
    // Values too great for their base, and a variable that names itself.
    QCOMPARE(var(run("X=$((08))\n"), "X"), std::string("<unset>"));
    QVERIFY(error_of("A=A\nX=$((A))\n").find("nested more than") != std::string::npos);
}

void TestShellScript::arithmetic_commands() {
    // issue 36: ((...)) and let change variables.
    const ScriptRun r = run("TP=4; ((TP=TP/2))\nPP=1; let PP+=3 'PP *= 2'\nCP=1; ((CP++)); ((CP--)); ((++CP))\n"
                            "if ((TP == 2)); then EP=4; fi\n((0)) || DP=7\n");
    QCOMPARE(var(r, "TP"), std::string("2"));
    QCOMPARE(var(r, "PP"), std::string("8"));
    QCOMPARE(var(r, "CP"), std::string("2"));
    QCOMPARE(var(r, "EP"), std::string("4"));
    QCOMPARE(var(r, "DP"), std::string("7"));
    // An unknown in arithmetic is unknown, named after its source.
    const ScriptRun u = run("((TP = GPUS / 2))\nrun.py $TP\n");
    QVERIFY(u.commands[0].words[1].unresolved.find("GPUS") != std::string::npos);
}

void TestShellScript::local_and_subshells() {
    // issue 36's script: bash runs it as tp 2, pp 2, cp 1.
    const ScriptRun r = run("TP=4; ((TP=TP/2))\nPP=2\nf() { local PP=4; g; }\ng() { SEEN=$PP; }\nf\nCP=1\ntrue | CP=2\n"
                            "CP2=1\nCP2=2 &\n{ CP3=5; } | cat\nCP4=1\n( CP4=9; exit 3 )\nX=1; f2() { X=2; }; f2\n" + kTorchrun);
    QCOMPARE(var(r, "TP"), std::string("2"));
    QCOMPARE(var(r, "PP"), std::string("2"));
    QCOMPARE(var(r, "SEEN"), std::string("4"));  // dynamic scope: g sees f's local
    QCOMPARE(var(r, "CP"), std::string("1"));
    QCOMPARE(var(r, "CP2"), std::string("1"));
    QCOMPARE(var(r, "CP3"), std::string("<unset>"));
    QCOMPARE(var(r, "CP4"), std::string("1"));
    QCOMPARE(var(r, "X"), std::string("2"));  // not local: the function sets the global
    QCOMPARE(r.exit_line, 0);                  // exit in a subshell ends only the subshell
    QCOMPARE(last(r, "torchrun").back(), std::string("2"));
    // The commands of subshells and pipelines are still recorded (torchrun ... | tee log).
    const ScriptRun p = run("( run.py --a 1 ) | tee log\nrun.py --b 2 &\n");
    QCOMPARE(p.commands.size(), std::size_t(3));
    // return ends the function; break and continue their loop.
    const ScriptRun f = run("f() { A=1; return 0; A=2; }\nf\nfor i in 1 2 3 4; do [ $i = 2 ] && continue; [ $i = 4 ] && break; B=$B$i; done\n");
    QCOMPARE(var(f, "A"), std::string("1"));
    QCOMPARE(var(f, "B"), std::string("13"));
    // declare in a function is local too; local outside one fails as in bash.
    const ScriptRun d = run("V=1\nf() { declare V=2; }\nf\nlocal W=3\n");
    QCOMPARE(var(d, "V"), std::string("1"));
    QCOMPARE(var(d, "W"), std::string("<unset>"));
    // bash -c runs in a child: its assignments stay there.
    QCOMPARE(var(run("T=1\nbash -c 'T=2'\n"), "T"), std::string("1"));
}

void TestShellScript::nul_bytes() {
    std::string script = "torchrun pretrain_gpt.py --tensor-model-parallel-size 2";
    script += '\0';
    script += "junk\n";
    const std::string e = error_of(script);
    QVERIFY2(e.find("line 1") != std::string::npos && e.find("NUL") != std::string::npos, e.c_str());
    ScriptOptions o;
    o.set["TP"] = std::string("2\0x", 3);
    QVERIFY_THROWS_EXCEPTION(InputError, run_shell_script("run.py $TP\n", "f", o, {}));
}

void TestShellScript::patterns_linear() {
    shell::Budget budget(1'000'000'000);
    QVERIFY(shell::Glob("*.tar.gz").matches("llama.tar.gz", budget));
    QVERIFY(!shell::Glob("*.tar.gz").matches("llama.tar", budget));
    QVERIFY(shell::Glob("[!a-c]?[[:digit:]]\\*").matches("dx7*", budget));
    QCOMPARE(shell::Glob("*a").prefix("banana", true, budget), std::size_t(6));
    QCOMPARE(shell::Glob("*a").prefix("banana", false, budget), std::size_t(2));
    const std::string many_a(20000, 'a');
    QVERIFY(!shell::Glob("*a*a*a*a*a*a*a*a*b").matches(many_a, budget));  // glibc's fnmatch backtracks here
    bool valid = false;
    QVERIFY(shell::ere_search("^llama3-([0-9]+)b$", "llama3-70b", budget, valid) && valid);
    QVERIFY(!shell::ere_search("^(a|a)*b$", many_a, budget, valid) && valid);
    QVERIFY(shell::ere_search("x{2,3}y|z", "axxy", budget, valid));
    QVERIFY(!shell::ere_search("x{2,3}y", "xy", budget, valid));
    (void)shell::ere_search("a{1,32767}{1,32767}", "a", budget, valid);
    QVERIFY(!valid);  // too many states: refused, not built
    (void)shell::ere_search("(", "a", budget, valid);
    QVERIFY(!valid);
    // Quoted parts of a pattern are literal, as in bash.
    const ScriptRun r = run("S='a*b'\n[[ $S == \"a*\"b ]] && A=1\n[[ axb == \"a*\"b ]] || B=1\n[[ a.b =~ a\".\"b ]] && C=1\n"
                            "[[ axb =~ a\".\"b ]] || D=1\ncase $S in 'a*'*) E=1;; esac\n");
    for (const char* v : {"A", "B", "C", "D", "E"}) QCOMPARE(var(r, v), std::string("1"));
}

void TestShellScript::control_characters() {
    QCOMPARE(printable_text("a\x1b]0;pwned\x07z"), std::string("a\\x1b]0;pwned\\x07z"));
    QCOMPARE(printable_text("x\xc2\x9b" "2J"), std::string("x\\u009b2J"));
    const ScriptRun r = run(". \"env\x1b]0;x\x07.sh\"\n");
    QVERIFY(!r.notes.empty());
    QVERIFY(r.notes.front().find('\x1b') == std::string::npos);
}

void TestShellScript::arithmetic_for() {
    // issue 33 (slime's companion script): for (( ... )) is interpreted.
    const ScriptRun r = run("N=0\nfor (( i = 0; i < 4; i++ )); do\n  (( N += i ))\ndone\nfor ((;;)); do break; done\n"
                            "for ((k=0; k<3; k++)) do ARGS+=(--x$k); done\nrun.py ${ARGS[@]} $N\n");
    QCOMPARE(words_of(r.commands[0]), (std::vector<std::string>{"run.py", "--x0", "--x1", "--x2", "6"}));
    QVERIFY(error_of("for ((i=0; 1; i++)); do :; done\n").find("10000 iterations") != std::string::npos);
}

void TestShellScript::for_over_unknown_words() {
    // issue 33 (Megatron-LM's examples/multimodal/nvlm/run_text_generation_*.sh): a launch inside
    // `for PARTITION_ID in $( eval echo {$START..$END} )`, a list import-args cannot expand, runs
    // once with the variable unknown; it is asked for only where it reaches a layout argument.
    const std::string body = kTorchrun.substr(0, kTorchrun.size() - 1);
    const std::string script = "for P in $(seq 0 $N); do\n" + body + " --partition-id $P\ndone\n";
    const ScriptRun r = run(script);
    QCOMPARE(r.commands.size(), std::size_t(1));
    bool noted = false;
    for (const auto& n : r.notes) noted = noted || n.find("ran once with P unknown") != std::string::npos;
    QVERIFY(noted);
    QCOMPARE(import_megatron(script, "job.sh", {}).layout.parallel.mesh.tp, 2);
    // Where the variable reaches a layout argument, the import names it.
    const std::string layout = "for TP in $(cat sizes); do\n" + body + " --context-parallel-size $TP\ndone\n";
    bool asked = false;
    try {
        (void)import_megatron(layout, "job.sh", {});
    } catch (const InputError& e) {
        asked = std::string(e.what()).find("TP, the variable of the for-loop on line 1") != std::string::npos;
    }
    QVERIFY(asked);
}

void TestShellScript::unknown_directory_of_the_training_script() {
    // issue 33: DIR=`pwd` (pretrain_gpt3_175B.sh) decides nothing of the layout.
    const std::string script = "DIR=`pwd`\nLAUNCH=\"torchrun --nproc-per-node 4\"\n" + std::string("$LAUNCH $DIR/pretrain_gpt.py ") +
                               kTorchrun.substr(kTorchrun.find("--num-layers"));
    const ScriptRun r = run(script);
    QCOMPARE(r.commands.size(), std::size_t(1));
    QCOMPARE(r.commands[0].words[3].known_tail, std::string("/pretrain_gpt.py"));
    QVERIFY(!r.commands[0].words[3].unresolved.empty());
    QCOMPARE(import_megatron(script, "job.sh", {}).layout.parallel.mesh.tp, 2);
}

void TestShellScript::file_tests_both_ways() {
    // issue 33 (llm-jp): a file test on an unknown path is followed both ways; the layout is
    // the same on both, so the import goes on with a note.
    const std::string script = "CKPT=${CKPT_DIR}/ckpt\nLOAD=\"\"\nif [[ -f \"$CKPT/latest_checkpointed_iteration.txt\" ]]; then\n"
                               "  LOAD=\"--load $CKPT\"\nfi\n" + kTorchrun.substr(0, kTorchrun.size() - 1) + " $LOAD\n";
    int paths = 0;
    explore_shell_script(script, "job.sh", {}, 16, [&](const ScriptRun&) { ++paths; });
    QCOMPARE(paths, 2);
    const ImportResult imported = import_megatron(script, "job.sh", {});
    QCOMPARE(imported.layout.parallel.mesh.tp, 2);
}

void TestShellScript::heredoc_job() {
    // issue 34: an sbatch here-document holding bash -c "${CMD}" reads as the command itself.
    const std::string cmd = kTorchrun.substr(0, kTorchrun.size() - 1);
    const std::string script = "CMD=\"cd /work && " + cmd + "\"\nsbatch <<EOF\n#!/bin/bash\n#SBATCH --nodes=1\n"
                               "srun bash -c \"${CMD}\"\nEOF\necho done\n";
    const ScriptRun r = run(script);
    const auto w = last(r, "srun");
    QVERIFY(!w.empty());
    QCOMPARE(w[1], std::string("torchrun"));
    QCOMPARE(w.back(), std::string("2"));
    QCOMPARE(r.sbatch.at("--nodes"), std::string("1"));
    QCOMPARE(import_megatron(script, "job.sh", {}).layout.parallel.mesh.tp, 2);
    // A quoted delimiter: the body is not expanded before the job runs it (there, CMD is
    // the job's own variable: unset, so empty).
    const ScriptRun q = run("sbatch <<'EOF'\nX=3\nrun.py $X\nEOF\n");
    QCOMPARE(last(q, "run.py"), (std::vector<std::string>{"run.py", "3"}));
}

void TestShellScript::limits() {
    // Recursion of functions, eval and source is bounded and named.
    QVERIFY(error_of("f() { f; }\nf\n").find("function calls") != std::string::npos);
    QVERIFY(error_of("A=1\n" + repeat("A=$A$A$A$A\n", 12)).find("1 MiB") != std::string::npos);
    QVERIFY(error_of("X=" + repeat("${X:-", 300) + repeat("}", 300) + "\n").find("nested more than") != std::string::npos);
    QVERIFY(error_of("[[ " + repeat("! ", 5000) + "a ]]\n").find("nested more than") != std::string::npos);
    QVERIFY(error_of("echo " + repeat("\"$(", 3000) + "\n").find("nested more than") != std::string::npos);
    QVERIFY(error_of("A[99999999]=1\n").find("index past") != std::string::npos);
    // The budget is shared by every path explore_shell_script follows.
    // Each path alone costs about a tenth of the budget; 256 paths together exceed it.
    const std::string paths = repeat("if [ -n \"$E\" ]; then :; fi\n", 8) + "L=\"" + repeat(" w", 220) +
                              "\"\nfor a in $L; do for b in $L; do :; done; done\n";
    bool one_path = true;
    try {
        (void)run(paths);
    } catch (const InputError&) {
        one_path = false;
    }
    QVERIFY(one_path);
    bool refused = false;
    try {
        explore_shell_script(paths, "job.sh", {}, 1000, [](const ScriptRun&) {});
    } catch (const InputError& e) {
        refused = std::string(e.what()).find("million steps") != std::string::npos;
    }
    QVERIFY(refused);
}

void TestShellScript::parsed_once_and_charged() {
    // Reading text is work: a script whose text alone costs more than the budget is refused
    // before any line runs (parsing was free before, and fuzz inputs spent seconds in it).
    const std::string comments = repeat("# a launch script's long comment, read and thrown away\n", 20000) + kTorchrun;
    ScriptOptions small;
    small.work_budget = 5'000'000;  // the fuzz target's; 12 units a byte of ~1.1 MB > 5 M
    std::string refused;
    try {
        (void)run_shell_script(comments, "job.sh", small, {});
    } catch (const InputError& e) {
        refused = e.what();
    }
    QVERIFY2(refused.find("steps of work to read") != std::string::npos, refused.c_str());
    ScriptOptions large;
    large.work_budget = 50'000'000;
    QCOMPARE(last(run_shell_script(comments, "job.sh", large, {}), "torchrun").back(), std::string("2"));

    // Each path reads the same trees: a function an eval defined, and an eval's commands on the
    // eval's line, are the same on every path (the trees outlive the path that read them).
    const std::string script = "eval 'f() { " + kTorchrun.substr(0, kTorchrun.size() - 1) +
                               " \"$@\"; }'\nif [ -f /ckpt ]; then X=1; else X=2; fi\nif [ -n \"$E\" ]; then :; fi\n"
                               "for i in 1 2 3; do eval 'f --seed $X'; done\n";
    std::vector<std::vector<std::string>> seen;
    explore_shell_script(script, "job.sh", {}, 16, [&](const ScriptRun& r) {
        QCOMPARE(static_cast<int>(r.commands.size()), 3);
        for (const auto& c : r.commands) QCOMPARE(c.line, 1);  // f's body: the eval's line
        seen.push_back(last(r, "torchrun"));
    });
    QCOMPARE(static_cast<int>(seen.size()), 4);
    QCOMPARE(seen[0].back(), std::string("1"));  // [ -f ] taken first: X=1
    QCOMPARE(seen[3].back(), std::string("2"));

    // An eval in a loop reads its string once: 10,000 evals of a 1 KB string (a comment, cheap
    // to run) stay within a budget that 10,000 readings of it (12 units a byte: 120 M) exceed.
    const std::string body = "Y=1 #" + repeat("abcdefghij", 100);
    std::string items;
    for (int i = 0; i < 10000; ++i) items += " " + std::to_string(i);
    const std::string loop = "CMD='" + body + "'\nfor i in" + items + "; do eval \"$CMD\"; done\n" + kTorchrun;
    ScriptOptions budget;
    budget.work_budget = 100'000'000;
    QCOMPARE(last(run_shell_script(loop, "job.sh", budget, {}), "torchrun").back(), std::string("2"));
}

QTEST_APPLESS_MAIN(TestShellScript)
#include "tst_shell_script.moc"
