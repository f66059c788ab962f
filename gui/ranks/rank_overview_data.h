// What the rank overview shows: a RankStepMatrix and its rows grouped by mesh coordinates.
// Built off the GUI thread (rank_steps_loader.h) or directly (tests, benchmarks).
#pragma once

#include <QString>

#include "gui/ranks/rank_grouping.h"
#include "profiler/analysis/rank_steps.h"

namespace meshwork::gui {

struct RankOverviewData {
    profiler::RankStepMatrix matrix;
    RankGrouping grouping;            // over matrix.ranks
    std::vector<int> matrix_row;      // per grouping row: the row of matrix.ranks it shows
    QString title;                    // the trace's file name
    QString layout_error;             // why the layout the trace carries was not used; empty when none

    [[nodiscard]] const profiler::RankStepCell& cell(int row, int step_index) const {
        return matrix.at(static_cast<std::size_t>(matrix_row[static_cast<std::size_t>(row)]),
                         static_cast<std::size_t>(step_index));
    }
};

// Groups the matrix's ranks by `mesh` (null: rank order).
RankOverviewData make_rank_overview_data(profiler::RankStepMatrix matrix, const DeviceMesh* mesh, QString title);

}  // namespace meshwork::gui
