// Megatron-LM's --pipeline-model-parallel-layout: a string such as "Et*3|(tt|)*6,t|tL" that
// places the embedding (E), transformer layers (t), MTP layers (m) and the loss (L) on the
// pp·vpp model chunks, '|' separating chunks in the order chunk = vpp_rank·pp + pp_rank
// (megatron/core/transformer/pipeline_parallel_layer_layout.py, parse_str_to_list).
#pragma once

#include <string>
#include <vector>

namespace meshwork {

struct PipelineLayout {
    std::vector<int> layers_per_chunk;  // transformer layers of each chunk, in chunk order
    int mtp_layers = 0;                 // 'm' entries
    int vpp = 1;                        // chunks / pp
};

// False with `error` set when the text is not a layout, its chunk count is not a multiple of
// `pp`, E is not the first or L not the last entry, or a middle chunk holds no transformer
// layer (the end chunks may hold only the embedding or only the loss).
bool parse_pipeline_layout(const std::string& text, int pp, PipelineLayout& out, std::string& error);

// The layout string of a split: "Et*a|t*b|...|t*zL" (E on the first chunk, L on the last;
// "t" for one layer, nothing for none),
// with the model's MTP layers as "m" in the last chunk after its transformer layers
// ("...|t*zmL"): Megatron-LM counts them against --mtp-num-layers.
std::string format_pipeline_layout(const std::vector<int>& layers_per_chunk, int mtp_layers);

}  // namespace meshwork
