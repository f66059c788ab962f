// Validation issues in words (issue_words.h).
#include "gui/document/issue_words.h"

#include <QCoreApplication>
#include <QRegularExpression>

#include <map>

namespace meshwork::gui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("meshwork::gui::IssueWords", text); }

// The settings as the docks label them (Parallelism and Training docks).
const std::map<std::string, const char*>& labels() {
    static const std::map<std::string, const char*> table{
        {"gpus", "GPUs"},
        {"parallel", "Mesh"},
        {"parallel.tp", "TP"},
        {"parallel.pp", "PP"},
        {"parallel.cp", "CP"},
        {"parallel.ep", "EP"},
        {"parallel.etp", "ETP"},
        {"parallel.vpp", "VPP"},
        {"parallel.order", "Rank order"},
        {"parallel.sequence_parallel", "Sequence parallelism"},
        {"parallel.tp_comm_overlap", "TP comm overlap"},
        {"parallel.overlap_param_gather", "DP comm overlap"},
        {"parallel.overlap_grad_reduce", "DP comm overlap"},
        {"parallel.moe_a2a_overlap", "MoE A2A overlap"},
        {"parallel.moe_dispatcher", "MoE dispatch"},
        {"placement.layers_per_stage", "Pipeline split"},
        {"placement.experts_per_ep_rank", "Expert placement"},
        {"training.global_batch_size", "Global batch"},
        {"training.micro_batch_size", "Micro-batch"},
        {"training.seq_length", "Sequence length"},
        {"training.moe_capacity_factor", "Expert capacity"},
        {"training.moe_rank_capacity_factor", "Expert rank budget"},
        {"training.zero_stage", "ZeRO stage"},
        {"training.recompute", "Recompute"},
        {"training.recompute_num_layers", "Recomputed layers"},
        {"training.recompute_modules", "Recomputed submodules"},
        {"training.offload_optimizer", "Optimizer offload"},
        {"training.offload_params", "Weight offload"},
        {"training.dtype", "Precision"},
        {"training.grad_reduce_in_bf16", "Gradient reduction"},
        {"training.schedule", "Schedule"},
        {"training.cuda_graphs", "CUDA-graph kernels"},
        {"training.cuda_graph_modules", "Captured modules"},
    };
    return table;
}

// "placement.layers_per_stage[2]" -> ("placement.layers_per_stage", 2); index -1 when none.
std::pair<std::string, int> split_index(const std::string& field) {
    static const QRegularExpression indexed(R"(^(.*)\[(\d+)\]$)");
    const auto m = indexed.match(QString::fromStdString(field));
    if (!m.hasMatch()) return {field, -1};
    return {m.captured(1).toStdString(), m.captured(2).toInt()};
}

QString count_words(int n, const char* one, const char* many) { return n == 1 ? tr(one) : tr(many).arg(n); }

QString fallback(const std::string& field) {
    const auto dot = field.rfind('.');
    QString last = QString::fromStdString(dot == std::string::npos ? field : field.substr(dot + 1));
    last.replace('_', ' ');
    if (!last.isEmpty()) last[0] = last[0].toUpper();
    return last;
}

// Chunk i of the split, and the stage it runs on (chunks are dealt round the stages).
QString chunk_words(const Layout& layout, int i, bool capital) {
    const int pp = std::max(1, layout.parallel.mesh.pp);
    if (layout.parallel.vpp > 1) {
        return (capital ? tr("Chunk %1 (stage %2)") : tr("chunk %1 (stage %2)")).arg(i).arg(i % pp);
    }
    return (capital ? tr("Stage %1") : tr("stage %1")).arg(i);
}

}  // namespace

QString issue_subject(const std::string& field, const Layout& layout) {
    const auto [base, index] = split_index(field);
    if (base == "placement.layers_per_stage" && index >= 0) {
        const auto& split = layout.placement.layers_per_stage;
        QString words = chunk_words(layout, index, true);
        if (index < static_cast<int>(split.size())) {
            words += QString(" (%1)").arg(count_words(split[static_cast<std::size_t>(index)], "1 layer", "%1 layers"));
        }
        return words;
    }
    if (base == "placement.experts_per_ep_rank" && index >= 0) {
        const auto& placed = layout.placement.experts_per_ep_rank;
        QString words = tr("EP rank %1").arg(index);
        if (index < static_cast<int>(placed.size())) {
            words += QString(" (%1)").arg(count_words(static_cast<int>(placed[static_cast<std::size_t>(index)].size()),
                                                      "1 expert", "%1 experts"));
        }
        return words;
    }
    const auto it = labels().find(base);
    const QString subject = it != labels().end() ? tr(it->second) : fallback(base);
    return index >= 0 ? QString("%1 [%2]").arg(subject).arg(index) : subject;
}

QString refusal_in_words(const InputIssue& issue, const Layout& after) {
    const QString message = QString::fromStdString(issue.message);
    const auto [base, index] = split_index(issue.field);
    if (base == "placement.layers_per_stage" && index >= 0 &&
        index < static_cast<int>(after.placement.layers_per_stage.size())) {
        return tr("%1 would hold %2: %3")
            .arg(chunk_words(after, index, false),
                 count_words(after.placement.layers_per_stage[static_cast<std::size_t>(index)], "1 layer", "%1 layers"),
                 message);
    }
    if (base == "placement.experts_per_ep_rank" && index >= 0 &&
        index < static_cast<int>(after.placement.experts_per_ep_rank.size())) {
        return tr("EP rank %1 would hold %2: %3")
            .arg(index)
            .arg(count_words(static_cast<int>(after.placement.experts_per_ep_rank[static_cast<std::size_t>(index)].size()),
                             "1 expert", "%1 experts"),
                 message);
    }
    return QString("%1: %2").arg(issue_subject(issue.field, after), message);
}

}  // namespace meshwork::gui
