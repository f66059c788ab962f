#include "gui/training/recompute_controls.h"

#include <QComboBox>
#include <QAction>
#include <QFormLayout>
#include <QMenu>
#include <QSpinBox>
#include <QToolButton>

#include <algorithm>

#include "core/layout/layout_rules.h"
#include "gui/document/training_edits.h"
#include "gui/training/choice_box.h"

namespace meshwork::gui {

namespace {
// training.recompute (docs/cost-model.md, "Activation memory" and "Op-level selective
// checkpointing"): what each mode keeps, and the flag that runs it.
struct RecomputeMode {
    Recompute mode;
    const char* label;
    const char* tip;
};
const RecomputeMode kModes[] = {
    {Recompute::None, QT_TRANSLATE_NOOP("RecomputeControls", "None"),
     QT_TRANSLATE_NOOP("RecomputeControls", "Every activation the backward needs is kept (the default)")},
    {Recompute::Selective, QT_TRANSLATE_NOOP("RecomputeControls", "Selective (attention)"),
     QT_TRANSLATE_NOOP("RecomputeControls",
                       "Megatron-LM's selective recomputation: the core attention is rerun in the backward "
                       "instead of keeping its s×s scores (Korthikanti et al. 2022, §5; "
                       "--recompute-granularity selective). With flash attention the scores are not kept anyway: "
                       "nothing saved, the attention still rerun")},
    {Recompute::Full, QT_TRANSLATE_NOOP("RecomputeControls", "Full (whole layers)"),
     QT_TRANSLATE_NOOP("RecomputeControls",
                       "Only each layer's input is kept and the layer's forward is rerun in the backward: "
                       "the least activation memory, about a third more compute "
                       "(--recompute-granularity full)")},
    {Recompute::SelectiveOp, QT_TRANSLATE_NOOP("RecomputeControls", "Selective, op-level"),
     QT_TRANSLATE_NOOP("RecomputeControls",
                       "torchtitan's op-level selective activation checkpointing: the outputs of every other "
                       "matmul, of attention and of reduce-scatters kept, the rest rerun "
                       "(activation_checkpoint mode selective, selective_ac_option op)")},
};
}  // namespace

RecomputeControls::RecomputeControls(QFormLayout* form, QWidget* parent, std::function<const Layout&()> layout,
                                     Apply apply)
    : QObject(parent), layout_(std::move(layout)), apply_(std::move(apply)) {
    mode_ = new QComboBox(parent);
    mode_->setAccessibleName("recompute");
    for (const auto& m : kModes) {
        add_choice(mode_, tr(m.label), QString::fromStdString(to_string(m.mode)), tr(m.tip));
    }
    set_box_tip(mode_, tr("Which activations are recomputed in the backward instead of kept "
                         "(training.recompute; meshwork-cli --recompute). Default: %1")
                          .arg(QString::fromStdString(to_string(TrainingConfig{}.recompute))));
    form->addRow(tr("&Recompute"), mode_);
    connect(mode_, &QComboBox::activated, this, [this](int index) {
        if (syncing_ || index < 0) return;
        Recompute mode = Recompute::None;
        if (!parse_recompute(mode_->itemData(index).toString().toStdString(), mode)) return;
        apply_(set_recompute(layout_(), mode));
    });

    layers_ = new QSpinBox(parent);
    layers_->setAccessibleName("recompute_num_layers");
    layers_->setKeyboardTracking(false);
    layers_->setSpecialValueText(tr("all"));
    form->addRow(tr("Recomputed &layers"), layers_);
    connect(layers_, &QSpinBox::valueChanged, this, [this](int n) {
        if (syncing_) return;
        apply_(set_recompute_num_layers(layout_(), n));
    });

    // A menu of checkable modules: Space or Enter on the button opens it, the arrow keys walk
    // it, Enter toggles one.
    modules_ = new QToolButton(parent);
    modules_->setAccessibleName("recompute_modules");
    modules_->setPopupMode(QToolButton::InstantPopup);
    modules_->setToolButtonStyle(Qt::ToolButtonTextOnly);
    // Its text grows with the list: the row takes the form's width, never widens it.
    modules_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    modules_menu_ = new QMenu(modules_);
    modules_menu_->setToolTipsVisible(true);
    for (RecomputeModule m : kAllRecomputeModules) {
        auto* action = modules_menu_->addAction(QString::fromStdString(to_string(m)));
        action->setCheckable(true);
        action->setData(QString::fromStdString(to_string(m)));
        connect(action, &QAction::toggled, this, [this] {
            if (syncing_) return;
            std::vector<RecomputeModule> chosen;
            for (QAction* a : modules_menu_->actions()) {
                RecomputeModule mod{};
                if (a->isChecked() && parse_recompute_module(a->data().toString().toStdString(), mod)) {
                    chosen.push_back(mod);
                }
            }
            apply_(set_recompute_modules(layout_(), chosen));
        });
    }
    modules_->setMenu(modules_menu_);
    form->addRow(tr("Recomputed su&bmodules"), modules_);
}

void RecomputeControls::sync(const Layout& l) {
    syncing_ = true;
    select_choice(mode_, QString::fromStdString(to_string(l.training.recompute)));
    const auto chunks = l.stage_layers();
    const int most = chunks.empty() ? 0 : *std::max_element(chunks.begin(), chunks.end());
    layers_->setRange(0, std::max(most, l.training.recompute_num_layers));
    layers_->setValue(l.training.recompute_num_layers);
    // Open where the rule allows a count (full recomputation), or to clear one a file set.
    const bool open = rules::recompute_layers_need_full(l.training.recompute, 1) || l.training.recompute_num_layers > 0;
    layers_->setEnabled(open);
    layers_->setToolTip(open ? tr("Full recomputation of the first N layers of each model chunk, the others keep "
                                  "their activations (training.recompute_num_layers; Megatron-LM's "
                                  "--recompute-method block --recompute-num-layers N). Default: all")
                             : tr("Only full recomputation counts recomputed layers"));

    // Modules: open with selective recomputation (layout_rules.h recompute_modules_need_selective),
    // or to clear a list a file set; a module the model lacks is closed, saying why.
    const bool selective = l.training.recompute == Recompute::Selective;
    modules_->setEnabled(selective || !l.training.recompute_modules.empty());
    const RecomputeSet chosen(selective, l.training.recompute_modules);
    for (QAction* a : modules_menu_->actions()) {
        RecomputeModule mod{};
        if (!parse_recompute_module(a->data().toString().toStdString(), mod)) continue;
        const bool listed = std::find(l.training.recompute_modules.begin(), l.training.recompute_modules.end(), mod) !=
                            l.training.recompute_modules.end();
        a->setChecked(listed);
        QString why;
        if (!rules::mla_up_proj_needs_mla({mod}, l.model.uses_mla)) {
            why = tr("Needs multi-latent attention; this model has none");
        } else if ((mod == RecomputeModule::MoeAct || mod == RecomputeModule::Moe ||
                    mod == RecomputeModule::SharedExperts) && !l.model.is_moe()) {
            why = tr("Has no effect: this model has no MoE layers");
        }
        a->setEnabled(why.isEmpty() || listed);
        a->setToolTip(why.isEmpty() ? (chosen.has(mod) ? tr("Rerun in the backward") : tr("Kept")) : why);
    }
    modules_->setText(l.training.recompute_modules.empty()
                          ? tr("core_attn (default)")
                          : QString::fromStdString(join_recompute_modules(l.training.recompute_modules)));
    modules_->setToolTip(selective || !l.training.recompute_modules.empty()
                             ? tr("Modules whose activations selective recomputation drops after the forward and "
                                  "rebuilds before the backward (training.recompute_modules; Megatron-LM's "
                                  "--recompute-modules; meshwork-cli --recompute-modules). Default: core_attn")
                             : tr("Modules are recomputed only with selective recomputation"));
    syncing_ = false;
}

}  // namespace meshwork::gui
