#include "core/export/megatron_hybrid.h"

#include <cmath>

namespace meshwork {

std::string megatron_hybrid_pattern_problem(const std::string& pattern) {
    if (pattern.empty()) return "an empty pattern: expected one letter per layer (M Mamba-2, * attention, - MLP, E MoE)";
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        const std::string at = "character " + std::to_string(i) + " '" + std::string(1, c) + "': ";
        switch (c) {
            case 'M': case '*': case '-': case 'E': break;
            case 'G':
                return at + "Gated DeltaNet layers: their dimension flags are not read yet";
            case 'D':
                return at + "DeepSeek sparse attention layers: their indexer flags are not read yet";
            case '+':
                return at + "MLA layers in a hybrid pattern are not read yet";
            case '|':
                return at + "pipeline segments ('|', the pattern's own stage layout) are not read yet; "
                            "give --pipeline-model-parallel-size and a pattern without '|'";
            case '/':
                return at + "multi-token-prediction depths ('/') are not read yet";
            default:
                return at + "not a layer of Megatron-LM's hybrid pattern (M, *, -, E, G, D, +, '|', '/')";
        }
    }
    return "";
}

std::string megatron_pattern_from_ratios(int num_layers, double attention_ratio, double mlp_ratio) {
    // Python's round() rounds halves to even, as std::nearbyint does in the default mode.
    const int attention_count = static_cast<int>(std::nearbyint(num_layers * attention_ratio));
    int mamba_count = num_layers - attention_count;
    const double section_len = static_cast<double>(mamba_count) / (attention_count + 1);
    std::string types(static_cast<std::size_t>(num_layers), 'M');
    double x = section_len;
    for (auto& t : types) {
        if (x < 0.5) {
            t = '*';
            x += section_len;
        } else {
            x -= 1;
        }
    }
    const int mlp_count = static_cast<int>(std::nearbyint(num_layers * mlp_ratio));
    if (mlp_count > 0) {
        mamba_count -= mlp_count;
        const double ratio = static_cast<double>(mamba_count) / mlp_count;
        x = ratio;
        for (auto& t : types) {
            if (t != 'M') continue;
            if (x < 0.5) {
                t = '-';
                x += ratio;
            } else {
                x -= 1;
            }
        }
    }
    return types;
}

}  // namespace meshwork
