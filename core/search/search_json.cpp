#include "core/search/search_json.h"

#include "core/layout/layout_json.h"

namespace meshwork::search {

nlohmann::json search_result_to_json(const SearchResult& r) {
    nlohmann::json results = nlohmann::json::array();
    for (const SearchHit& h : r.results) {
        results.push_back({{"layout", layout_to_json(h.layout)},
                           {"label", candidate_label(h.candidate)},
                           {"step_time_s", h.step_time_s},
                           {"tokens_per_s", h.tokens_per_s},
                           {"mfu", h.mfu},
                           {"peak_bytes", h.peak_bytes},
                           {"bubble_fraction", h.estimate.bubble_fraction},
                           {"exposed_comm_s", h.estimate.exposed_comm_s}});
    }
    nlohmann::json closest = nlohmann::json::array();
    for (const NearMiss& m : r.closest) {
        closest.push_back({{"layout", layout_to_json(m.layout)},
                           {"label", candidate_label(m.candidate)},
                           {"peak_bytes", m.peak_bytes},
                           {"overflow_bytes", m.overflow_bytes}});
    }
    nlohmann::json rejected = nlohmann::json::object();
    for (const auto& [reason, n] : r.rejected) rejected[reason] = n;
    return {{"evaluated", r.evaluated}, {"rejected", rejected},
            {"results", results},       {"space_size", r.space_size},
            {"processed", r.processed}, {"cost_model_calls", r.cost_model_calls},
            {"cancelled", r.cancelled}, {"ranked_by", r.ranked_by},
            {"threads", r.threads},     {"elapsed_s", r.elapsed_s},
            {"closest", closest}};
}

}  // namespace meshwork::search
