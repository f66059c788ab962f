// DeepSpeed and torchtitan configs back to layouts: what they carry, what they need from the
// caller, and strict refusal of keys that are neither known nor known to be irrelevant.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "export/importer.h"

using namespace meshwork;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(MESHWORK_TEST_FIXTURES) + "/export/" + name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string first_field(const std::string& text, const ImportOptions& o) {
    try {
        (void)import_config(text, "cfg", ImportFormat::Auto, o);
    } catch (const InputError& e) {
        return e.issues().front().field + ": " + e.issues().front().message;
    }
    return "(imported)";
}

}  // namespace

class TestConfigImport : public QObject {
    Q_OBJECT
private slots:
    void detects_formats();
    void torchtitan_llama3_70b();
    void torchtitan_refusals();
    void deepspeed_zero2();
    void deepspeed_refusals();
};

void TestConfigImport::detects_formats() {
    QVERIFY(detect_import_format("  {\"train_batch_size\": 8}") == ImportFormat::DeepSpeed);
    QVERIFY(detect_import_format("# c\n[parallelism]\ntensor_parallel_degree = 2\n") == ImportFormat::Torchtitan);
    QVERIFY(detect_import_format("torchrun x.py --moe-layer-freq [1]*4") == ImportFormat::Megatron);
}

void TestConfigImport::torchtitan_llama3_70b() {
    ImportOptions o;
    o.gpus = 64;
    o.cluster = "dgx-a100-80gb";
    const ImportResult r = import_config(fixture("torchtitan/llama3_70b.toml"), "llama3_70b.toml",
                                         ImportFormat::Auto, o);
    const Layout& l = r.layout;
    QVERIFY(r.format == ImportFormat::Torchtitan);
    QCOMPARE(QString::fromStdString(l.model_ref), QString("llama3-70b"));
    QCOMPARE(l.gpus, 64);
    QCOMPARE(l.parallel.mesh.tp, 8);
    QCOMPARE(l.parallel.mesh.dp, 8);
    QCOMPARE(l.training.zero_stage, 3);  // data_parallel_shard_degree: FSDP
    QVERIFY(l.parallel.sequence_parallel);
    QCOMPARE(l.training.micro_batch_size, 8);
    QCOMPARE(l.training.global_batch_size, 64);  // -1: local × data parallel
    QCOMPARE(l.training.seq_length, 8192);
    QVERIFY(l.training.recompute == Recompute::Full);
    QVERIFY(l.training.dtype == DType::Bf16);
    bool optimizer_listed = false, steps_listed = false;
    for (const auto& i : r.ignored) {
        optimizer_listed = optimizer_listed || i.where == "[optimizer]";
        steps_listed = steps_listed || i.where == "training.steps";
    }
    QVERIFY(optimizer_listed);
    QVERIFY(steps_listed);
    // -1 without a world size cannot be resolved
    QVERIFY(first_field(fixture("torchtitan/llama3_70b.toml"), {}).find("parallelism.data_parallel_shard_degree") == 0);
}

void TestConfigImport::torchtitan_refusals() {
    ImportOptions o;
    o.gpus = 8;
    const std::string head = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
    QVERIFY(first_field(head + "[parallelism]\ntensor_parallel_degre = 2\n", o)
                .find("parallelism.tensor_parallel_degre") == 0);
    QVERIFY(first_field(head + "[parallelisms]\n", o).find("[parallelisms]") == 0);
    QVERIFY(first_field(head + "[parallelism]\ntensor_parallel_degree = \"2\"\n", o)
                .find("parallelism.tensor_parallel_degree (line 5)") == 0);
    QVERIFY(first_field(head + "[parallelism]\npipeline_parallel_degree = 2\n"
                               "pipeline_parallel_schedule = \"ZBVZeroBubble\"\n", o)
                .find("parallelism.pipeline_parallel_schedule") == 0);
    QVERIFY(first_field("[model]\nname = \"qwen3\"\nflavor = \"0.6B\"\n[parallelism]\n", o)
                .find("model.flavor") == 0);
    QVERIFY(first_field(head + "[parallelism\n", o).find("line 4") == 0);
}

void TestConfigImport::deepspeed_zero2() {
    ImportOptions o;
    o.model = "llama3-8b";
    o.seq = 4096;
    const ImportResult r = import_config(fixture("deepspeed/zero2-bf16.json"), "zero2-bf16.json",
                                         ImportFormat::Auto, o);
    const Layout& l = r.layout;
    QVERIFY(r.format == ImportFormat::DeepSpeed);
    QCOMPARE(l.gpus, 8);  // 256 / (4 × 8)
    QCOMPARE(l.parallel.mesh.dp, 8);
    QCOMPARE(l.training.zero_stage, 2);
    QCOMPARE(l.training.micro_batch_size, 4);
    QCOMPARE(l.training.global_batch_size, 256);
    QCOMPARE(l.training.seq_length, 4096);
    QVERIFY(l.training.dtype == DType::Bf16);
    bool lr = false, overlap = false;
    for (const auto& i : r.ignored) {
        lr = lr || i.where == "optimizer";
        overlap = overlap || i.where == "zero_optimization.overlap_comm";
    }
    QVERIFY(lr);
    QVERIFY(overlap);
}

void TestConfigImport::deepspeed_refusals() {
    ImportOptions o;
    QVERIFY(first_field("{\"train_batch_size\": 8}", o).find("--model") == 0);
    o.model = "tiny";
    QVERIFY(first_field("{\"train_batch_size\": \"auto\", \"train_micro_batch_size_per_gpu\": 1}", o)
                .find("train_batch_size") == 0);
    QVERIFY(first_field("{\"train_batch_size\": 8}", o).find("gradient_accumulation_steps") == 0);
    QVERIFY(first_field("{\"train_batch_size\": 10, \"train_micro_batch_size_per_gpu\": 4, "
                        "\"gradient_accumulation_steps\": 1}", o)
                .find("train_batch_size") == 0);
    QVERIFY(first_field("{\"zero_optimization\": {\"stage\": 4}, \"train_batch_size\": 4, "
                        "\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 1}", o)
                .find("zero_optimization.stage") == 0);
    QVERIFY(first_field("{\"bf16\": {\"enabled\": true}, \"fp16\": {\"enabled\": true}, "
                        "\"train_batch_size\": 4, \"train_micro_batch_size_per_gpu\": 1, "
                        "\"gradient_accumulation_steps\": 1}", o)
                .find("fp16.enabled") == 0);
}

QTEST_GUILESS_MAIN(TestConfigImport)
#include "tst_config_import.moc"
