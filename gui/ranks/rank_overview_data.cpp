#include "gui/ranks/rank_overview_data.h"

#include <unordered_map>

namespace meshwork::gui {

RankOverviewData make_rank_overview_data(profiler::RankStepMatrix matrix, const DeviceMesh* mesh, QString title) {
    RankOverviewData data;
    data.grouping = group_ranks(matrix.ranks, mesh);
    std::unordered_map<int, int> index_of_rank;
    for (std::size_t i = 0; i < matrix.ranks.size(); ++i) index_of_rank[matrix.ranks[i]] = static_cast<int>(i);
    data.matrix_row.reserve(data.grouping.ranks.size());
    for (int rank : data.grouping.ranks) data.matrix_row.push_back(index_of_rank.at(rank));
    data.matrix = std::move(matrix);
    data.title = std::move(title);
    return data;
}

}  // namespace meshwork::gui
