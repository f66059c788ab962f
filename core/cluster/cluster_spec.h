// Accelerators, nodes and the links between them.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace meshwork {

// Fp8 and Fp4 name the precision of the GEMMs (Transformer Engine's quantized linear layers:
// fp8 under a Fp8Recipe, fp4 as NVFP4, Megatron-LM's --fp4-format e2m1 --fp4-recipe nvfp4);
// everything else in such a run (weights, activations, attention) stays in bf16.
enum class DType { Fp32, Tf32, Bf16, Fp16, Fp8, Fp4 };

std::string to_string(DType dtype);
// Parses "fp32", "tf32", "bf16", "fp16", "fp8", "fp4"; false when unknown.
bool parse_dtype(const std::string& text, DType& out);
// Whether the GEMMs run quantized (fp8 or fp4) around 16-bit training: bf16 weights and
// activations, casts before each GEMM, fused attention in 16 bits.
[[nodiscard]] inline bool quantized_gemms(DType dtype) { return dtype == DType::Fp8 || dtype == DType::Fp4; }

struct GpuKind {
    std::string kind;         // "h100-sxm", "a100-80gb", "cpu", ...
    std::string description;
    std::map<DType, double> peak_flops_per_s;  // dense (no structured sparsity)
    std::int64_t hbm_bytes = 0;
    double hbm_bandwidth_bytes_per_s = 0;
    // Streaming multiprocessors: what a communication kernel's fixed SM budget is a share of
    // (core/cost/ep_comm_sms.h). 0 when the file states none (CPUs, GPUs not described).
    int sm_count = 0;
    std::string source;       // datasheet the figures come from

    // Peak dense FLOP/s in `dtype`; 0 when the GPU has no such units (fp8 on A100, fp4 on H100).
    [[nodiscard]] double peak_flops(DType dtype) const;
    // What a job trains in when nothing says: bf16 where this device runs it faster than
    // fp32 (tensor cores), else fp32 (a CPU, whose bf16 is emulated at the fp32 rate).
    [[nodiscard]] DType default_training_dtype() const;
    bool operator==(const GpuKind&) const = default;
};

// One tier of interconnect: per-GPU, per-direction bandwidth and a per-message latency.
struct LinkTier {
    std::string name;
    double bandwidth_bytes_per_s = 0;
    double latency_s = 0;
    bool operator==(const LinkTier&) const = default;
};

// Fractions of peak reached in practice; starting points that `calibrate` refits. The cost
// model (core/cost, docs/cost-model.md) reads every rate it uses from here.
struct Efficiency {
    // Large GEMMs, fraction of dense peak. 0 = not stated: the cost model takes the published
    // kernel table's figure for the GPU and precision (core/cost/gemm_efficiency.h); a stated
    // figure (the cluster file's, a layout's inline cluster's, calibrate's) wins.
    double gemm = 0;
    double memory = 0.8;           // memory-bound kernels, fraction of HBM bandwidth
    double intra_node_link = 0.8;  // NCCL bus bandwidth / link bandwidth inside a node
    double inter_node_link = 0.85; // same across nodes
    // GEMM dimension (smallest of m, n, k) at which a GEMM reaches half of `gemm`: small or
    // thin GEMMs (large TP, small micro-batches) cannot fill the GPU.
    double gemm_half_dim = 64;
    // Fused (flash) attention kernels, fraction of dense peak.
    double attention = 0.5;
    // Fraction of the backward tensor-parallel collectives that run concurrently with
    // weight-gradient GEMMs (Megatron's asynchronous input-gradient all-reduce), at most
    // as long as those GEMMs.
    double tp_comm_overlap = 0.5;
    // Share of each window in which the data-parallel collectives may hide (the backwards
    // after a chunk's reduction starts, the forwards before a gather is needed; ZeRO-2/3's
    // per-micro-batch reduce-scatter behind its backward): core/cost/dp_overlap.h. 0 hides
    // nothing; the layout's overlap_grad_reduce / overlap_param_gather say whether the
    // framework overlaps at all.
    double dp_comm_overlap = 1.0;
    // Share of the GPU (its collective kernels' SMs and memory traffic) that a collective over
    // the intra-node / inter-node links takes while it runs beside compute: the compute it
    // overlaps runs at 1 − this (core/cost/comm_overlap.h; Calculon's per-network
    // processor_usage). 0, no interference, unless the cluster states it.
    double intra_node_interference = 0;
    double inter_node_interference = 0;
    bool operator==(const Efficiency&) const = default;
};

// Device memory the cost model keeps out of reach of tensors.
struct MemoryReserve {
    // CUDA context, cuBLAS workspaces and NCCL channel buffers: a fixed amount per device.
    std::int64_t fixed_bytes = 2ll << 30;
    // Caching-allocator fragmentation, as a fraction of the dynamic (activation and
    // buffer) memory.
    double fragmentation = 0.05;
    bool operator==(const MemoryReserve&) const = default;
};

struct ClusterSpec {
    std::string name;
    std::string description;
    GpuKind gpu;
    std::string gpu_ref;   // the GPU kind as written in the file (a preset name or inline)
    int gpus_per_node = 8;
    // GPUs of one host, the unit a job is allocated in, where a node (the NVLink domain the
    // links describe) holds several hosts: a GB200 NVL72 rack is one 72-GPU domain of 18
    // compute trays of 4 GPUs, and jobs take trays, not whole racks. 0 = the node is the host.
    int gpus_per_host = 0;
    int max_nodes = 1;
    LinkTier intra_node;
    LinkTier inter_node;
    // GPU <-> host memory (PCIe), per GPU and direction; bandwidth 0 when not described
    // (then no layout may offload state to the host).
    LinkTier host_link;
    Efficiency efficiency;
    MemoryReserve memory_reserve;
    // Host cores the ranks of one node share when ranks are threads on a host (the CPU
    // engine); 0 when every rank has a device of its own (GPUs). With more ranks on a node
    // than cores, the ranks cannot all compute at once: a step takes at least the node's
    // compute divided by these cores (core/cost/host_sharing.h). `calibrate` fits the cores
    // a run actually got (fewer than the machine has when other processes load it).
    double host_cores = 0;
    // With host_cores: the CPU a rank thread spends outside compute ops for one layer's
    // forward and backward of one micro-batch (dispatching the ops, recording them in the
    // trace, posting collectives), which needs a core as compute does; 0 = none. `calibrate`
    // fits it on a CPU run (docs/cost-model.md, "Ranks sharing a host").
    double host_cpu_per_layer_pass_s = 0;
    std::string source;

    // The allocation unit of a job: gpus_per_host, or the node.
    [[nodiscard]] int allocation_gpus() const { return gpus_per_host > 0 ? gpus_per_host : gpus_per_node; }
    [[nodiscard]] std::int64_t max_gpus() const {
        return static_cast<std::int64_t>(gpus_per_node) * max_nodes;
    }
    bool operator==(const ClusterSpec&) const = default;
};

GpuKind gpu_from_json(const nlohmann::json& j, const std::string& file, const std::string& path);
nlohmann::json gpu_to_json(const GpuKind& gpu);
// A GPU kind preset (resources/gpus) or a path.
GpuKind load_gpu(const std::string& name_or_path, const std::string& file,
                 const std::string& field);

ClusterSpec cluster_from_json(const nlohmann::json& j, const std::string& file,
                              const std::string& path = "");
nlohmann::json cluster_to_json(const ClusterSpec& cluster);
// A cluster preset (resources/clusters) or a path to a cluster JSON.
ClusterSpec load_cluster(const std::string& name_or_path, const std::string& file = "<flags>",
                         const std::string& field = "cluster");

}  // namespace meshwork
