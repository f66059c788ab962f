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
    void deepspeed_auto_and_offload();
    void torchtitan_earlier_names();
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

void TestConfigImport::deepspeed_auto_and_offload() {
    ImportOptions o;
    o.model = "llama3-8b";
    o.seq = 2048;
    o.gpus = 4;
    // "auto" is filled as the HF Trainer fills it: per-device batch 8, accumulation 1,
    // train batch = world × both; bf16/fp16 "auto" stay off; the note says so.
    const ImportResult a = import_config(
        R"({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": "auto", "bf16": {"enabled": "auto"},
            "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},
            "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme"},
                                  "offload_param": {"device": "cpu", "pin_memory": true}}})",
        "hf.json", ImportFormat::Auto, o);
    QCOMPARE(a.layout.training.micro_batch_size, 8);
    QCOMPARE(a.layout.training.global_batch_size, 32);
    QVERIFY(a.layout.training.dtype == DType::Fp32);
    QVERIFY(a.layout.training.offload_optimizer == Offload::Nvme);
    QVERIFY(a.layout.training.offload_params == Offload::Cpu);
    bool noted = false;
    for (const auto& n : a.notes) noted = noted || n.find("Hugging Face Trainer") != std::string::npos;
    QVERIFY(noted);
    // DeepSpeed completes missing keys itself (train batch only: one accumulation step).
    const ImportResult d = import_config(R"({"train_batch_size": 16, "zero_optimization": {"stage": 2, "cpu_offload": true}})",
                                         "d.json", ImportFormat::Auto, o);
    QCOMPARE(d.layout.training.micro_batch_size, 4);
    QCOMPARE(d.layout.num_micro_batches(), 1);
    QVERIFY(d.layout.training.offload_optimizer == Offload::Cpu);
    // ... and its check refuses what it would refuse: 200 over 4 ranks × 16 steps.
    QVERIFY(first_field(R"({"train_batch_size": 200, "gradient_accumulation_steps": 16})", o)
                .find("DeepSpeed's check fails") != std::string::npos);
    QVERIFY(first_field(R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 2,
                            "zero_optimization": {"offload_optimizer": {"device": "disk"}}})", o)
                .find("offload_optimizer.device") != std::string::npos);
}

void TestConfigImport::torchtitan_earlier_names() {
    ImportOptions o;
    o.gpus = 16;
    const ImportResult r = import_config(
        "[job]\nprint_config = true\n[model]\nname = \"llama3\"\nflavor = \"8B\"\nnorm_type = \"rmsnorm\"\n"
        "[training]\nbatch_size = 2\nseq_len = 4096\ndata_parallel_degree = -1\ntensor_parallel_degree = 2\n"
        "warmup_steps = 10\n[experimental]\npipeline_parallel_degree = 2\n"
        "[float8]\nenable_float8_linear = true\n",
        "old.toml", ImportFormat::Auto, o);
    QCOMPARE(r.layout.parallel.mesh.tp, 2);
    QCOMPARE(r.layout.parallel.mesh.pp, 2);
    QCOMPARE(r.layout.parallel.mesh.dp, 4);
    QVERIFY(r.layout.training.dtype == DType::Fp8);
    QVERIFY(first_field("[training]\nbatch_size = 2\nlocal_batch_size = 2\n", o).find("training.batch_size") == 0);
}

QTEST_GUILESS_MAIN(TestConfigImport)
#include "tst_config_import.moc"
