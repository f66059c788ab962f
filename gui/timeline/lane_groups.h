// The timeline's rows: lanes grouped by mesh axis (a header row per pipeline stage and per
// data-parallel replica, from gui/ranks/rank_grouping.h), each group collapsible to one
// summary row. Without a mesh (or with one group level of size 1) rows are the lanes, in
// the source's order, and nothing else changes.
// Collapsing is view state, like zoom: it does not enter the layout's undo stack; toggling
// a group twice gives back exactly the rows it had, and the changes of many groups at once
// (every group, the ranks opened from the rank overview) can be stepped back (back()).
#pragma once

#include <unordered_map>
#include <vector>

#include "gui/ranks/rank_grouping.h"
#include "gui/timeline/timeline_source.h"

namespace meshwork::gui {

struct LaneRow {
    enum class Kind { Header, Lane, Summary };
    Kind kind = Kind::Lane;
    int lane = -1;   // Lane: the source's lane
    int group = -1;  // Header, Summary: index into grouping().groups; Lane: innermost group or -1
    int depth = 0;   // Header, Summary: the group's depth
};

class LaneGroups {
public:
    // Summary rows draw the compute streams of at most this many of a group's ranks,
    // spread over it, on one row (one query each per frame, whatever the group's size).
    // One: a summary row costs one dense lane, and a collapsed screen of 1,024 ranks at a
    // 1 ms window stays near the cost of an expanded one (docs/BENCHMARKS.md); the rank
    // overview, not the summary, is where a slow rank among many shows.
    static constexpr int kSummaryRanks = 1;
    // Sources with more lanes than this open with the innermost groups collapsed.
    static constexpr int kCollapseAboveLanes = 256;

    void build(const TimelineSource* source);
    [[nodiscard]] const std::vector<LaneRow>& rows() const { return rows_; }
    [[nodiscard]] int row_count() const { return static_cast<int>(rows_.size()); }
    [[nodiscard]] const RankGrouping& grouping() const { return grouping_; }
    [[nodiscard]] bool grouped() const { return !grouping_.groups.empty(); }
    // Changes with every change of rows (cache key for the view's items).
    [[nodiscard]] unsigned generation() const { return generation_; }

    [[nodiscard]] bool collapsed(int group) const { return collapsed_[static_cast<std::size_t>(group)] != 0; }
    void set_collapsed(int group, bool collapsed);
    void toggle(int group) { set_collapsed(group, !collapsed(group)); }
    void set_all_collapsed(bool collapsed);
    // Expands the groups that hold any of `ranks`, collapses the others; false when none
    // of `ranks` has lanes.
    bool show_only_ranks(const std::vector<int>& ranks);
    // Remembers the groups' state before a change of many at once; back() returns to it.
    void remember();
    // Returns to the state remember() saved last; false when there is none.
    bool back();
    [[nodiscard]] bool can_go_back() const { return !history_.empty(); }
    // Expands the groups that hold `lane` (to show it); its row after.
    int reveal_lane(int lane);

    [[nodiscard]] int row_of_lane(int lane) const;  // -1 when inside a collapsed group
    [[nodiscard]] int row_of_group(int group) const;  // its header row
    [[nodiscard]] const std::vector<int>& summary_lanes(int group) const {
        return summary_lanes_[static_cast<std::size_t>(group)];
    }
    // Lanes of the groups' ranks: every lane shown or summarised by rows [first, last].
    [[nodiscard]] std::vector<int> lanes_of_rows(int first, int last) const;
    [[nodiscard]] std::vector<int> lanes_of_group(int group) const;
    [[nodiscard]] int rank_count(int group) const { return grouping_.groups[static_cast<std::size_t>(group)].size(); }
    [[nodiscard]] int lane_count(int group) const;

private:
    void rebuild_rows();
    void add_rank_lanes(int grouping_row);

    const TimelineSource* source_ = nullptr;
    RankGrouping grouping_;
    std::unordered_map<int, std::vector<int>> lanes_of_rank_;  // in the source's order
    std::vector<char> collapsed_;                              // per group
    std::vector<std::vector<char>> history_;                   // remember()ed states, newest last
    std::vector<std::vector<int>> summary_lanes_;              // per group
    std::vector<LaneRow> rows_;
    std::vector<int> row_of_lane_;
    unsigned generation_ = 0;
};

}  // namespace meshwork::gui
