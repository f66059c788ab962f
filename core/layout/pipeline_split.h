// Megatron-LM's pipeline splits, as rules on layer counts: the one owner of how
// --account-for-embedding/loss-in-pipeline-split and --decoder-first/last-pipeline-num-layers
// place transformer layers on the pp·vpp model chunks (chunk c = vpp rank · pp + pp rank,
// Placement::layers_per_stage's order). Used by the CLI flags, the Megatron importer and
// exporter, and validation. Upstream facts (Megatron-LM d98e8a64) in docs/upstream-megatron.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace meshwork {

// The embedding and/or the LM head + loss counted as one layer each
// (get_num_layers_to_build, transformer_block.py:148-159, 188-201): every pipeline rank
// holds (layers + e + l) / pp of them, split evenly over its vpp chunks; the first chunk of
// the first rank builds one transformer layer less for the embedding, the last chunk of the
// last rank one less for the loss — possibly none (an embedding-only or loss-only chunk).
// Empty with `error` set where Megatron-LM refuses: the counted layers not a multiple of pp
// (transformer_config.py:2382-2401), a rank's layers not a multiple of vpp (:2404-2415), or
// an end chunk left with fewer than zero (transformer_block.py:194-201).
std::vector<int> accounted_split(int layers, int pp, int vpp, bool embedding, bool loss, std::string& error);

// Uneven first / last pipeline ranks (transformer_block.py:103-146): the first rank holds
// `first` layers, the last `last`, the others the rest evenly; each rank's layers split
// evenly over its vpp chunks. Empty with `error` where transformer_config.py:2302-2368
// refuses: a count below 1, a count not a multiple of vpp, middle layers that do not split
// evenly over the middle ranks (or middle layers without middle ranks, or the reverse).
std::vector<int> uneven_split(int layers, int pp, int vpp, std::optional<int> first,
                              std::optional<int> last, std::string& error);

// How Megatron-LM's flags state a split, for the exporter: the accounted form (which of
// embedding / loss) or the uneven form (first / last rank counts, nullopt where the rank
// holds the middle count). `kind` None: neither (the split needs a layout string, or is even).
struct MegatronSplitForm {
    enum class Kind { None, Accounted, Uneven } kind = Kind::None;
    bool embedding = false, loss = false;
    std::optional<int> first, last;
};
MegatronSplitForm megatron_split_form(const std::vector<int>& layers_per_chunk, int layers, int pp, int vpp);

}  // namespace meshwork
