// The search dialog's table: one row per layout found, best first; numeric columns sort by
// value (Qt::UserRole) through a QSortFilterProxyModel, not by their text.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "core/search/search.h"

namespace meshwork::gui {

class SearchResultsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Rank, Tp, Pp, Dp, Cp, Ep, Vpp, Mbs, Schedule, Recompute, Sp, Zero, StepTime, TokensPerS, Mfu, PeakMemory, ColumnCount };
    static constexpr int kSortRole = Qt::UserRole;

    using QAbstractTableModel::QAbstractTableModel;
    void set_hits(std::vector<search::SearchHit> hits);
    [[nodiscard]] const search::SearchHit& hit(int row) const { return hits_.at(static_cast<std::size_t>(row)); }

    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<search::SearchHit> hits_;
};

}  // namespace meshwork::gui
