#include "gui/mesh/axis_editor.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>

#include "gui/app/theme.h"
#include "gui/document/layout_document.h"
#include "gui/document/layout_edits.h"
#include "core/mesh/device_mesh.h"

namespace meshwork::gui {

namespace {
struct AxisRow {
    const char* axis;
    const char* label;
    const char* tip;
};
const AxisRow kAxes[] = {
    {"tp", "Tensor (TP)", "Tensor-parallel ranks per layer (usually inside a node)"},
    {"pp", "Pipeline (PP)", "Pipeline stages"},
    {"cp", "Context (CP)", "Context-parallel ranks splitting the sequence"},
    {"ep", "Expert (EP)", "Expert-parallel ranks (MoE models)"},
    {"etp", "Expert TP", "Tensor parallelism inside each expert"},
    {"vpp", "Virtual stages", "Model chunks per pipeline rank (interleaved schedule)"},
};
// Orders seen in practice; any permutation can be typed.
const char* const kOrders[] = {"tp-cp-ep-dp-pp", "tp-cp-dp-pp-ep", "tp-dp-cp-pp-ep", "tp-pp-cp-ep-dp",
                               "dp-tp-cp-ep-pp"};
}  // namespace

AxisEditor::AxisEditor(LayoutDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
    auto* form = new QFormLayout(this);
    form->setContentsMargins(8, 8, 8, 8);
    form->setLabelAlignment(Qt::AlignRight);
    for (const auto& row : kAxes) {
        auto* spin = new QSpinBox(this);
        spin->setRange(1, 16384);
        spin->setKeyboardTracking(false);
        spin->setToolTip(tr(row.tip));
        spin->setAccessibleName(row.axis);
        spins_[row.axis] = spin;
        form->addRow(tr(row.label), spin);
        const std::string axis = row.axis;
        connect(spin, &QSpinBox::valueChanged, this, [this, axis](int v) { axis_changed(axis, v); });
    }
    dp_ = new QLabel(this);
    dp_->setToolTip(tr("Data-parallel replicas: the GPUs divided by tp×pp×cp"));
    form->addRow(tr("Data (DP)"), dp_);
    world_ = new QLabel(this);
    form->addRow(tr("World"), world_);
    order_ = new QComboBox(this);
    order_->setEditable(true);
    order_->setInsertPolicy(QComboBox::NoInsert);
    for (const char* o : kOrders) order_->addItem(o);
    order_->setToolTip(tr("Rank order, fastest-varying axis first (Megatron's convention)"));
    form->addRow(tr("Rank order"), order_);
    connect(order_, &QComboBox::textActivated, this, &AxisEditor::order_changed);
    message_ = new QLabel(this);
    message_->setWordWrap(true);
    message_->hide();
    form->addRow(message_);
    connect(document_, &LayoutDocument::changed, this, &AxisEditor::sync_from_document);
}

QSpinBox* AxisEditor::spin_box(const std::string& axis) const {
    const auto it = spins_.find(axis);
    return it == spins_.end() ? nullptr : it->second;
}

QString AxisEditor::last_refusal() const { return message_->isVisible() ? message_->text() : QString(); }

void AxisEditor::sync_from_document() {
    if (!document_->has_layout()) return;
    const Layout& l = document_->layout();
    syncing_ = true;
    const auto& m = l.parallel.mesh;
    const std::map<std::string, int> values{{"tp", m.tp}, {"pp", m.pp}, {"cp", m.cp},
                                            {"ep", m.ep}, {"etp", m.etp}, {"vpp", l.parallel.vpp}};
    for (auto& [axis, spin] : spins_) spin->setValue(values.at(axis));
    spins_["ep"]->setEnabled(l.model.is_moe());
    spins_["etp"]->setEnabled(l.model.is_moe());
    dp_->setText(QString::number(m.dp));
    world_->setText(tr("%1 GPUs · %2 per node").arg(l.gpus).arg(l.cluster.gpus_per_node));
    order_->setCurrentText(QString::fromStdString(m.order));
    syncing_ = false;
}

void AxisEditor::axis_changed(const std::string& axis, int value) {
    if (syncing_ || !document_->has_layout()) return;
    const auto outcome = document_->apply(set_mesh_axis(document_->layout(), axis, value));
    if (outcome.accepted) {
        show_refusal({});
    } else {
        show_refusal(tr("%1 = %2 refused: %3").arg(QString::fromStdString(axis)).arg(value).arg(outcome.reason));
        sync_from_document();  // snap back
    }
}

void AxisEditor::order_changed(const QString& order) {
    if (syncing_ || !document_->has_layout()) return;
    if (!is_axis_order(order.toStdString())) {
        show_refusal(tr("“%1” is not an order of tp, cp, ep, dp, pp").arg(order));
        sync_from_document();
        return;
    }
    const auto outcome = document_->apply(set_axis_order(document_->layout(), order.toStdString()));
    show_refusal(outcome.accepted ? QString() : tr("Order refused: %1").arg(outcome.reason));
    if (!outcome.accepted) sync_from_document();
}

void AxisEditor::show_refusal(const QString& text) {
    message_->setVisible(!text.isEmpty());
    message_->setText(text);
    message_->setStyleSheet(QString("color: %1").arg(view_colours().error.name()));
}

}  // namespace meshwork::gui
