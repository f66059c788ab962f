#include "gui/dialogs/search_results_model.h"

#include "gui/app/format.h"
#include "gui/app/theme.h"

namespace meshwork::gui {

void SearchResultsModel::set_hits(std::vector<search::SearchHit> hits) {
    beginResetModel();
    hits_ = std::move(hits);
    endResetModel();
}

int SearchResultsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(hits_.size());
}

int SearchResultsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SearchResultsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const auto& h = hits_[static_cast<std::size_t>(index.row())];
    const auto& c = h.candidate;
    // The value a column sorts by, and its text.
    auto value = [&]() -> QVariant {
        switch (index.column()) {
            case Rank: return index.row() + 1;
            case Tp: return c.tp;
            case Pp: return c.pp;
            case Dp: return c.dp;
            case Cp: return c.cp;
            case Ep: return c.ep;
            case Vpp: return c.vpp;
            case Mbs: return c.micro_batch_size;
            case Schedule: return QString::fromStdString(to_string(c.schedule));
            case Recompute: return QString::fromStdString(to_string(c.recompute));
            case Sp: return c.sequence_parallel ? 1 : 0;
            case Zero: return c.zero_stage;
            case StepTime: return h.step_time_s;
            case TokensPerS: return h.tokens_per_s;
            case Mfu: return h.mfu;
            case PeakMemory: return static_cast<double>(h.peak_bytes);
            default: return {};
        }
    };
    switch (role) {
        case kSortRole: return value();
        case Qt::DisplayRole:
            switch (index.column()) {
                case Sp: return c.sequence_parallel ? tr("yes") : tr("no");
                case StepTime: return format_duration_ns(h.step_time_s * 1e9);
                case TokensPerS: return format_count(h.tokens_per_s);
                case Mfu: return QString::number(h.mfu * 100, 'f', 1) + " %";
                case PeakMemory: return format_bytes(static_cast<double>(h.peak_bytes));
                default: return value();
            }
        case Qt::TextAlignmentRole:
            return index.column() == Schedule || index.column() == Recompute
                       ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                       : QVariant(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::ToolTipRole: return QString::fromStdString(search::candidate_label(c));
        case Qt::ForegroundRole:
            if (index.column() == PeakMemory && h.layout.cluster.gpu.hbm_bytes > 0 &&
                static_cast<double>(h.peak_bytes) > 0.9 * static_cast<double>(h.layout.cluster.gpu.hbm_bytes)) {
                return view_colours().warning;  // fits, with under 10% to spare
            }
            return {};
        default: return {};
    }
}

QVariant SearchResultsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"#",        "TP",        "PP", "DP",   "CP",        "EP",       "VPP",      "MBS",
                                  "Schedule", "Recompute", "SP", "ZeRO", "Step time", "Tokens/s", "MFU", "Peak memory"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace meshwork::gui
