#include <algorithm>
#include <utility>

#include "app/cli/verb.h"

namespace meshwork::cli {

namespace {
std::vector<std::pair<int, VerbFactory>>& registry() {
    static std::vector<std::pair<int, VerbFactory>> verbs;
    return verbs;
}
}  // namespace

bool register_verb(int rank, VerbFactory factory) {
    registry().emplace_back(rank, factory);
    return true;
}

std::vector<Verb> add_all_verbs(CLI::App& app) {
    auto sorted = registry();
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Verb> verbs;
    for (const auto& [rank, factory] : sorted) verbs.push_back(factory(app));
    return verbs;
}

}  // namespace meshwork::cli
