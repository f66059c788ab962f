#include "core/export/megatron_flags.h"

#include <array>
#include <string_view>

namespace meshwork {

namespace {

constexpr const char* kData = "data, tokenizer or data loader: not part of the layout";
constexpr const char* kOptim = "optimizer, learning rate or regularisation: not part of the layout";
constexpr const char* kLength = "training length or schedule of the run: not part of the layout";
constexpr const char* kInit = "initialisation or seed: not part of the layout";
constexpr const char* kCkpt = "checkpointing: not part of the layout";
constexpr const char* kLog = "logging, evaluation or profiling: not part of the layout";
constexpr const char* kKernel = "kernel fusion or implementation choice: same layout, different kernels";
constexpr const char* kOverlap = "communication overlap or bucketing: same layout, different timing";
constexpr const char* kPrecisionDetail = "precision detail below the training dtype: not modelled";
constexpr const char* kModelDetail = "model detail that does not change shapes or FLOPs (RoPE base, dropout, epsilon)";
constexpr const char* kMoeDetail = "MoE routing or dispatch detail: not modelled";
constexpr const char* kRuntime = "process, timeout or fault-tolerance setting: not part of the layout";
constexpr const char* kRamp = "batch-size ramp-up: Meshwork models the final --global-batch-size";
constexpr const char* kModelNotYet =
    "model setting that ModelSpec does not hold yet (RoPE variant, QK norm, sliding window, MTP): not modelled";
constexpr const char* kFork =
    "flag of a Megatron-LM fork (Pai-Megatron-Patch, ROCm Megatron-LM): not part of the layout";
constexpr const char* kLegacy = "flag of an earlier Megatron-LM, since removed: not part of the layout";
constexpr const char* kMds =
    "Megatron-DeepSpeed's argument (deepspeedai/Megatron-DeepSpeed 4efb479d, megatron/arguments.py): "
    "not part of the layout";
constexpr const char* kBigScience =
    "BigScience's Megatron-DeepSpeed fork (bigscience-workshop/Megatron-DeepSpeed): logging or data "
    "loading, not part of the layout";
constexpr const char* kLlmJp = "llm-jp's Megatron-LM fork (llm-jp/Megatron-LM): logging or process launch, "
                               "not part of the layout";
constexpr const char* kPai =
    "Pai-Megatron-Patch's argument (alibaba/Pai-Megatron-Patch a098ca5a, megatron_patch/arguments.py): "
    "not part of the layout";
constexpr const char* kPaiData =
    "Pai-Megatron-Patch's sequence-to-sequence data lengths (megatron_patch/arguments.py:237-242 at a098ca5a): "
    "data, not part of the layout";
constexpr const char* kPaiRope =
    "Pai-Megatron-Patch's RoPE interpolation factor (megatron_patch/arguments.py:296 at a098ca5a, default 1): "
    "no change to shapes or FLOPs";
constexpr const char* kPaiEmbedNorm =
    "Pai-Megatron-Patch's LayerNorm after the embedding (megatron_patch/arguments.py:229 at a098ca5a): "
    "2·h parameters and one norm per token, not modelled";
constexpr const char* kMultimodal =
    "Megatron-LM's multimodal example argument (examples/multimodal/multimodal_args.py): the vision side, "
    "not part of the language model's layout";
constexpr const char* kDeepSpeed =
    "Megatron-DeepSpeed's DeepSpeed setting: import the DeepSpeed config itself with --format deepspeed";

struct Entry {
    std::string_view flag;
    const char* reason;
};

// Checked against megatron/training/arguments.py; extend as users meet more flags.
constexpr std::array kIgnored = std::to_array<Entry>({
    // data and tokenizer
    {"--data-path", kData}, {"--train-data-path", kData}, {"--valid-data-path", kData},
    {"--test-data-path", kData}, {"--data-args-path", kData}, {"--data-cache-path", kData},
    {"--mock-data", kData}, {"--split", kData}, {"--vocab-file", kData}, {"--merge-file", kData},
    {"--tokenizer-model", kData},
    {"--make-vocab-size-divisible-by", kData}, {"--dataloader-type", kData},
    {"--num-workers", kData}, {"--num-dataset-builder-threads", kData},
    {"--no-create-attention-mask-in-dataloader", kData}, {"--reset-position-ids", kData},
    {"--reset-attention-mask", kData}, {"--eod-mask-loss", kData}, {"--object-storage-cache-path", kData},
    {"--mid-level-dataset-surplus", kData}, {"--no-mmap-bin-files", kData},
    // optimizer and learning rate
    {"--optimizer", kOptim}, {"--lr", kOptim}, {"--min-lr", kOptim}, {"--lr-decay-style", kOptim},
    {"--lr-decay-iters", kOptim}, {"--lr-decay-samples", kOptim}, {"--lr-warmup-fraction", kOptim},
    {"--lr-warmup-iters", kOptim}, {"--lr-warmup-samples", kOptim}, {"--lr-warmup-init", kOptim},
    {"--weight-decay", kOptim}, {"--start-weight-decay", kOptim}, {"--end-weight-decay", kOptim},
    {"--weight-decay-incr-style", kOptim}, {"--clip-grad", kOptim}, {"--adam-beta1", kOptim},
    {"--adam-beta2", kOptim}, {"--adam-eps", kOptim}, {"--sgd-momentum", kOptim},
    {"--override-opt_param-scheduler", kOptim}, {"--use-checkpoint-opt_param-scheduler", kOptim},
    // run length
    {"--train-iters", kLength}, {"--train-samples", kLength}, {"--exit-interval", kLength},
    {"--exit-duration-in-mins", kLength}, {"--exit-signal-handler", kLength},
    {"--rampup-batch-size", kRamp},
    // initialisation
    {"--seed", kInit}, {"--init-method-std", kInit}, {"--init-method-xavier-uniform", kInit},
    {"--data-parallel-random-init", kInit}, {"--use-cpu-initialization", kInit},
    {"--init-model-with-meta-device", kInit},
    // checkpoints
    {"--save", kCkpt}, {"--load", kCkpt}, {"--save-interval", kCkpt}, {"--no-save-optim", kCkpt},
    {"--no-save-rng", kCkpt}, {"--no-load-optim", kCkpt}, {"--no-load-rng", kCkpt},
    {"--finetune", kCkpt}, {"--pretrained-checkpoint", kCkpt}, {"--ckpt-format", kCkpt},
    {"--use-checkpoint-args", kCkpt}, {"--exit-on-missing-checkpoint", kCkpt},
    {"--use-dist-ckpt", kCkpt}, {"--auto-detect-ckpt-format", kCkpt}, {"--async-save", kCkpt},
    {"--ckpt-fully-parallel-save", kCkpt}, {"--ckpt-fully-parallel-load", kCkpt},
    {"--non-persistent-save-interval", kCkpt}, {"--non-persistent-ckpt-type", kCkpt},
    {"--dist-ckpt-strictness", kCkpt},
    // logging, evaluation, profiling
    {"--log-interval", kLog}, {"--eval-interval", kLog}, {"--eval-iters", kLog},
    {"--tensorboard-dir", kLog}, {"--tensorboard-queue-size", kLog}, {"--log-throughput", kLog},
    {"--log-timers-to-tensorboard", kLog}, {"--log-memory-to-tensorboard", kLog},
    {"--log-validation-ppl-to-tensorboard", kLog}, {"--log-params-norm", kLog},
    {"--log-num-zeros-in-grad", kLog}, {"--log-world-size-to-tensorboard", kLog},
    {"--log-progress", kLog}, {"--timing-log-level", kLog}, {"--timing-log-option", kLog},
    {"--wandb-project", kLog}, {"--wandb-exp-name", kLog}, {"--wandb-save-dir", kLog},
    {"--wandb-entity", kLog}, {"--profile", kLog}, {"--use-pytorch-profiler", kLog},
    {"--profile-step-start", kLog}, {"--profile-step-end", kLog}, {"--profile-ranks", kLog},
    {"--record-memory-history", kLog}, {"--skip-train", kLog}, {"--full-validation", kLog},
    {"--log-straggler", kLog}, {"--logging-level", kLog},
    // kernels and implementations
    {"--use-mcore-models", kKernel}, {"--transformer-impl", kKernel},
    {"--no-masked-softmax-fusion", kKernel}, {"--no-bias-gelu-fusion", kKernel},
    {"--no-bias-swiglu-fusion", kKernel}, {"--no-bias-dropout-fusion", kKernel},
    {"--no-rope-fusion", kKernel}, {"--no-persist-layer-norm", kKernel},
    {"--no-gradient-accumulation-fusion", kKernel}, {"--cross-entropy-loss-fusion", kKernel},
    {"--cross-entropy-fusion-impl", kKernel}, {"--apply-layernorm-1p", kKernel},
    {"--use-fused-weighted-squared-relu", kKernel}, {"--spec", kKernel},
    {"--cuda-graph-warmup-steps", kKernel},
    {"--manual-gc", kRuntime}, {"--manual-gc-interval", kRuntime}, {"--calculate-per-token-loss", kKernel},
    // communication overlap
    {"--overlap-param-gather-with-optimizer-step", kOverlap}, {"--overlap-p2p-comm", kOverlap},
    {"--no-overlap-p2p-communication", kOverlap}, {"--align-param-gather", kOverlap},
    {"--tp-comm-overlap", kOverlap}, {"--tp-comm-overlap-cfg", kOverlap},
    {"--no-async-tensor-model-parallel-allreduce", kOverlap}, {"--ddp-bucket-size", kOverlap},
    {"--ddp-average-in-collective", kOverlap},
    {"--defer-embedding-wgrad-compute", kOverlap}, {"--delay-wgrad-compute", kOverlap},
    {"--use-nccl-ub", kOverlap},
    {"--fsdp-double-buffer", kOverlap},
    {"--disable-gloo-process-groups", kRuntime}, {"--nccl-communicator-config-path", kRuntime},
    {"--microbatch-group-size-per-virtual-pipeline-stage", kOverlap},
    // precision details
    {"--fp8-margin", kPrecisionDetail}, {"--fp8-interval", kPrecisionDetail},
    {"--fp8-amax-history-len", kPrecisionDetail}, {"--fp8-amax-compute-algo", kPrecisionDetail},
    {"--fp8-param-gather", kPrecisionDetail}, {"--fp4-param-gather", kPrecisionDetail},
    {"--attention-softmax-in-fp32", kPrecisionDetail},
    {"--accumulate-allreduce-grads-in-fp32", kPrecisionDetail},
    {"--fp16-lm-cross-entropy", kPrecisionDetail}, {"--loss-scale", kPrecisionDetail},
    {"--initial-loss-scale", kPrecisionDetail}, {"--min-loss-scale", kPrecisionDetail},
    {"--loss-scale-window", kPrecisionDetail}, {"--hysteresis", kPrecisionDetail},
    {"--main-grads-dtype", kPrecisionDetail}, {"--main-params-dtype", kPrecisionDetail},
    {"--exp-avg-dtype", kPrecisionDetail}, {"--exp-avg-sq-dtype", kPrecisionDetail},
    {"--use-precision-aware-optimizer", kPrecisionDetail}, {"--first-last-layers-bf16", kPrecisionDetail},
    {"--num-layers-at-start-in-bf16", kPrecisionDetail}, {"--num-layers-at-end-in-bf16", kPrecisionDetail},
    // model details without an effect on shapes or FLOPs
    
    
    
     {"--init-method-std-scaled", kModelDetail},
    {"--no-scaled-init-methods", kModelDetail},
    // MoE details
    {"--moe-grouped-gemm", kMoeDetail},
    {"--moe-aux-loss-coeff", kMoeDetail}, {"--moe-z-loss-coeff", kMoeDetail},
    {"--moe-router-load-balancing-type", kMoeDetail}, {"--moe-router-pre-softmax", kMoeDetail},
    {"--moe-router-dtype", kMoeDetail},
    {"--moe-router-topk-scaling-factor", kMoeDetail}, {"--moe-router-num-groups", kMoeDetail},
    {"--moe-router-group-topk", kMoeDetail}, {"--moe-router-bias-update-rate", kMoeDetail},
    {"--moe-permute-fusion", kMoeDetail}, {"--moe-token-drop-policy", kMoeDetail},
    {"--moe-pad-expert-input-to-capacity", kMoeDetail}, {"--moe-shared-expert-overlap", kMoeDetail},
    {"--moe-per-layer-logging", kMoeDetail}, {"--moe-input-jitter-eps", kMoeDetail},
    {"--moe-use-legacy-grouped-gemm", kMoeDetail}, {"--moe-layer-recompute", kMoeDetail},
    // process and runtime
    {"--distributed-backend", kRuntime}, {"--distributed-timeout-minutes", kRuntime},
    {"--rerun-mode", kRuntime}, {"--no-check-for-nan-in-loss-and-grad", kRuntime},
    {"--check-for-nan-in-loss-and-grad", kRuntime}, {"--check-for-spiky-loss", kRuntime},
    {"--local-rank", kRuntime}, {"--local_rank", kRuntime}, {"--enable-ft-package", kRuntime},
    {"--empty-unused-memory-level", kRuntime}, {"--deterministic-mode", kRuntime},
    {"--yaml-cfg", kRuntime},
    // current Megatron-LM flags met in its examples (arguments.py and the config dataclasses
    // at d98e8a64; docs/upstream-megatron.md)
    {"--decoupled-lr", kOptim}, {"--decoupled-min-lr", kOptim}, {"--step-batch-size-schedule", kRamp},
    {"--tiktoken-pattern", kData}, {"--fsdp-manual-registration", kOverlap},
    {"--mscale", kModelNotYet}, {"--mscale-all-dim", kModelNotYet},
    {"--rotary-interleaved", kModelNotYet}, {"--apply-query-key-layer-scaling", kModelDetail},
    {"--moe-router-force-load-balancing", kMoeDetail}, {"--log-batch-size-to-tensorboard", kLog},
    {"--no-log-loss-scale-to-tensorboard", kLog}, {"--log-loss-scale-to-tensorboard", kLog},
    {"--megatron-fsdp-main-params-dtype", kPrecisionDetail}, {"--megatron-fsdp-main-grads-dtype", kPrecisionDetail},
    {"--megatron-fsdp-grad-comm-dtype", kPrecisionDetail},
    // earlier Megatron-LM
    {"--DDP-impl", kLegacy}, {"--use-contiguous-parameters-in-local-ddp", kLegacy},
    {"--data-impl", kLegacy}, {"--no-load-lr-state", kLegacy},
    // Megatron-DeepSpeed
    {"--deepspeed_config", kDeepSpeed}, {"--deepspeed-config", kDeepSpeed},
    {"--deepspeed-activation-checkpointing", kDeepSpeed}, {"--use-flash-attn-v2", kKernel},
    {"--use-flash-attn-triton", kKernel}, {"--no-query-key-layer-scaling", kModelDetail},
    {"--cpu-optimizer", kOptim}, {"--cpu-torch-adam", kOptim},
    {"--log-optimizer-states-to-tensorboard", kMds}, {"--create-moe-param-group", kMds},
    {"--moe-eval-capacity-factor", kMds}, {"--moe-min-capacity", kMds}, {"--moe-loss-coeff", kMds},
    {"--use-tutel", kMds}, {"--ds-sequence-parallel-fpdt-chunk-size", kMds},
    {"--ds-sequence-parallel-fpdt-offloading", kMds}, {"--disable-moe-top2-2nd-expert-sampling", kMds}, {"--universal-checkpoint", kMds},
    // BigScience's fork (Megatron-DeepSpeed with its logging and data options)
    {"--valid-num-workers", kBigScience}, {"--log-level-replica", kBigScience}, {"--log-level", kBigScience},
    {"--abort-on-unmet-fused-kernel-constraints", kBigScience},
    // llm-jp's fork
    {"--wandb-name", kLlmJp}, {"--use-mpi", kLlmJp}, {"--wandb-group", kLlmJp},
    // Pai-Megatron-Patch
    {"--optimizer-offload-auto-threshold", kPai}, {"--optimizer-offload-chunk-size", kPai},
    {"--source-seq-len", kPaiData}, {"--target-seq-len", kPaiData},
    {"--rotary-scale-factor", kPaiRope}, {"--embed-layernorm", kPaiEmbedNorm},
    // Megatron-LM's multimodal example (examples/multimodal/multimodal_args.py:105, :111 at
    // d98e8a64, an extra arguments provider of examples/multimodal/train.py)
    {"--packing-seq-length", kMultimodal}, {"--recompute-vision", kMultimodal},
    // forks: Pai-Megatron-Patch, ROCm Megatron-LM
    {"--patch-tokenizer-type", kFork}, {"--extra-vocab-size", kFork}, {"--dataset", kFork},
    {"--max-padding-length", kFork}, {"--train-mode", kFork}, {"--enable-shared-expert", kFork},
    {"--num-shared-experts", kFork}, {"--attention-sink-k", kFork}, {"--fused-padded-mla-attention", kFork},
    {"--keep_fp8_weight_transpose_cache", kFork},
});

constexpr std::array kTorchrun = std::to_array<LauncherOption>({
    {"--nnodes", true}, {"--nproc-per-node", true}, {"--nproc_per_node", true},
    {"--node-rank", true}, {"--node_rank", true}, {"--master-addr", true},
    {"--master_addr", true}, {"--master-port", true}, {"--master_port", true},
    {"--rdzv-backend", true}, {"--rdzv_backend", true}, {"--rdzv-endpoint", true},
    {"--rdzv_endpoint", true}, {"--rdzv-id", true}, {"--rdzv_id", true},
    {"--rdzv-conf", true}, {"--rdzv_conf", true}, {"--max-restarts", true},
    {"--max_restarts", true}, {"--monitor-interval", true}, {"--monitor_interval", true},
    {"--start-method", true}, {"--start_method", true}, {"--role", true},
    {"--log-dir", true}, {"--log_dir", true}, {"--redirects", true}, {"-r", true},
    {"--tee", true}, {"-t", true}, {"--local-ranks-filter", true},
    {"--local_ranks_filter", true}, {"--local-addr", true}, {"--local_addr", true},
    {"--logs-specs", true}, {"--logs_specs", true}, {"--standalone", false},
    {"--no-python", false}, {"--no_python", false}, {"--run-path", false},
    {"--run_path", false},
    // -m / --module: the script is a module run as `python -m` does (torch/distributed/run.py,
    // "Change each process to interpret the launch script as a Python module").
    {"-m", false}, {"--module", false},
    // torch.distributed.launch (the deprecated launcher) only
    {"--use_env", false}, {"--use-env", false},
});

struct UpstreamFlag {
    std::string_view flag;
    bool takes_value;
    const char* source;
};

constexpr UpstreamFlag kUpstream[] = {
#include "core/export/megatron_upstream_flags.inc"
};

constexpr const char* kUpstreamReason =
    "Megatron-LM argument that is not one of the layout arguments import-args reads";

// Current flags that change the layout in ways a Meshwork layout does not hold.
constexpr std::array kUnread = std::to_array<Entry>({
    {"--heterogeneous-layers-config-path", "heterogeneous layers: blocks of different shapes"},
    {"--heterogeneous-layers-config-encoded-json", "heterogeneous layers: blocks of different shapes"},
    {"--heterogeneous-block-specs", "heterogeneous layers: blocks of different shapes"},
    {"--hierarchical-context-parallel-sizes", "hierarchical context parallelism"},
    {"--hybrid-context-parallel", "hybrid context parallelism"},
    {"--encoder-num-layers", "an encoder stack"},
    // MIMO's per-module parallel grids (examples/mimo/training/args.py:15-43 at d98e8a64): the
    // encoder and the language model on separate rank ranges with their own axes.
    {"--encoder-tp", "MIMO's encoder grid, its own ranks and axes"},
    {"--encoder-dp", "MIMO's encoder grid, its own ranks and axes"},
    {"--llm-offset", "MIMO's language grid, its own ranks and axes"},
    {"--llm-tp", "MIMO's language grid, its own ranks and axes"},
    {"--llm-cp", "MIMO's language grid, its own ranks and axes"},
    {"--llm-pp", "MIMO's language grid, its own ranks and axes"},
    {"--llm-dp", "MIMO's language grid, its own ranks and axes"},
    {"--llm-ep", "MIMO's language grid, its own ranks and axes"},
    {"--llm-expt-tp", "MIMO's language grid, its own ranks and axes"},
    {"--tensor-parallel-num-weight-shards", "weight sharding within tensor parallelism"},
    {"--expert-tensor-parallel-num-weight-shards", "weight sharding within expert tensor parallelism"},
    {"--cpu-offloading", "activation and weight offloading to the CPU"},
    {"--fine-grained-activation-offloading", "activation offloading to the CPU"},
    {"--moe-latent-size", "experts working in a latent width"},
    // Megatron-DeepSpeed (megatron/arguments.py at 4efb479d)
    {"--num-layers-teacher", "a teacher model for knowledge distillation (Megatron-DeepSpeed, arguments.py:1543)"},
    {"--ds-sequence-parallel-fpdt",
     "DeepSpeed's FPDT chunked long-context attention (Megatron-DeepSpeed, arguments.py:979)"},
    {"--enable-zbh1-pipeline", "the zero-bubble ZB-H1 pipeline schedule (Megatron-DeepSpeed, arguments.py:856)"},
});

}  // namespace

const char* megatron_ignored_flag_reason(const std::string& flag) {
    for (const auto& e : kIgnored) {
        if (e.flag == flag) return e.reason;
    }
    if (megatron_unread_layout_flag(flag) != nullptr) return nullptr;
    if (megatron_upstream_flag_source(flag) != nullptr) return kUpstreamReason;
    return nullptr;
}

const char* megatron_unread_layout_flag(const std::string& flag) {
    for (const auto& e : kUnread) {
        if (e.flag == flag) return e.reason;
    }
    return nullptr;
}

const char* megatron_upstream_flag_source(const std::string& flag) {
    for (const auto& u : kUpstream) {
        if (u.flag == flag) return u.source;
    }
    return nullptr;
}

const char* megatron_layout_like_word(const std::string& flag) {
    // The words of the layout arguments' names (kLayoutFlags, megatron_import.cpp).
    static constexpr const char* kWords[] = {
        "parallel", "layer", "hidden", "head", "batch", "seq-len", "seq_len", "expert", "moe", "recompute",
        "checkpoint-activ", "zero", "offload", "fp8", "fp16", "bf16", "fp4", "precision", "vocab", "ffn",
        "pipeline", "stage", "micro", "world", "gpus", "nodes", "shard", "fsdp", "attention", "query-groups",
        "kv-", "window", "rope", "rotary", "position", "norm", "swiglu", "glu", "mla", "lora", "mtp", "hybrid",
        "mamba"};
    for (const char* w : kWords) {
        if (flag.find(w) != std::string::npos) return w;
    }
    return nullptr;
}

const LauncherOption* torchrun_option(const std::string& flag) {
    for (const auto& o : kTorchrun) {
        if (flag == o.name) return &o;
    }
    return nullptr;
}

}  // namespace meshwork
