#include "core/model/hf_hybrid_config.h"

#include <cctype>

#include "core/common/error.h"
#include "core/model/hf_config_limits.h"

namespace meshwork {

namespace {

using namespace hf_limits;

// A list of per-layer type strings, each mapped by `kind_of` (which returns false for an
// unknown name).
template <typename F>
std::vector<BlockKind> read_type_list(JsonObjectReader& r, const char* key, const std::string& expected, F kind_of) {
    const nlohmann::json& v = r.raw(key);
    if (!v.is_array() || v.empty() || static_cast<std::int64_t>(v.size()) > kMaxLayers) {
        throw InputError(r.file(), r.field(key), "expected a non-empty array of layer types");
    }
    std::vector<BlockKind> kinds;
    for (std::size_t i = 0; i < v.size(); ++i) {
        BlockKind k;
        if (!v[i].is_string() || !kind_of(v[i].get<std::string>(), k)) {
            throw InputError(r.file(), r.field(key) + "[" + std::to_string(i) + "]", "expected " + expected);
        }
        kinds.push_back(k);
    }
    return kinds;
}

}  // namespace

void read_qwen3_next_layers(JsonObjectReader& r, const nlohmann::json& config, ModelSpec& m) {
    auto& d = m.linear_attention;
    d.num_key_heads = static_cast<int>(r.get_int_or("linear_num_key_heads", 16, 1, kMaxHeads));
    d.num_value_heads = static_cast<int>(r.get_int_or("linear_num_value_heads", 32, 1, kMaxHeads));
    d.key_head_dim = r.get_int_or("linear_key_head_dim", 128, 1, kMaxWidth);
    d.value_head_dim = r.get_int_or("linear_value_head_dim", 128, 1, kMaxWidth);
    d.conv_kernel = static_cast<int>(r.get_int_or("linear_conv_kernel_dim", 4, 1, 64));
    if (d.num_value_heads % d.num_key_heads != 0) {
        throw InputError(r.file(), r.field("linear_num_value_heads"),
                         std::to_string(d.num_value_heads) + " value heads are not a multiple of " +
                             std::to_string(d.num_key_heads) + " key heads");
    }
    if (stated(config, "layer_types")) {
        m.block_kinds = read_type_list(r, "layer_types", "linear_attention or full_attention",
                                       [](const std::string& t, BlockKind& k) {
                                           if (t == "linear_attention") k.mixer = MixerKind::LinearAttention;
                                           else if (t == "full_attention") k.mixer = MixerKind::Attention;
                                           else return false;
                                           return true;
                                       });
        if (static_cast<int>(m.block_kinds.size()) != m.num_layers) {
            throw InputError(r.file(), r.field("layer_types"),
                             "has " + std::to_string(m.block_kinds.size()) + " entries for " +
                                 std::to_string(m.num_layers) + " layers (num_hidden_layers)");
        }
        r.ignore("full_attention_interval");
    } else {
        const auto every = r.get_int_or("full_attention_interval", 4, 1, kMaxLayers);
        m.block_kinds.clear();
        for (int i = 0; i < m.num_layers; ++i) {
            BlockKind k;
            k.mixer = (i + 1) % every == 0 ? MixerKind::Attention : MixerKind::LinearAttention;
            m.block_kinds.push_back(k);
        }
    }
}

std::vector<BlockKind> block_kinds_from_pattern(const std::string& pattern, const std::string& file,
                                                const std::string& field) {
    if (pattern.empty() || static_cast<std::int64_t>(pattern.size()) > kMaxLayers) {
        throw InputError(file, field, "expected a non-empty pattern of M, *, -, E (and G, S)");
    }
    std::vector<BlockKind> kinds;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        BlockKind k;
        k.ffn = FfnKind::None;
        switch (pattern[i]) {
            case 'M': k.mixer = MixerKind::Mamba2; break;
            case '*': k.mixer = MixerKind::Attention; break;
            case 'G': k.mixer = MixerKind::LinearAttention; break;
            case 'S': k.mixer = MixerKind::SparseAttention; break;
            case '-': k.mixer = MixerKind::None; k.ffn = FfnKind::Dense; break;
            case 'E': k.mixer = MixerKind::None; k.ffn = FfnKind::Moe; break;
            default:
                throw InputError(file, field,
                                 std::string("character ") + std::to_string(i) + " '" +
                                     (std::isprint(static_cast<unsigned char>(pattern[i])) ? std::string(1, pattern[i]) : "?") +
                                     "' is not a layer kind (M Mamba-2, * attention, - MLP, E MoE, G Gated DeltaNet, "
                                     "S sparse attention)");
        }
        kinds.push_back(k);
    }
    return kinds;
}

std::string hybrid_pattern(const ModelSpec& m) {
    std::string s;
    for (int b = 0; b < m.num_layers; ++b) {
        const std::string l = m.block_letters(b);
        if (l.size() != 1) return "";
        s += l;
    }
    return s;
}

void read_nemotron_h_layers(JsonObjectReader& r, const nlohmann::json& config, ModelSpec& m) {
    if (stated(config, "hybrid_override_pattern")) {
        m.block_kinds = block_kinds_from_pattern(r.get_string("hybrid_override_pattern"), r.file(),
                                                 r.field("hybrid_override_pattern"));
        r.ignore("layers_block_type");
        r.ignore("layer_types");
    } else {
        // configuration_nemotron_h.py's names; "mamba" and "attention" are the legacy ones
        // remap_legacy_layer_types renames (Mamba-2 is its "linear_attention").
        const char* key = stated(config, "layers_block_type") ? "layers_block_type" : "layer_types";
        if (!stated(config, key)) {
            throw InputError(r.file(), r.field("hybrid_override_pattern"),
                             "a nemotron_h config needs hybrid_override_pattern or layers_block_type");
        }
        m.block_kinds = read_type_list(r, key, "mamba, attention, mlp or moe", [](const std::string& t, BlockKind& k) {
            k.ffn = FfnKind::None;
            if (t == "mamba" || t == "linear_attention") k.mixer = MixerKind::Mamba2;
            else if (t == "attention" || t == "full_attention") k.mixer = MixerKind::Attention;
            else if (t == "mlp") { k.mixer = MixerKind::None; k.ffn = FfnKind::Dense; }
            else if (t == "moe") { k.mixer = MixerKind::None; k.ffn = FfnKind::Moe; }
            else return false;
            return true;
        });
    }
    // The pattern decides the layer count; transformers only warns when num_hidden_layers
    // disagrees, and so does this reader's caller (it keeps the pattern's).
    m.num_layers = static_cast<int>(m.block_kinds.size());
    auto& d = m.mamba;
    d.num_heads = static_cast<int>(r.get_int_or("mamba_num_heads", 128, 1, kMaxHeads));
    d.head_dim = r.get_int_or("mamba_head_dim", 64, 1, kMaxWidth);
    d.state_dim = r.get_int_or("ssm_state_size", 128, 1, kMaxWidth);
    // Old spellings (mamba_n_groups, mamba_d_conv, mamba_chunk_size) as __post_init__ maps them.
    d.num_groups = static_cast<int>(r.get_int_or(stated(config, "mamba_n_groups") ? "mamba_n_groups" : "n_groups", 8, 1, kMaxHeads));
    d.conv_kernel = static_cast<int>(r.get_int_or(stated(config, "mamba_d_conv") ? "mamba_d_conv" : "conv_kernel", 4, 1, 64));
    d.chunk_size = static_cast<int>(r.get_int_or(stated(config, "mamba_chunk_size") ? "mamba_chunk_size" : "chunk_size", 128, 1, 1 << 16));
    if (d.num_heads % d.num_groups != 0) {
        throw InputError(r.file(), r.field("n_groups"),
                         std::to_string(d.num_groups) + " groups do not divide " + std::to_string(d.num_heads) +
                             " Mamba heads");
    }
    if (r.get_bool_or("mamba_proj_bias", false)) {
        throw InputError(r.file(), r.field("mamba_proj_bias"), "Mamba projections with biases are not modelled");
    }
    if (!r.get_bool_or("use_conv_bias", true)) {
        throw InputError(r.file(), r.field("use_conv_bias"), "a Mamba convolution without bias is not modelled");
    }
}

void read_sparse_attention(JsonObjectReader& r, const nlohmann::json& config, ModelSpec& m) {
    auto& d = m.sparse_attention;
    d.index_heads = static_cast<int>(r.get_int("index_n_heads", 1, kMaxHeads));
    d.index_head_dim = r.get_int("index_head_dim", 1, kMaxWidth);
    d.topk = r.get_int("index_topk", 1, 1ll << 26);
    m.block_kinds.assign(static_cast<std::size_t>(m.num_layers), BlockKind{MixerKind::SparseAttention, FfnKind::Auto});
    if (stated(config, "mlp_layer_types")) {
        const auto kinds = read_type_list(r, "mlp_layer_types", "dense or sparse", [](const std::string& t, BlockKind& k) {
            if (t == "dense") k.ffn = FfnKind::Dense;
            else if (t == "sparse") k.ffn = FfnKind::Moe;
            else return false;
            return true;
        });
        if (static_cast<int>(kinds.size()) != m.num_layers) {
            throw InputError(r.file(), r.field("mlp_layer_types"),
                             "has " + std::to_string(kinds.size()) + " entries for " + std::to_string(m.num_layers) +
                                 " layers");
        }
        for (std::size_t i = 0; i < kinds.size(); ++i) m.block_kinds[i].ffn = kinds[i].ffn;
    }
    if (stated(config, "indexer_types")) {
        const auto kinds = read_type_list(r, "indexer_types", "full or shared", [](const std::string& t, BlockKind& k) {
            // A shared block reuses the previous block's top-k: attention as sparse, no scores.
            k.mixer = t == "full" ? MixerKind::SparseAttention : MixerKind::Attention;
            return t == "full" || t == "shared";
        });
        if (static_cast<int>(kinds.size()) != m.num_layers) {
            throw InputError(r.file(), r.field("indexer_types"),
                             "has " + std::to_string(kinds.size()) + " entries for " + std::to_string(m.num_layers) +
                                 " layers");
        }
        if (kinds.front().mixer != MixerKind::SparseAttention) {
            throw InputError(r.file(), r.field("indexer_types") + "[0]", "the first block has no indexer to share");
        }
        d.shared_index.clear();
        for (const auto& k : kinds) d.shared_index.push_back(k.mixer != MixerKind::SparseAttention);
    }
}

void write_hybrid_fields(const ModelSpec& m, nlohmann::json& j) {
    if (m.family == "qwen3_next") {
        nlohmann::json types = nlohmann::json::array();
        for (int b = 0; b < m.num_layers; ++b) {
            types.push_back(m.mixer_kind(b) == MixerKind::LinearAttention ? "linear_attention" : "full_attention");
        }
        j["layer_types"] = types;
        const auto& d = m.linear_attention;
        j["linear_num_key_heads"] = d.num_key_heads;
        j["linear_num_value_heads"] = d.num_value_heads;
        j["linear_key_head_dim"] = d.key_head_dim;
        j["linear_value_head_dim"] = d.value_head_dim;
        j["linear_conv_kernel_dim"] = d.conv_kernel;
    } else if (m.family == "nemotron_h") {
        j["hybrid_override_pattern"] = hybrid_pattern(m);
        const auto& d = m.mamba;
        j["mamba_num_heads"] = d.num_heads;
        j["mamba_head_dim"] = d.head_dim;
        j["ssm_state_size"] = d.state_dim;
        j["n_groups"] = d.num_groups;
        j["conv_kernel"] = d.conv_kernel;
        j["chunk_size"] = d.chunk_size;
    } else if (m.family == "deepseek_v32" || m.family == "glm_moe_dsa") {
        const auto& d = m.sparse_attention;
        j["index_n_heads"] = d.index_heads;
        j["index_head_dim"] = d.index_head_dim;
        j["index_topk"] = d.topk;
        bool explicit_ffn = false;
        for (const auto& k : m.block_kinds) explicit_ffn = explicit_ffn || k.ffn != FfnKind::Auto;
        if (explicit_ffn) {
            nlohmann::json types = nlohmann::json::array();
            for (int b = 0; b < m.num_layers; ++b) types.push_back(m.is_moe_block(b) ? "sparse" : "dense");
            j["mlp_layer_types"] = types;
        }
        if (!d.shared_index.empty()) {
            nlohmann::json types = nlohmann::json::array();
            for (bool s : d.shared_index) types.push_back(s ? "shared" : "full");
            j["indexer_types"] = types;
        }
    }
}

}  // namespace meshwork
