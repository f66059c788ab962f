#include "core/model/model_spec.h"

namespace meshwork {

bool ModelSpec::is_moe_block(int block) const {
    if (!is_moe() || block < moe.first_k_dense) return false;
    const int freq = moe.layer_freq > 0 ? moe.layer_freq : 1;
    return (block - moe.first_k_dense) % freq == 0;
}

int ModelSpec::num_moe_blocks() const {
    int n = 0;
    for (int b = 0; b < num_layers; ++b) n += is_moe_block(b) ? 1 : 0;
    return n;
}

std::string ModelSpec::attention_kind() const {
    if (uses_mla) return "MLA";
    if (num_kv_heads == num_heads) return "MHA";
    if (num_kv_heads == 1) return "MQA";
    return "GQA";
}

}  // namespace meshwork
