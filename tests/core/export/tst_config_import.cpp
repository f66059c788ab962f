// DeepSpeed and torchtitan configs back to layouts: what they carry, what they need from the
// caller, and strict refusal of keys that are neither known nor known to be irrelevant.
#include <QtTest>

#include <algorithm>

#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/export/deepspeed_config.h"
#include "core/export/importer.h"

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
    void torchtitan_v02_fields();
    void torchtitan_module();
    void deepspeed_zero2();
    void deepspeed_refusals();
    void deepspeed_auto_and_offload();
    void deepspeed_grad_accum_dtype();
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
        optimizer_listed = optimizer_listed || i.where.rfind("optimizer.", 0) == 0;
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
    // A flavor torchtitan's registry does not have (qwen3's are read: tst_import_rules.cpp).
    QVERIFY(first_field("[model]\nname = \"qwen3\"\nflavor = \"2B\"\n[parallelism]\n", o)
                .find("model.flavor") == 0);
    QVERIFY(first_field(head + "[parallelism\n", o).find("line 4") == 0);
}

void TestConfigImport::torchtitan_v02_fields() {
    ImportOptions o;
    o.gpus = 16;
    const std::string head = "[job]\nprint_config = true\nsave_config_file = \"c.json\"\n"
                             "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
    // Every v0.2.x field is known: print_config, a dataloader sub-table, quantize tables.
    const ImportResult r = import_config(head + "[training]\ndtype = \"bfloat16\"\n[training.dataloader]\nnum_workers = 2\n"
                                                "[parallelism]\ntensor_parallel_degree = 2\n"
                                                "expert_parallel_comm_backend = \"standard\"\n"
                                                "[quantize.linear.float8]\nrecipe_name = \"rowwise\"\n",
                                         "a.toml", ImportFormat::Auto, o);
    bool print_config = false, dataloader = false;
    for (const auto& i : r.ignored) {
        print_config = print_config || i.where == "job.print_config";
        dataloader = dataloader || i.where == "training.dataloader";
    }
    QVERIFY(print_config && dataloader);
    QCOMPARE(r.layout.parallel.mesh.tp, 2);
    QCOMPARE(r.layout.parallel.mesh.dp, 8);
    // v0.2.x's converter name is fp8; v0.1's "float8" too, with a note that v0.2.x refuses it.
    QVERIFY(import_config(head + "converters = [\"quantize.linear.float8\"]\n", "b.toml", ImportFormat::Auto, o)
                .layout.training.dtype == DType::Fp8);
    const ImportResult old = import_config(head + "converters = [\"float8\"]\n", "c.toml", ImportFormat::Auto, o);
    QVERIFY(old.layout.training.dtype == DType::Fp8);
    QVERIFY(std::any_of(old.notes.begin(), old.notes.end(),
                        [](const std::string& n) { return n.find("quantize.linear.float8") != std::string::npos; }));
    // fsdp_reshard_after_forward "default" under pp is "never": ZeRO-2.
    const ImportResult pp = import_config(head + "[parallelism]\npipeline_parallel_degree = 2\n"
                                                 "pipeline_parallel_layers_per_stage = 16\n"
                                                 "pipeline_parallel_first_stage_less_layers = 0\n"
                                                 "pipeline_parallel_last_stage_less_layers = 0\n",
                                          "d.toml", ImportFormat::Auto, o);
    QCOMPARE(pp.layout.training.zero_stage, 2);
    // Degrees v0.2.x would refuse are imported with a note naming torchtitan's error.
    const ImportResult ddp = import_config(head + "[parallelism]\ndata_parallel_replicate_degree = 8\n"
                                                  "data_parallel_shard_degree = 1\ntensor_parallel_degree = 2\n",
                                           "e.toml", ImportFormat::Auto, o);
    QVERIFY(std::any_of(ddp.notes.begin(), ddp.notes.end(),
                        [](const std::string& n) { return n.find("DDP has not supported") != std::string::npos; }));
    // Before v0.2: training.data_parallel_degree and [experimental] pipeline_parallel_degree.
    const ImportResult pre = import_config("[model]\nname = \"llama3\"\nflavor = \"8B\"\nnorm_type = \"rmsnorm\"\n"
                                           "[training]\nbatch_size = 2\ndata_parallel_degree = -1\n"
                                           "tensor_parallel_degree = 2\n[experimental]\npipeline_parallel_degree = 1\n"
                                           "[float8]\nenable_float8_linear = true\n",
                                           "f.toml", ImportFormat::Auto, o);
    QCOMPARE(pre.layout.parallel.mesh.tp, 2);
    QCOMPARE(pre.layout.parallel.mesh.dp, 8);
    QCOMPARE(pre.layout.training.micro_batch_size, 2);
    QVERIFY(pre.layout.training.dtype == DType::Fp8);
    QVERIFY(pre.layout.training.fp8_recipe == Fp8Recipe::Tensorwise);  // no recipe stated
    // The float8 recipe (torchao's names): v0.2.x's quantize table, v0.1's [float8].
    const ImportResult row = import_config(head + "converters = [\"quantize.linear.float8\"]\n"
                                                  "[quantize.linear.float8]\nrecipe_name = \"rowwise\"\n",
                                           "g.toml", ImportFormat::Auto, o);
    QVERIFY(row.layout.training.fp8_recipe == Fp8Recipe::Rowwise);
    QVERIFY(first_field(head + "converters = [\"quantize.linear.float8\"]\n"
                               "[quantize.linear.float8]\nrecipe_name = \"colwise\"\n", o)
                .find("quantize.linear.float8.recipe_name") == 0);
    const ImportResult gw = import_config("[model]\nname = \"llama3\"\nflavor = \"8B\"\nnorm_type = \"rmsnorm\"\n"
                                          "[training]\nbatch_size = 2\ndata_parallel_degree = -1\n"
                                          "[float8]\nenable_float8_linear = true\nrecipe_name = \"rowwise_with_gw_hp\"\n",
                                          "h.toml", ImportFormat::Auto, o);
    QVERIFY(gw.layout.training.fp8_recipe == Fp8Recipe::Rowwise);
    QVERIFY(std::any_of(gw.notes.begin(), gw.notes.end(),
                        [](const std::string& n) { return n.find("rowwise_with_gw_hp") != std::string::npos; }));
    // A key no release had is still an error with its line.
    QVERIFY(first_field(head + "[training]\nlocal_batch = 2\n", o).find("training.local_batch") == 0);
}

void TestConfigImport::torchtitan_module() {
    // A recipe as torchtitan main's README writes one: a function returning Trainer.Config.
    const std::string module =
        "from torchtitan.config import ParallelismConfig, TrainingConfig\n"
        "from torchtitan.distributed.activation_checkpoint import FullAC\n"
        "from torchtitan.models.llama3 import model_registry\n"
        "from torchtitan.trainer import Trainer\n\n"
        "def llama3_8b_fsdp8_tp2() -> Trainer.Config:\n"
        "    model_spec = model_registry(\"8B\", attn_backend=\"flex\")\n"
        "    return Trainer.Config(\n"
        "        model_spec=model_spec,\n"
        "        training=TrainingConfig(\n"
        "            num_tokens_per_microbatch_per_dp_rank=2 * 8192,  # two sequences\n"
        "            max_context_length=8192,\n"
        "            steps=1000,\n"
        "        ),\n"
        "        parallelism=ParallelismConfig(\n"
        "            data_parallel_shard_degree=8,\n"
        "            tensor_parallel_degree=2,\n"
        "        ),\n"
        "        activation_checkpoint=FullAC.Config(),\n"
        "    )\n";
    QVERIFY(detect_import_format(module) == ImportFormat::Torchtitan);
    const ImportResult r = import_config(module, "my_runs.py", ImportFormat::Auto, {});
    const Layout& l = r.layout;
    QCOMPARE(QString::fromStdString(l.model_ref), QString("llama3-8b"));
    QCOMPARE(l.gpus, 16);
    QCOMPARE(l.parallel.mesh.tp, 2);
    QCOMPARE(l.parallel.mesh.dp, 8);
    QCOMPARE(l.training.zero_stage, 3);
    QCOMPARE(l.training.micro_batch_size, 2);
    QCOMPARE(l.training.global_batch_size, 16);
    QCOMPARE(l.training.seq_length, 8192);
    QVERIFY(l.training.recompute == Recompute::Full);
    // What would change the layout and is not a constant is named with its line.
    std::string bad = module;
    bad.replace(bad.find("tensor_parallel_degree=2"), 24, "tensor_parallel_degree=tp");
    QVERIFY(first_field(bad, {}).find("parallelism.tensor_parallel_degree (line 17)") == 0);
    std::string unknown = module;
    unknown.replace(unknown.find("tensor_parallel_degree=2"), 24, "tensor_paralel_degree=2");
    QVERIFY(first_field(unknown, {}).find("parallelism.tensor_paralel_degree (line 17)") == 0);
    QVERIFY(first_field(module + "\ndef other() -> Trainer.Config:\n    return llama3_8b_fsdp8_tp2()\n", {})
                .find("def") == 0);
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
    // AutoEP's folding refuses expert TP > 1 (auto_ep_folding.py:215).
    o.model = "tiny-moe";
    o.seq = 64;
    QVERIFY(first_field("{\"expert_parallel\": {\"enabled\": true, \"autoep_size\": 2, "
                        "\"expert_tensor_parallel_size\": 2}, \"train_batch_size\": 4, "
                        "\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 1}", o)
                .find("expert_parallel") == 0);
    ImportOptions piped = o;
    piped.pipeline_stages = 2;
    // AutoEP under a pipeline grid with model-parallel (here Ulysses) ranks (:258).
    QVERIFY(first_field("{\"expert_parallel\": {\"enabled\": true, \"autoep_size\": 2}, "
                        "\"sequence_parallel_size\": 2, \"train_batch_size\": 4, "
                        "\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 1}", piped)
                .find("expert_parallel") == 0);
    // AutoTP with PipelineModule: PipelineEngine's data-parallel check fails (pipe/engine.py:109).
    QVERIFY(first_field("{\"tensor_parallel\": {\"autotp_size\": 2}, \"train_batch_size\": 4, "
                        "\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 1}", piped)
                .find("tensor_parallel.autotp_size") == 0);
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
    // Parameter offload by today's deprecated name; a key DeepSpeedZeroConfig does not take
    // (a typo of stage3_param_persistence_threshold) is named as one DeepSpeed refuses.
    const ImportResult e = import_config(
        R"({"train_batch_size": 16, "zero_optimization": {"stage": 3, "cpu_offload_param": true,
            "stage3_param_persitence_threshold": 1e5, "stage3_max_live_parameters": 1e9}})",
        "e.json", ImportFormat::Auto, o);
    QVERIFY(e.layout.training.offload_params == Offload::Cpu);
    std::string typo, known;
    for (const auto& i : e.ignored) {
        if (i.where == "zero_optimization.stage3_param_persitence_threshold") typo = i.reason;
        if (i.where == "zero_optimization.stage3_max_live_parameters") known = i.reason;
    }
    QVERIFY2(typo.find("not a key of today's DeepSpeed") != std::string::npos, typo.c_str());
    QVERIFY2(known.find("does not change the layout") != std::string::npos, known.c_str());
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
    // A file mixing the 2024 name with v0.2's is refused, naming one of the two.
    QVERIFY(first_field("[training]\nbatch_size = 2\nlocal_batch_size = 2\n", o).find("batch_size") != std::string::npos);
}

// data_types.grad_accum_dtype unset is the model's type (runtime/engine.py:1485-1496 at
// edaa722): bf16 training keeps bf16 gradients unless the config says fp32. The export
// states it for ZeRO >= 1 and reads back the same.
void TestConfigImport::deepspeed_grad_accum_dtype() {
    ImportOptions o;
    o.model = "tiny";
    o.seq = 64;
    const std::string batch = "\"train_batch_size\": 4, \"train_micro_batch_size_per_gpu\": 1, "
                              "\"gradient_accumulation_steps\": 1, \"zero_optimization\": {\"stage\": 1}";
    const auto grads_bf16 = [&](const std::string& extra) {
        return import_config("{" + batch + extra + "}", "ds.json", ImportFormat::DeepSpeed, o)
            .layout.training.grad_reduce_in_bf16;
    };
    QVERIFY(grads_bf16(", \"bf16\": {\"enabled\": true}"));
    QVERIFY(!grads_bf16(", \"bf16\": {\"enabled\": true}, \"data_types\": {\"grad_accum_dtype\": \"fp32\"}"));
    QVERIFY(grads_bf16(", \"bf16\": {\"enabled\": true}, \"data_types\": {\"grad_accum_dtype\": \"bf16\"}"));
    QVERIFY(!grads_bf16(""));  // fp32 training
    QVERIFY(first_field("{" + batch + ", \"bf16\": {\"enabled\": true}, \"data_types\": {\"grad_accum_dtype\": \"int8\"}}", o)
                .find("data_types.grad_accum_dtype") == 0);
    for (const bool bf16_grads : {false, true}) {
        Layout l = import_config("{" + batch + ", \"bf16\": {\"enabled\": true}}", "ds.json",
                                 ImportFormat::DeepSpeed, o).layout;
        l.training.grad_reduce_in_bf16 = bf16_grads;
        const ExportResult e = export_deepspeed(l);
        QVERIFY2(e.text.find(bf16_grads ? "\"bf16\"" : "\"fp32\"") != std::string::npos, e.text.c_str());
        QCOMPARE(import_config(e.text, "exported.json", ImportFormat::DeepSpeed, o).layout.training.grad_reduce_in_bf16,
                 bf16_grads);
    }
}

QTEST_GUILESS_MAIN(TestConfigImport)
#include "tst_config_import.moc"
