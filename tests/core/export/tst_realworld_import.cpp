// Every real launch script and config of ../shared/realworld/{megatron,deepspeed,torchtitan}
// imports with its authors' axes, and every Hugging Face config.json of ../shared/realworld/hf
// loads as a model with its published parameter count. The expected numbers below were read
// from the files by hand (the comment of each row says where), not computed by Meshwork.
// Skipped, with the reason, when the corpus folder is absent.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/common/error.h"
#include "core/export/importer.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"
#include "core/model/layer_graph.h"

using namespace meshwork;
namespace fs = std::filesystem;

namespace {

const fs::path kCorpus = MESHWORK_REALWORLD_DIR;

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Axes {
    int gpus, tp, pp, dp, cp, ep, vpp, zero, mbs, gbs, seq;
    DType dtype;
    Recompute recompute;
    bool sp;
};

struct Row {
    const char* name;    // test row name
    const char* folder;  // megatron, deepspeed, torchtitan
    const char* file;
    ImportOptions options;
    bool imports;        // false: refused, with `field` and `words` in an issue
    Axes axes;
    const char* field;
    const char* words;
};

ImportOptions opts(std::initializer_list<std::pair<const char*, const char*>> set, int gpus = 0, int nodes = 0,
                   const char* model = nullptr, long long vocab = 0, const char* cluster = "dgx-h100") {
    ImportOptions o;
    for (const auto& [k, v] : set) o.set[k] = v;
    if (gpus > 0) o.gpus = gpus;
    if (nodes > 0) o.nodes = nodes;
    if (model != nullptr) o.model = model;
    if (vocab > 0) o.vocab_size = vocab;
    o.cluster = cluster;
    return o;
}
ImportOptions with_source(ImportOptions o, const char* name, const char* corpus_file) {
    o.sources[name] = (kCorpus / "megatron" / corpus_file).string();
    return o;
}
ImportOptions with_seq(ImportOptions o, int seq) {
    o.seq = seq;
    return o;
}

constexpr DType bf16 = DType::Bf16, fp16 = DType::Fp16, fp8 = DType::Fp8, fp32 = DType::Fp32;
constexpr Recompute none = Recompute::None, sel = Recompute::Selective, full = Recompute::Full,
                    selop = Recompute::SelectiveOp;

// The Pai-Megatron-Patch script takes 23 positional arguments (its lines 11-50).
ImportOptions pai_arguments() {
    return opts({{"1", "dsw"},   {"2", "70B"},       {"3", "1"},    {"4", "32"},     {"5", "1e-5"},
                 {"6", "1e-6"},  {"7", "4096"},      {"8", "4096"}, {"9", "bf16"},   {"10", "4"},
                 {"11", "2"},    {"12", "1"},        {"13", "sel"}, {"14", "true"},  {"15", "true"},
                 {"16", "true"}, {"17", "true"},     {"18", "1000"}, {"19", "/data"}, {"20", "none"},
                 {"21", "10000000000"}, {"22", "100000000"}, {"23", "/out"}, {"GPUS_PER_NODE", "8"}},
                0, 0, nullptr, 128256);
}

std::vector<Row> rows() {
    //                                                        gpus tp pp dp cp ep vpp zero mbs gbs seq
    return {
        // Megatron-LM's 345M example: torchrun 1 node × 8 (lines 7,11), tp 2, pp 2, SP, mbs 4,
        // gbs 16, seq 1024, fp16 (lines 29-47).
        {"mds-345m", "megatron", "mds__examples_pretrain_gpt_distributed_with_mp.sh", opts({}), true,
         {8, 2, 2, 2, 1, 1, 1, 0, 4, 16, 1024, fp16, none, true}, "", ""},
        {"mlm-345m", "megatron", "mlm__pretrain_gpt_distributed_with_mp.sh", opts({}), true,
         {8, 2, 2, 2, 1, 1, 1, 0, 4, 16, 1024, fp16, none, true}, "", ""},
        // sc21 CONFIG.sh holds the arguments of run_table_1.sh's rows in MEGATRON_PARAMS; alone,
        // every ${VAR} is named. With the 39B row's values (run_table_1.sh lines 58-68): tp 8,
        // pp 2, mbs 4, gbs 1536, 64 DGX A100 nodes, full recompute (uniform).
        {"sc21-config-alone", "megatron", "mlm__academic_paper_scripts_sc21_CONFIG.sh", opts({}), false, {},
         "argv[1] --tensor-model-parallel-size", "--set TP=VALUE"},
        {"sc21-config-39b", "megatron", "mlm__academic_paper_scripts_sc21_CONFIG.sh",
         opts({{"TP", "8"}, {"PP", "2"}, {"MBS", "4"}, {"GBS", "1536"}, {"NLS", "48"}, {"HS", "8192"},
               {"NAH", "64"}, {"DDP", "local"}, {"MEGATRON_EXTRA_PARAMS", "--activations-checkpoint-method uniform"}},
              0, 64, nullptr, 0, "dgx-a100-80gb"),
         true, {512, 8, 2, 32, 1, 1, 1, 0, 4, 1536, 2048, fp16, full, false}, "", ""},
        // run_table_1.sh sources CONFIG.sh through `pwd`: named until --source gives it. Its
        // default MODEL_SIZE=1.7B (line 7): tp 1, pp 1, mbs 16, gbs 512, 4 nodes (lines 14-24).
        {"sc21-table1-unsourced", "megatron", "mlm__academic_paper_scripts_sc21_run_table_1.sh", opts({}, 0, 4),
         false, {}, "script", "--source CONFIG.sh=PATH"},
        {"sc21-table1-1.7b", "megatron", "mlm__academic_paper_scripts_sc21_run_table_1.sh",
         with_source(opts({}, 0, 4, nullptr, 0, "dgx-a100-80gb"), "CONFIG.sh", "mlm__academic_paper_scripts_sc21_CONFIG.sh"),
         true, {32, 1, 1, 32, 1, 1, 1, 0, 16, 512, 2048, fp16, full, false}, "", ""},
        // MODEL_SIZE=145B (lines 80-90): tp 8, pp 8, 80 layers, 5 layers per virtual stage ->
        // vpp 2, mbs 2, gbs 2304, 192 nodes.
        {"sc21-table1-145b", "megatron", "mlm__academic_paper_scripts_sc21_run_table_1.sh",
         with_source(opts({{"MODEL_SIZE", "145B"}}, 0, 192, nullptr, 0, "dgx-a100-80gb"), "CONFIG.sh",
                     "mlm__academic_paper_scripts_sc21_CONFIG.sh"),
         true, {1536, 8, 8, 24, 1, 1, 2, 0, 2, 2304, 2048, fp16, full, false}, "", ""},
        // BERT 340M: tp 8 × pp 16 for 24 layers (lines 28, 53-54): Megatron-LM itself refuses a
        // pipeline that does not divide the layers, and so does the import.
        {"bert-340m", "megatron", "mlm__bert_train_bert_340m_distributed.sh",
         opts({{"NUM_NODES", "16"}}, 0, 0, nullptr, 30522), false, {}, "argv[10] --num-layers",
         "do not split evenly over 16"},
        // GPT-3 175B: tp 8, pp 16 (lines 56-57) need 128 GPUs; the script's NUM_NODES=1 × 8
        // GPUs (lines 7, 11) cannot hold them.
        {"gpt3-175b-as-written", "megatron", "mlm__gpt3_train_gpt3_175b_distributed.sh", opts({}), false, {},
         "argv[56] --tensor-model-parallel-size", "not divisible by tp × pp × cp = 128"},
        {"gpt3-175b", "megatron", "mlm__gpt3_train_gpt3_175b_distributed.sh", opts({{"NUM_NODES", "16"}}), true,
         {128, 8, 16, 1, 1, 1, 1, 0, 1, 1536, 2048, fp16, none, false}, "", ""},
        // AMD's DeepSeek script: GPUS_PER_NODE comes from python (line 34); MP_VP from the
        // environment (line 185). Defaults: 16B (line 68), tp/pp/ep/etp 1, mbs 1, gbs 128,
        // seq 4096, bf16, distributed optimizer (DO=true), no recompute (AC=none).
        {"deepseek-as-written", "megatron", "mlm__deepseek_v3_train_deepseekv3.sh", opts({}), false, {},
         "argv[1] --nproc_per_node", "GPUS_PER_NODE (line 34)"},
        {"deepseek-16b", "megatron", "mlm__deepseek_v3_train_deepseekv3.sh",
         opts({{"GPUS_PER_NODE", "8"}, {"MP_VP", ""}}, 0, 0, nullptr, 102400), true,
         {8, 1, 1, 8, 1, 1, 1, 1, 1, 128, 4096, bf16, none, false}, "", ""},
        // TP=2 needs EP=2 when ETP=1 (lines 122-127); SP=true with TP>1 (line 446).
        {"deepseek-16b-tp2-ep2", "megatron", "mlm__deepseek_v3_train_deepseekv3.sh",
         opts({{"GPUS_PER_NODE", "8"}, {"MP_VP", ""}, {"TP", "2"}, {"EP", "2"}}, 0, 0, nullptr, 102400), true,
         {8, 2, 1, 4, 1, 2, 1, 1, 1, 128, 4096, bf16, none, true}, "", ""},
        // AMD's Llama 3 script: MODEL_SIZE=70 (line 61), TP 8, PP 1, CP 1, MBS 1, BS 8,
        // seq 2048, SEQ_PARALLEL=1, distributed optimizer for adam, bf16; GPUS_PER_NODE from
        // python (line 44).
        {"llama3-amd-70b", "megatron", "mlm__llama_train_llama3.sh", opts({{"GPUS_PER_NODE", "8"}}, 0, 0, nullptr, 128256),
         true, {8, 8, 1, 1, 1, 1, 1, 1, 1, 8, 2048, bf16, none, true}, "", ""},
        // FSDP=1 resets TP to 1 (lines 91-97), adds --use-torch-fsdp2 and turns SP off (264-270).
        {"llama3-amd-8b-fsdp", "megatron", "mlm__llama_train_llama3.sh",
         opts({{"GPUS_PER_NODE", "8"}, {"MODEL_SIZE", "8"}, {"FSDP", "1"}}, 0, 0, nullptr, 128256), true,
         {8, 1, 1, 8, 1, 1, 1, 3, 1, 8, 2048, bf16, none, false}, "", ""},
        // Llama 3 8B FP8 on one H100 node: tp 1, cp 1, mbs 1, gbs 128, seq 8192, fp8 hybrid,
        // distributed optimizer (lines 22-41, 104-129).
        {"llama3-8b-fp8", "megatron", "mlm__llama_train_llama3_8b_h100_fp8.sh", opts({}), true,
         {8, 1, 1, 8, 1, 1, 1, 1, 1, 128, 8192, fp8, none, false}, "", ""},
        // Megatron-FSDP optim_grads_params: ZeRO-3 (lines 39-40, 112-117).
        {"llama3-8b-fsdp-fp8", "megatron", "mlm__megatron_fsdp_train_llama3_8b_fsdp_h100_fp8.sh", opts({}), true,
         {8, 1, 1, 8, 1, 1, 1, 3, 1, 128, 8192, fp8, none, false}, "", ""},
        // Pai-Megatron-Patch: every setting is a positional argument, named until given.
        {"pai-as-written", "megatron", "pai__examples_llama3_run_pretrain_llama_70b.sh", opts({}), false, {},
         "script", "--set 1=VALUE"},
        // With tp 4 ($10), pp 2 ($11), mbs 1 ($3), gbs 32 ($4), seq 4096 ($7), bf16 ($9),
        // selective recompute ($13=sel), distributed optimizer ($14), SP ($16) on one node.
        {"pai-70b", "megatron", "pai__examples_llama3_run_pretrain_llama_70b.sh", pai_arguments(), true,
         {8, 4, 2, 1, 1, 1, 1, 1, 1, 32, 4096, bf16, sel, true}, "", ""},

        // DeepSpeed: the world is DeepSpeed's data-parallel size; batch keys completed as
        // DeepSpeed's _set_batch_related_parameters does.
        // 32 = 4 × gas × 8 -> gas 1; bf16; no ZeRO.
        {"ds-mds-llama2", "deepspeed", "derived__mds_pretrain_llama2_distributed.generated_ds_config.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 2048), true, {8, 1, 1, 8, 1, 1, 1, 0, 4, 32, 2048, bf16, none, false}, "", ""},
        // All three keys: 128 = 32 × 1 × 4 data-parallel ranks; ZeRO-2, fp16.
        {"ds-gpt2xl-zero2", "deepspeed", "ds__multinode_ds_zero2_pretrain_gpt2XL_model_parallel_config.json",
         with_seq(opts({}, 0, 0, "llama3-8b"), 2048), true, {4, 1, 1, 4, 1, 1, 1, 2, 32, 128, 2048, fp16, none, false}, "", ""},
        // 256 = 4 × gas × 8 -> gas 8; fp16; no zero section.
        {"ds-3d-parallelism", "deepspeed", "dse__Megatron-LM-v1.1.5-3D_parallelism_examples_ds_config.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 2048), true, {8, 1, 1, 8, 1, 1, 1, 0, 4, 256, 2048, fp16, none, false}, "", ""},
        // 64 / 8 / gas 1 -> micro 8; ZeRO-3.
        {"ds-zero3", "deepspeed", "dse__Megatron-LM-v1.1.5-ZeRO3_examples_ds_zero_stage_3_config.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 2048), true, {8, 1, 1, 8, 1, 1, 1, 3, 8, 64, 2048, fp16, none, false}, "", ""},
        // 192 with 16 steps: 8 ranks give micro 1 and 128 != 192, which DeepSpeed refuses; 12
        // ranks give micro 1. ZeRO-2 with cpu_offload.
        {"ds-150b-offload-8", "deepspeed", "dse__Megatron-LM_model_size_test_with_acumulated_grad_ds_zero-offload_150B_config.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 2048), false, {}, "train_batch_size", "DeepSpeed's check fails"},
        {"ds-150b-offload-12", "deepspeed", "dse__Megatron-LM_model_size_test_with_acumulated_grad_ds_zero-offload_150B_config.json",
         with_seq(opts({}, 12, 0, "llama3-8b"), 2048), true, {12, 1, 1, 12, 1, 1, 1, 2, 1, 192, 2048, fp16, none, false}, "", ""},
        // micro 10, gas 1 -> 80 on 8 ranks; ZeRO-2 cpu_offload.
        {"ds-10b-offload", "deepspeed", "dse__Megatron-LM_scripts_ds_zero-offload_10B_config.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 2048), true, {8, 1, 1, 8, 1, 1, 1, 2, 10, 80, 2048, fp16, none, false}, "", ""},
        // train batch 16 only: gas 1, micro 16 / 8 = 2.
        {"ds-cifar", "deepspeed", "dse__cifar_ds_config.json", with_seq(opts({}, 8, 0, "llama3-8b"), 2048), true,
         {8, 1, 1, 8, 1, 1, 1, 0, 2, 16, 2048, fp16, none, false}, "", ""},
        // No batch key at all: DeepSpeed refuses it too ("Either train_batch_size or
        // train_micro_batch_size_per_gpu needs to be provided").
        {"ds-hf-transformers", "deepspeed", "dse__hf-transformers_ds_config.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 2048), false, {}, "train_batch_size", "train_micro_batch_size_per_gpu"},
        // micro "auto" -> the HF Trainer's per-device batch 8; gas 1; 64 on 8 ranks; ZeRO-3.
        {"ds-autotuning-z3", "deepspeed", "dse__training_autotuning_hf_dsconfigs_ds_config_fp16_z3.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 2048), true, {8, 1, 1, 8, 1, 1, 1, 3, 8, 64, 2048, fp16, none, false}, "", ""},
        // 65536 = 64 × gas × 8 -> gas 128.
        {"ds-bing-bert", "deepspeed", "dse__training_bing_bert_deepspeed_bsz64k_lamb_config_seq128.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 128), true, {8, 1, 1, 8, 1, 1, 1, 0, 64, 65536, 128, fp16, none, false}, "", ""},
        // 256 / 8 / 1 -> micro 32; ZeRO-1.
        {"ds-imagenet", "deepspeed", "dse__training_imagenet_config_ds_fp16_z1_config.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 2048), true, {8, 1, 1, 8, 1, 1, 1, 1, 32, 256, 2048, fp16, none, false}, "", ""},
        // Every batch key "auto": micro 8, gas 1, 64 on 8 ranks; fp16/bf16 "auto" off: fp32;
        // ZeRO-2 with the optimizer offloaded to the CPU.
        {"ds-hf-zero2-auto", "deepspeed", "hf__tests_deepspeed_ds_config_zero2.json",
         with_seq(opts({}, 8, 0, "llama3-8b"), 2048), true, {8, 1, 1, 8, 1, 1, 1, 2, 8, 64, 2048, fp32, none, false}, "", ""},

        // torchtitan: data_parallel_shard_degree -1 takes the remaining ranks (FSDP: ZeRO-3).
        // 2024 names: batch_size 1, seq 8192, data_parallel_degree -1 on the 64 GPUs of its
        // header, selective "op".
        {"tt-2024-llama3-8b", "torchtitan", "tt_2024-08__train_configs_llama3_8b.toml", opts({}, 64), true,
         {64, 1, 1, 64, 1, 1, 1, 3, 1, 64, 8192, bf16, selop, false}, "", ""},
        // 16B: local batch 4, seq 4096, ep 8 over 8 GPUs.
        {"tt-deepseek-16b", "torchtitan", "tt__deepseek_v3_deepseek_v3_16b.toml", opts({}, 8, 0, "deepseek-v3"), true,
         {8, 1, 1, 8, 1, 8, 1, 3, 4, 32, 4096, bf16, selop, false}, "", ""},
        {"tt-gpt-oss-debug", "torchtitan", "tt__gpt_oss_debug_model.toml", opts({}, 8, 0, "tiny-moe"), true,
         {8, 1, 1, 8, 1, 1, 1, 3, 8, 64, 2048, bf16, none, false}, "", ""},
        // selective_ac_option '2': every second layer fully recomputed.
        {"tt-llama3-debug", "torchtitan", "tt__llama3_debug_model.toml", opts({}, 8, 0, "tiny"), true,
         {8, 1, 1, 8, 1, 1, 1, 3, 8, 64, 2048, bf16, full, false}, "", ""},
        // 128 H100 (header): tp 8, local batch 2, seq 8192, float8 converter, full AC.
        {"tt-llama3-405b", "torchtitan", "tt__llama3_llama3_405b.toml", opts({}, 128), true,
         {128, 8, 1, 16, 1, 1, 1, 3, 2, 32, 8192, fp8, full, true}, "", ""},
        // 64 A100 (header): tp 8, local batch 8, full AC.
        {"tt-llama3-70b", "torchtitan", "tt__llama3_llama3_70b.toml", opts({}, 64), true,
         {64, 8, 1, 8, 1, 1, 1, 3, 8, 64, 8192, bf16, full, true}, "", ""},
        {"tt-llama3-8b", "torchtitan", "tt__llama3_llama3_8b.toml", opts({}, 64), true,
         {64, 1, 1, 64, 1, 1, 1, 3, 1, 64, 8192, bf16, selop, false}, "", ""},
        // A Qwen3 of another size stands in for 0.6B: the axes do not depend on it.
        {"tt-qwen3-0.6b", "torchtitan", "tt__qwen3_qwen3_0.6b.toml",
         opts({}, 8, 0, nullptr), true, {8, 1, 1, 8, 1, 1, 1, 3, 4, 32, 4096, bf16, selop, false}, "", ""},
        {"tt-qwen3-moe-debug", "torchtitan", "tt__qwen3_qwen3_moe_debug.toml", opts({}, 8, 0, "tiny-moe"), true,
         {8, 1, 1, 8, 1, 1, 1, 3, 4, 32, 4096, bf16, selop, false}, "", ""},
        {"tt-integration-base", "torchtitan", "tt__tests_integration_tests_base_config.toml", opts({}, 8, 0, "tiny"), true,
         {8, 1, 1, 8, 1, 1, 1, 3, 8, 64, 2048, bf16, full, false}, "", ""},
    };
}

// Published totals of the Hugging Face configs (the model cards' safetensors parameter
// counts). Meshwork counts no norm of Gemma 2's extra pair per layer (2·h·layers = 301,056)
// nor Qwen3's QK norms (2·128 per layer): within 0.5%.
struct Published {
    const char* file;
    double params;
    const char* source;
};
const Published kPublished[] = {
    {"derived__Qwen1.5-MoE-A2.7B-Chat-GPTQ.no_quant.config.json", 14.3e9, "Qwen1.5-MoE-A2.7B card: 14.3B total"},
    {"h2ogpt_pythia6.9b.config.json", 6857302016, "EleutherAI/pythia-6.9b: 6,857,302,016"},
    {"llmprof__Llama-3.1-8B.config.json", 8030261248, "meta-llama/Llama-3.1-8B: 8.03B"},
    {"llmprof__Qwen2.5-14B.config.json", 14.7e9, "Qwen2.5-14B card: 14.7B"},
    {"llmprof__Qwen2.5-3B.config.json", 3.09e9, "Qwen2.5-3B card: 3.09B"},
    {"llmprof__Qwen2.5-7B.config.json", 7.61e9, "Qwen2.5-7B card: 7.61B"},
    {"llmprof__Qwen3-14B.config.json", 14.8e9, "Qwen3-14B card: 14.8B"},
    {"llmprof__Qwen3-32B.config.json", 32.8e9, "Qwen3-32B card: 32.8B"},
    {"llmprof__Qwen3-4B.config.json", 4.02e9, "Qwen3-4B card: 4.0B (4,022,468,096 in safetensors)"},
    {"llmprof__Qwen3-8B.config.json", 8.19e9, "Qwen3-8B card: 8.2B (8,190,735,360 in safetensors)"},
    {"pydict__deepseek_moe16b.config.json", 16.4e9, "deepseek-moe-16b-base card: 16.4B"},
    {"pydict__deepseek_v25.config.json", 236e9, "DeepSeek-V2.5 card: 236B"},
    {"pydict__gemma2_9b.config.json", 9241705984, "google/gemma-2-9b: 9,241,705,984"},
    {"pydict__gpt2.config.json", 124439808, "openai-community/gpt2: 124,439,808"},
    {"pydict__llama70b.config.json", 70553706496, "meta-llama/Llama-3.1-70B: 70.6B"},
    {"yangulei__Mixtral-8x7B.config.json", 46702792704, "mistralai/Mixtral-8x7B-v0.1: 46,702,792,704"},
};

std::vector<std::string> corpus_files(const char* folder) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(kCorpus / folder)) {
        const std::string name = e.path().filename().string();
        if (e.is_regular_file() && name != "SOURCES.txt") out.push_back(name);
    }
    return out;
}

std::string dump(const std::vector<InputIssue>& issues) {
    std::string s;
    for (const auto& i : issues) s += "\n  " + i.to_string();
    return s;
}

}  // namespace

class TestRealworldImport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void every_file_has_a_row();
    void imports_with_authors_axes_data();
    void imports_with_authors_axes();
    void hf_configs_load_data();
    void hf_configs_load();
    void hf_attention_details();
};

void TestRealworldImport::initTestCase() {
    if (!fs::is_directory(kCorpus / "megatron")) {
        QSKIP(qPrintable(QString("the real-world corpus is not at %1 (../shared/realworld beside the source tree)")
                             .arg(QString::fromStdString(kCorpus.string()))));
    }
}

void TestRealworldImport::every_file_has_a_row() {
    for (const char* folder : {"megatron", "deepspeed", "torchtitan"}) {
        std::set<std::string> covered;
        for (const auto& r : rows()) {
            if (std::string(r.folder) == folder) covered.insert(r.file);
        }
        for (const auto& f : corpus_files(folder)) {
            QVERIFY2(covered.count(f) != 0, qPrintable(QString("%1/%2 has no row").arg(folder).arg(f.c_str())));
        }
    }
    std::set<std::string> published;
    for (const auto& p : kPublished) published.insert(p.file);
    for (const auto& f : corpus_files("hf")) {
        QVERIFY2(published.count(f) != 0, qPrintable(QString("hf/%1 has no published count").arg(f.c_str())));
    }
}

void TestRealworldImport::imports_with_authors_axes_data() {
    QTest::addColumn<int>("row");
    const auto all = rows();
    for (std::size_t i = 0; i < all.size(); ++i) QTest::newRow(all[i].name) << static_cast<int>(i);
}

void TestRealworldImport::imports_with_authors_axes() {
    QFETCH(int, row);
    const Row r = rows()[static_cast<std::size_t>(row)];
    ImportOptions o = r.options;
    // The Qwen3 stand-in is a corpus config.json.
    if (std::string(r.file) == "tt__qwen3_qwen3_0.6b.toml") o.model = (kCorpus / "hf" / "llmprof__Qwen3-4B.config.json").string();
    const fs::path path = kCorpus / r.folder / r.file;
    const std::string text = read(path);
    if (!r.imports) {
        std::vector<InputIssue> issues;
        try {
            (void)import_config(text, path.string(), ImportFormat::Auto, o);
        } catch (const InputError& e) {
            issues = e.issues();
        }
        bool found = false;
        for (const auto& i : issues) {
            found = found || (i.field == r.field && i.message.find(r.words) != std::string::npos);
        }
        QVERIFY2(found, qPrintable(QString("expected %1: ...%2..., got%3")
                                       .arg(r.field, r.words, QString::fromStdString(issues.empty() ? " an import" : dump(issues)))));
        return;
    }
    ImportResult result;
    try {
        result = import_config(text, path.string(), ImportFormat::Auto, o);
    } catch (const InputError& e) {
        QFAIL(qPrintable(QString::fromStdString("refused:" + dump(e.issues()))));
    }
    const Layout& l = result.layout;
    const auto checked = validate_layout(l, path.string());
    QVERIFY2(checked.valid(), qPrintable(QString::fromStdString(dump(checked.errors))));
    const auto& m = l.parallel.mesh;
    const Axes& a = r.axes;
    QCOMPARE(l.gpus, a.gpus);
    QCOMPARE(m.tp, a.tp);
    QCOMPARE(m.pp, a.pp);
    QCOMPARE(m.dp, a.dp);
    QCOMPARE(m.cp, a.cp);
    QCOMPARE(m.ep, a.ep);
    QCOMPARE(l.parallel.vpp, a.vpp);
    QCOMPARE(l.training.zero_stage, a.zero);
    QCOMPARE(l.training.micro_batch_size, a.mbs);
    QCOMPARE(l.training.global_batch_size, a.gbs);
    QCOMPARE(l.training.seq_length, a.seq);
    QCOMPARE(to_string(l.training.dtype), to_string(a.dtype));
    QCOMPARE(to_string(l.training.recompute), to_string(a.recompute));
    QCOMPARE(l.parallel.sequence_parallel, a.sp);
    // The cluster is the one asked for, never a silent guess.
    QCOMPARE(QString::fromStdString(l.cluster_ref), QString::fromStdString(*o.cluster));
}

void TestRealworldImport::hf_configs_load_data() {
    QTest::addColumn<int>("row");
    for (std::size_t i = 0; i < std::size(kPublished); ++i) QTest::newRow(kPublished[i].file) << static_cast<int>(i);
}

void TestRealworldImport::hf_configs_load() {
    QFETCH(int, row);
    const Published& p = kPublished[row];
    const fs::path path = kCorpus / "hf" / p.file;
    ModelSpec model;
    try {
        model = load_model(path.string(), "test", "model");
    } catch (const InputError& e) {
        QFAIL(qPrintable(QString::fromStdString("refused:" + dump(e.issues()))));
    }
    const double params = static_cast<double>(build_layer_graph(model).params_total);
    QVERIFY2(std::abs(params - p.params) <= 0.005 * p.params,
             qPrintable(QString("%1 parameters, published %2 (%3)").arg(params, 0, 'f', 0).arg(p.params, 0, 'f', 0).arg(p.source)));
}

// The attention details the corpus configs state, as their authors wrote them: Gemma 2 9B
// slides a 4096-token window on every other block with soft-caps 50 (scores) and 30
// (logits); the Qwen configs state a window with use_sliding_window false (no window).
void TestRealworldImport::hf_attention_details() {
    const ModelSpec gemma = load_model((kCorpus / "hf" / "pydict__gemma2_9b.config.json").string());
    QCOMPARE(gemma.sliding_window, std::int64_t{4096});
    QCOMPARE(gemma.global_attention_every, 2);
    QVERIFY(gemma.is_local_attention_block(0) && !gemma.is_local_attention_block(41));
    QCOMPARE(gemma.attn_logit_softcap, 50.0);
    QCOMPARE(gemma.final_logit_softcap, 30.0);
    // Four norms a block: the parameters are google/gemma-2-9b's exactly.
    QVERIFY(gemma.sandwich_norms);
    QCOMPARE(build_layer_graph(gemma).params_total, std::int64_t{9241705984});
    for (const char* f : {"llmprof__Qwen2.5-7B.config.json", "llmprof__Qwen3-8B.config.json",
                          "derived__Qwen1.5-MoE-A2.7B-Chat-GPTQ.no_quant.config.json"}) {
        const ModelSpec q = load_model((kCorpus / "hf" / f).string());
        QVERIFY2(q.sliding_window == 0 && q.global_attention_every == 0, f);
    }
}

QTEST_GUILESS_MAIN(TestRealworldImport)
#include "tst_realworld_import.moc"
