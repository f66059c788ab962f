#include "core/layout/pipeline_split.h"

namespace meshwork {

namespace {

std::string str(long long v) { return std::to_string(v); }

// Every rank's layers dealt evenly over its vpp chunks (chunk c on rank c % pp).
std::vector<int> per_chunk(const std::vector<int>& per_rank, int vpp) {
    const auto pp = per_rank.size();
    std::vector<int> out(pp * static_cast<std::size_t>(vpp));
    for (std::size_t c = 0; c < out.size(); ++c) out[c] = per_rank[c % pp] / vpp;
    return out;
}

}  // namespace

std::vector<int> accounted_split(int layers, int pp, int vpp, bool embedding, bool loss, std::string& error) {
    error.clear();
    if (pp < 1 || vpp < 1 || layers < 1) {
        error = "needs layers, pp and vpp of at least 1";
        return {};
    }
    const int counted = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
    if (counted % pp != 0) {
        error = str(counted) + " layers (" + str(layers) + " transformer layers" + (embedding ? " + the embedding" : "") +
                (loss ? " + the loss" : "") + ") do not split evenly over pp = " + str(pp);
        return {};
    }
    const int per_rank = counted / pp;
    if (per_rank % vpp != 0) {
        error = str(per_rank) + " layers per pipeline rank do not split evenly over vpp = " + str(vpp) + " chunks";
        return {};
    }
    std::vector<int> out = per_chunk(std::vector<int>(static_cast<std::size_t>(pp), per_rank), vpp);
    if (embedding) --out.front();
    if (loss) --out.back();
    if (out.front() < 0 || out.back() < 0) {
        error = "an end chunk would hold fewer than zero transformer layers";
        return {};
    }
    return out;
}

std::vector<int> uneven_split(int layers, int pp, int vpp, std::optional<int> first, std::optional<int> last,
                              std::string& error) {
    error.clear();
    if (pp < 2) {
        error = "uneven first/last pipeline ranks need pp ≥ 2";
        return {};
    }
    if (vpp < 1 || layers < 1) {
        error = "needs layers and vpp of at least 1";
        return {};
    }
    int middle_layers = layers;
    int middle_ranks = pp;
    for (const auto& [count, which] : {std::pair{first, "first"}, std::pair{last, "last"}}) {
        if (!count) continue;
        if (*count < 1) {
            error = std::string("the ") + which + " rank's " + str(*count) + " layers must be at least 1";
            return {};
        }
        if (*count % vpp != 0) {
            error = std::string("the ") + which + " rank's " + str(*count) + " layers do not split evenly over vpp = " +
                    str(vpp) + " chunks";
            return {};
        }
        middle_layers -= *count;
        --middle_ranks;
    }
    if (middle_layers < 0 || (middle_layers > 0) != (middle_ranks > 0)) {
        error = str(middle_layers) + " layers left for " + str(middle_ranks) + " middle pipeline ranks";
        return {};
    }
    const int middle = middle_ranks > 0 ? middle_layers / middle_ranks : 0;
    if (middle_ranks > 0 && (middle_layers % middle_ranks != 0 || middle % vpp != 0)) {
        error = str(middle_layers) + " middle layers do not split evenly over " + str(middle_ranks) +
                " middle pipeline ranks × vpp = " + str(vpp) + " chunks";
        return {};
    }
    std::vector<int> per_rank(static_cast<std::size_t>(pp), middle);
    if (first) per_rank.front() = *first;
    if (last) per_rank.back() = *last;
    return per_chunk(per_rank, vpp);
}

MegatronSplitForm megatron_split_form(const std::vector<int>& split, int layers, int pp, int vpp) {
    MegatronSplitForm form;
    if (pp < 2 || vpp < 1 || split.size() != static_cast<std::size_t>(pp) * static_cast<std::size_t>(vpp)) {
        return form;
    }
    std::string error;
    for (const auto& [e, l] : {std::pair{true, true}, std::pair{true, false}, std::pair{false, true}}) {
        if (accounted_split(layers, pp, vpp, e, l, error) == split) {
            form.kind = MegatronSplitForm::Kind::Accounted;
            form.embedding = e;
            form.loss = l;
            return form;
        }
    }
    // Uneven: each rank's chunks equal, the middle ranks equal.
    std::vector<int> per_rank(static_cast<std::size_t>(pp), 0);
    for (std::size_t c = 0; c < split.size(); ++c) {
        if (split[c] != split[c % per_rank.size()]) return form;
        per_rank[c % per_rank.size()] += split[c];
    }
    const bool has_middle = pp > 2;
    const int middle = has_middle ? per_rank[1] : 0;
    std::optional<int> first, last;
    if (!has_middle || per_rank.front() != middle) first = per_rank.front();
    if (!has_middle || per_rank.back() != middle) last = per_rank.back();
    if (!first && !last) return form;  // even over the ranks: no uneven flags
    if (uneven_split(layers, pp, vpp, first, last, error) != split) return form;
    form.kind = MegatronSplitForm::Kind::Uneven;
    form.first = first;
    form.last = last;
    return form;
}

}  // namespace meshwork
