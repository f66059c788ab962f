#include "core/cluster/cluster_spec.h"

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/common/resources.h"

namespace meshwork {

namespace {
constexpr double kMaxFlops = 1e18;          // 1 EFLOP/s per device: beyond any real part
constexpr double kMaxBandwidth = 1e14;      // 100 TB/s
constexpr std::int64_t kMaxHbm = 1ll << 44;  // 16 TiB
constexpr int kFormatVersion = 1;

void check_format(JsonObjectReader& r, const std::string& expected) {
    const std::string format = r.get_string_or("format", expected);
    if (format != expected) {
        throw InputError(r.file(), r.field("format"),
                         "expected \"" + expected + "\", found \"" + format + "\"");
    }
    const auto version = r.get_int_or("version", kFormatVersion, 1, 1000000);
    if (version > kFormatVersion) {
        throw InputError(r.file(), r.field("version"),
                         "format version " + std::to_string(version) +
                             " is newer than this build reads (" + std::to_string(kFormatVersion) +
                             ")");
    }
}

LinkTier link_from_json(JsonObjectReader r) {
    LinkTier t;
    t.name = r.get_string_or("name", "");
    t.bandwidth_bytes_per_s = r.get_number("bandwidth_bytes_per_s", 1.0, kMaxBandwidth);
    t.latency_s = r.get_number("latency_s", 0.0, 1.0);
    r.reject_unknown_keys();
    return t;
}

nlohmann::json link_to_json(const LinkTier& t) {
    return {{"name", t.name},
            {"bandwidth_bytes_per_s", t.bandwidth_bytes_per_s},
            {"latency_s", t.latency_s}};
}
}  // namespace

std::string to_string(DType dtype) {
    switch (dtype) {
        case DType::Fp32: return "fp32";
        case DType::Tf32: return "tf32";
        case DType::Bf16: return "bf16";
        case DType::Fp16: return "fp16";
        case DType::Fp8: return "fp8";
        case DType::Fp4: return "fp4";
    }
    return "?";
}

bool parse_dtype(const std::string& text, DType& out) {
    for (DType d : {DType::Fp32, DType::Tf32, DType::Bf16, DType::Fp16, DType::Fp8, DType::Fp4}) {
        if (text == to_string(d)) {
            out = d;
            return true;
        }
    }
    return false;
}

double GpuKind::peak_flops(DType dtype) const {
    auto it = peak_flops_per_s.find(dtype);
    return it == peak_flops_per_s.end() ? 0.0 : it->second;
}

DType GpuKind::default_training_dtype() const {
    return peak_flops(DType::Bf16) > peak_flops(DType::Fp32) ? DType::Bf16 : DType::Fp32;
}

GpuKind gpu_from_json(const nlohmann::json& j, const std::string& file, const std::string& path) {
    JsonObjectReader r(j, file, path);
    check_format(r, "meshwork-gpu");
    GpuKind g;
    g.kind = r.get_string("kind");
    g.description = r.get_string_or("description", "");
    g.source = r.get_string_or("source", "");
    auto flops = r.get_object("peak_flops_per_s");
    for (DType d : {DType::Fp32, DType::Tf32, DType::Bf16, DType::Fp16, DType::Fp8, DType::Fp4}) {
        if (flops.has(to_string(d))) {
            g.peak_flops_per_s[d] = flops.get_number(to_string(d), 1.0, kMaxFlops);
        }
    }
    flops.reject_unknown_keys();
    if (g.peak_flops(DType::Fp32) <= 0) {
        throw InputError(file, flops.field("fp32"), "required field is missing");
    }
    g.hbm_bytes = r.get_int("hbm_bytes", 1 << 20, kMaxHbm);
    g.hbm_bandwidth_bytes_per_s = r.get_number("hbm_bandwidth_bytes_per_s", 1e6, kMaxBandwidth);
    g.sm_count = static_cast<int>(r.get_int_or("sm_count", 0, 0, 100000));
    r.reject_unknown_keys();
    return g;
}

nlohmann::json gpu_to_json(const GpuKind& g) {
    nlohmann::json flops = nlohmann::json::object();
    for (const auto& [d, f] : g.peak_flops_per_s) flops[to_string(d)] = f;
    nlohmann::json j = {{"format", "meshwork-gpu"}, {"version", kFormatVersion},
                        {"kind", g.kind},          {"description", g.description},
                        {"peak_flops_per_s", flops}, {"hbm_bytes", g.hbm_bytes},
                        {"hbm_bandwidth_bytes_per_s", g.hbm_bandwidth_bytes_per_s},
                        {"source", g.source}};
    if (g.sm_count > 0) j["sm_count"] = g.sm_count;
    return j;
}

GpuKind load_gpu(const std::string& name_or_path, const std::string& file,
                 const std::string& field) {
    const std::string path = resolve_preset_path(PresetKind::Gpu, name_or_path, file, field);
    return gpu_from_json(load_json_file(path), path, "");
}

ClusterSpec cluster_from_json(const nlohmann::json& j, const std::string& file,
                              const std::string& path) {
    JsonObjectReader r(j, file, path);
    check_format(r, "meshwork-cluster");
    ClusterSpec c;
    c.name = r.get_string("name");
    c.description = r.get_string_or("description", "");
    c.source = r.get_string_or("source", "");
    const nlohmann::json& gpu = r.raw("gpu");
    if (gpu.is_string()) {
        c.gpu_ref = gpu.get<std::string>();
        c.gpu = load_gpu(c.gpu_ref, file, r.field("gpu"));
    } else {
        c.gpu = gpu_from_json(gpu, file, r.field("gpu"));
    }
    c.gpus_per_node = static_cast<int>(r.get_int("gpus_per_node", 1, 1024));
    if (r.has("gpus_per_host")) {
        c.gpus_per_host = static_cast<int>(r.get_int("gpus_per_host", 1, c.gpus_per_node));
        if (c.gpus_per_node % c.gpus_per_host != 0) {
            throw InputError(file, r.field("gpus_per_host"),
                             "must divide gpus_per_node (" + std::to_string(c.gpus_per_node) + "), found " +
                                 std::to_string(c.gpus_per_host));
        }
    }
    c.max_nodes = static_cast<int>(r.get_int("max_nodes", 1, 1 << 20));
    c.intra_node = link_from_json(r.get_object("intra_node"));
    c.inter_node = link_from_json(r.get_object("inter_node"));
    if (r.has("host_link")) c.host_link = link_from_json(r.get_object("host_link"));
    c.host_cores = r.get_number_or("host_cores", 0.0, 0.0, 1e6);
    c.host_cpu_per_layer_pass_s = r.get_number_or("host_cpu_per_layer_pass_s", 0.0, 0.0, 1e3);
    if (r.has("efficiency")) {
        auto e = r.get_object("efficiency");
        c.efficiency.gemm = e.get_number_or("gemm", c.efficiency.gemm, 0.01, 1.0);
        c.efficiency.memory = e.get_number_or("memory", c.efficiency.memory, 0.01, 1.0);
        c.efficiency.intra_node_link =
            e.get_number_or("intra_node_link", c.efficiency.intra_node_link, 0.01, 1.0);
        c.efficiency.inter_node_link =
            e.get_number_or("inter_node_link", c.efficiency.inter_node_link, 0.01, 1.0);
        c.efficiency.gemm_half_dim =
            e.get_number_or("gemm_half_dim", c.efficiency.gemm_half_dim, 0.0, 1e6);
        c.efficiency.attention = e.get_number_or("attention", c.efficiency.attention, 0.01, 1.0);
        c.efficiency.tp_comm_overlap =
            e.get_number_or("tp_comm_overlap", c.efficiency.tp_comm_overlap, 0.0, 1.0);
        c.efficiency.dp_comm_overlap =
            e.get_number_or("dp_comm_overlap", c.efficiency.dp_comm_overlap, 0.0, 1.0);
        c.efficiency.intra_node_interference = e.get_number_or(
            "intra_node_interference", c.efficiency.intra_node_interference, 0.0, 0.9);
        c.efficiency.inter_node_interference = e.get_number_or(
            "inter_node_interference", c.efficiency.inter_node_interference, 0.0, 0.9);
        e.reject_unknown_keys();
    }
    if (r.has("memory_reserve")) {
        auto m = r.get_object("memory_reserve");
        c.memory_reserve.fixed_bytes =
            m.get_int_or("fixed_bytes", c.memory_reserve.fixed_bytes, 0, kMaxHbm);
        c.memory_reserve.fragmentation =
            m.get_number_or("fragmentation", c.memory_reserve.fragmentation, 0.0, 1.0);
        m.reject_unknown_keys();
    }
    r.reject_unknown_keys();
    return c;
}

nlohmann::json cluster_to_json(const ClusterSpec& c) {
    nlohmann::json j = {{"format", "meshwork-cluster"},
                        {"version", kFormatVersion},
                        {"name", c.name},
                        {"description", c.description}};
    j["gpu"] = c.gpu_ref.empty() ? gpu_to_json(c.gpu) : nlohmann::json(c.gpu_ref);
    j["gpus_per_node"] = c.gpus_per_node;
    if (c.gpus_per_host > 0) j["gpus_per_host"] = c.gpus_per_host;
    j["max_nodes"] = c.max_nodes;
    j["intra_node"] = link_to_json(c.intra_node);
    j["inter_node"] = link_to_json(c.inter_node);
    if (c.host_link.bandwidth_bytes_per_s > 0) j["host_link"] = link_to_json(c.host_link);
    if (c.host_cores > 0) j["host_cores"] = c.host_cores;
    if (c.host_cpu_per_layer_pass_s > 0) j["host_cpu_per_layer_pass_s"] = c.host_cpu_per_layer_pass_s;
    j["efficiency"] = {{"memory", c.efficiency.memory},
                       {"intra_node_link", c.efficiency.intra_node_link},
                       {"inter_node_link", c.efficiency.inter_node_link},
                       {"gemm_half_dim", c.efficiency.gemm_half_dim},
                       {"attention", c.efficiency.attention},
                       {"tp_comm_overlap", c.efficiency.tp_comm_overlap},
                       {"dp_comm_overlap", c.efficiency.dp_comm_overlap}};
    // Written only when stated, so that clusters without them read as before.
    // Written only when stated, so that a cluster without it keeps taking the kernel table's.
    if (c.efficiency.gemm > 0) j["efficiency"]["gemm"] = c.efficiency.gemm;
    if (c.efficiency.intra_node_interference > 0) {
        j["efficiency"]["intra_node_interference"] = c.efficiency.intra_node_interference;
    }
    if (c.efficiency.inter_node_interference > 0) {
        j["efficiency"]["inter_node_interference"] = c.efficiency.inter_node_interference;
    }
    j["memory_reserve"] = {{"fixed_bytes", c.memory_reserve.fixed_bytes},
                           {"fragmentation", c.memory_reserve.fragmentation}};
    j["source"] = c.source;
    return j;
}

ClusterSpec load_cluster(const std::string& name_or_path, const std::string& file,
                         const std::string& field) {
    const std::string path = resolve_preset_path(PresetKind::Cluster, name_or_path, file, field);
    return cluster_from_json(load_json_file(path), path, "");
}

}  // namespace meshwork
