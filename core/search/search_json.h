// A search result as JSON: the keys of CLI.md (`evaluated`, `rejected`, `results[]` with
// `layout`, `step_time_s`, `mfu`, `peak_bytes`) and a few more the GUI shows.
#pragma once

#include <nlohmann/json.hpp>

#include "core/search/search.h"

namespace meshwork::search {

nlohmann::json search_result_to_json(const SearchResult& result);

}  // namespace meshwork::search
