#include "gui/timeline/lane_groups.h"

#include <algorithm>
#include <unordered_set>

namespace meshwork::gui {

void LaneGroups::build(const TimelineSource* source) {
    source_ = source;
    lanes_of_rank_.clear();
    std::vector<int> ranks;
    const int lanes = source ? source->lane_count() : 0;
    for (int lane = 0; lane < lanes; ++lane) {
        auto& of_rank = lanes_of_rank_[source->lane(lane).rank];
        if (of_rank.empty()) ranks.push_back(source->lane(lane).rank);
        of_rank.push_back(lane);
    }
    grouping_ = group_ranks(std::move(ranks), source ? source->mesh() : nullptr);
    const auto& groups = grouping_.groups;
    collapsed_.assign(groups.size(), 0);
    history_.clear();
    summary_lanes_.assign(groups.size(), {});
    for (std::size_t g = 0; g < groups.size(); ++g) {
        // A few ranks spread over the group, each by its compute stream (its first lane
        // when it has none): the summary's cost does not grow with the group.
        const auto ranks_of = grouping_.ranks_of(groups[g]);
        const int n = static_cast<int>(ranks_of.size());
        const int k = std::min(n, kSummaryRanks);
        for (int i = 0; i < k; ++i) {
            const int rank = ranks_of[static_cast<std::size_t>(k == 1 ? 0 : i * (n - 1) / (k - 1))];
            const auto& of_rank = lanes_of_rank_.at(rank);
            const auto compute = std::find_if(of_rank.begin(), of_rank.end(), [&](int lane) {
                return source->lane(lane).kind == TrackKind::ComputeStream;
            });
            summary_lanes_[g].push_back(compute != of_rank.end() ? *compute : of_rank.front());
        }
        if (lanes > kCollapseAboveLanes && groups[g].depth == grouping_.depth_count - 1) collapsed_[g] = 1;
    }
    rebuild_rows();
}

void LaneGroups::set_collapsed(int group, bool collapsed) {
    if (group < 0 || group >= static_cast<int>(collapsed_.size()) || this->collapsed(group) == collapsed) return;
    collapsed_[static_cast<std::size_t>(group)] = collapsed ? 1 : 0;
    rebuild_rows();
}

void LaneGroups::remember() {
    constexpr std::size_t kDepth = 32;  // enough to walk back through a session's jumps
    if (history_.size() == kDepth) history_.erase(history_.begin());
    history_.push_back(collapsed_);
}

bool LaneGroups::back() {
    if (history_.empty()) return false;
    collapsed_ = std::move(history_.back());
    history_.pop_back();
    rebuild_rows();
    return true;
}

void LaneGroups::set_all_collapsed(bool collapsed) {
    std::fill(collapsed_.begin(), collapsed_.end(), collapsed ? 1 : 0);
    rebuild_rows();
}

bool LaneGroups::show_only_ranks(const std::vector<int>& ranks) {
    std::vector<int> rows;
    for (int rank : ranks) {
        if (lanes_of_rank_.count(rank) != 0) rows.push_back(grouping_.row_of(rank));
    }
    if (rows.empty()) return false;
    for (std::size_t g = 0; g < grouping_.groups.size(); ++g) {
        const auto& group = grouping_.groups[g];
        const bool holds = std::any_of(rows.begin(), rows.end(),
                                       [&](int row) { return row >= group.first_row && row <= group.last_row; });
        collapsed_[g] = holds ? 0 : 1;
    }
    rebuild_rows();
    return true;
}

int LaneGroups::reveal_lane(int lane) {
    if (!source_ || lane < 0 || lane >= source_->lane_count()) return -1;
    if (row_of_lane(lane) >= 0) return row_of_lane(lane);
    const int row = grouping_.row_of(source_->lane(lane).rank);
    for (std::size_t g = 0; g < grouping_.groups.size(); ++g) {
        const auto& group = grouping_.groups[g];
        if (row >= group.first_row && row <= group.last_row) collapsed_[g] = 0;
    }
    rebuild_rows();
    return row_of_lane(lane);
}

int LaneGroups::row_of_lane(int lane) const {
    return lane >= 0 && lane < static_cast<int>(row_of_lane_.size()) ? row_of_lane_[static_cast<std::size_t>(lane)] : -1;
}

int LaneGroups::row_of_group(int group) const {
    for (int row = 0; row < row_count(); ++row) {
        const auto& r = rows_[static_cast<std::size_t>(row)];
        if (r.kind == LaneRow::Kind::Header && r.group == group) return row;
    }
    return -1;
}

std::vector<int> LaneGroups::lanes_of_group(int group) const {
    std::vector<int> lanes;
    const auto& g = grouping_.groups[static_cast<std::size_t>(group)];
    for (int row = g.first_row; row <= g.last_row; ++row) {
        const auto& of_rank = lanes_of_rank_.at(grouping_.ranks[static_cast<std::size_t>(row)]);
        lanes.insert(lanes.end(), of_rank.begin(), of_rank.end());
    }
    return lanes;
}

int LaneGroups::lane_count(int group) const { return static_cast<int>(lanes_of_group(group).size()); }

std::vector<int> LaneGroups::lanes_of_rows(int first, int last) const {
    std::vector<int> lanes;
    for (int row = std::max(0, first); row <= std::min(last, row_count() - 1); ++row) {
        const auto& r = rows_[static_cast<std::size_t>(row)];
        if (r.kind == LaneRow::Kind::Lane) {
            lanes.push_back(r.lane);
        } else if (r.kind == LaneRow::Kind::Summary) {
            const auto of_group = lanes_of_group(r.group);
            lanes.insert(lanes.end(), of_group.begin(), of_group.end());
        }
    }
    std::sort(lanes.begin(), lanes.end());
    lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
    return lanes;
}

void LaneGroups::add_rank_lanes(int grouping_row) {
    const int group = grouping_.innermost_group_of_row(grouping_row);
    for (int lane : lanes_of_rank_.at(grouping_.ranks[static_cast<std::size_t>(grouping_row)])) {
        row_of_lane_[static_cast<std::size_t>(lane)] = row_count();
        rows_.push_back({LaneRow::Kind::Lane, lane, group, 0});
    }
}

void LaneGroups::rebuild_rows() {
    ++generation_;
    rows_.clear();
    row_of_lane_.assign(static_cast<std::size_t>(source_ ? source_->lane_count() : 0), -1);
    if (!grouped()) {
        for (int lane = 0; lane < static_cast<int>(row_of_lane_.size()); ++lane) {
            row_of_lane_[static_cast<std::size_t>(lane)] = lane;
            rows_.push_back({LaneRow::Kind::Lane, lane, -1, 0});
        }
        return;
    }
    const auto& groups = grouping_.groups;
    std::size_t next_group = 0;
    int row = 0;
    while (row < grouping_.unplaced_first_row) {
        // Headers of the groups that start at this rank, outermost first (pre-order).
        bool skipped = false;
        while (next_group < groups.size() && groups[next_group].first_row == row) {
            const auto g = next_group++;
            rows_.push_back({LaneRow::Kind::Header, -1, static_cast<int>(g), groups[g].depth});
            if (collapsed_[g] != 0) {
                rows_.push_back({LaneRow::Kind::Summary, -1, static_cast<int>(g), groups[g].depth});
                row = groups[g].last_row + 1;
                while (next_group < groups.size() && groups[next_group].first_row < row) ++next_group;
                skipped = true;
                break;
            }
        }
        if (skipped) continue;
        add_rank_lanes(row++);
    }
    for (; row < static_cast<int>(grouping_.ranks.size()); ++row) add_rank_lanes(row);
}

}  // namespace meshwork::gui
