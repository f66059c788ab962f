// The Training dock as an engineer uses it: every setting reached from the keyboard, each
// change one undo step named after the setting, the estimate moving the way the setting
// models it, and every choice a layout rule forbids closed, with the rule's reason.
#include <QtTest>

#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QTimer>
#include <QToolButton>
#include <QToolButton>
#include <QProcess>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QUndoStack>

#include <functional>

#include "core/cost/cost_model.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"
#include "gui/document/layout_document.h"
#include "gui/document/training_edits.h"
#include "gui/estimate/assessment_runner.h"
#include "gui/estimate/estimate_panel.h"
#include "gui/mainwindow/main_window.h"
#include "gui/mesh/axis_editor.h"
#include "gui/model/model_palette.h"
#include "gui/training/choice_box.h"
#include "gui/training/recompute_controls.h"
#include "gui/training/training_editor.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {
QString bundled(const char* name) { return QString(MESHWORK_RESOURCES_DIR) + "/layouts/" + name + ".json"; }
Layout bundled_layout(const char* name) { return load_layout(bundled(name).toStdString()); }

// A window on `layout` with the Training dock raised and the first estimate shown.
struct Workbench {
    MainWindow window;
    explicit Workbench(const char* layout) {
        if (!window.open_layout(bundled(layout))) qFatal("cannot open %s", layout);
        window.raise_dock("training");
        window.show();
        if (!QTest::qWaitForWindowExposed(&window)) qFatal("window not exposed");
        window.estimate_panel()->runner()->wait();
        QTRY_VERIFY_WITH_TIMEOUT(window.estimate_panel()->current().has_value(), 10000);
    }
    TrainingEditor* editor() const { return window.training_editor(); }
    LayoutDocument* doc() const { return window.document(); }
    QUndoStack* undo() const { return window.document()->undo_stack(); }
    const Layout& layout() const { return window.document()->layout(); }
    // The estimate panel's figure after the assessment of the current layout has arrived.
    double figure(const char* key) const {
        const auto& a = window.estimate_panel()->current();
        for (const auto& f : a->figures) {
            if (f.key == key) return f.value;
        }
        return -1;
    }
};

// Runs `edit` (a key press on a control) and waits for the estimate of its result.
void edit_and_wait(Workbench& w, const std::function<void()>& edit) {
    QSignalSpy assessed(w.window.estimate_panel(), &EstimatePanel::assessed);
    edit();
    QTRY_VERIFY_WITH_TIMEOUT(!assessed.isEmpty(), 10000);
}

int index_of(const QComboBox* box, const char* data) { return box->findData(QString(data)); }
}  // namespace

class TstTraining : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("MeshworkTests");
        QCoreApplication::setApplicationName("tst_gui_training");
        QSettings().clear();
    }

    // The generic edit names the setting and the value; leaving full recomputation clears
    // its layer count (the rule), and the pipeline split follows Megatron-LM's rules.
    void edits_name_the_setting_and_keep_the_rules() {
        const Layout l = bundled_layout("llama3-70b-h100-64");
        const auto full = set_recompute(l, Recompute::Full);
        QCOMPARE(full.description, std::string("Set recompute to full"));
        QCOMPARE(full.layout.training.recompute, Recompute::Full);
        const auto two = set_recompute_num_layers(full.layout, 2);
        QCOMPARE(two.description, std::string("Set recomputed layers per chunk to 2"));
        const auto back = set_recompute(two.layout, Recompute::Selective);
        QCOMPARE(back.layout.training.recompute_num_layers, 0);
        QVERIFY(validate_layout(back.layout, "test").valid());
        QCOMPARE(set_zero_stage(l, 3).description, std::string("Set ZeRO stage to 3"));
        QVERIFY(!set_zero_stage(l, 4).refused.empty());
        QCOMPARE(set_flash_attention(l, false).description, std::string("Set flash attention to off"));

        // 80 layers over pp 4: the first rank lighter, the last heavier.
        PipelineSplitRule uneven{PipelineSplitRule::Kind::Uneven, false, false, 19, 21};
        const auto split = set_pipeline_split(l, uneven);
        QVERIFY(split.refused.empty());
        QCOMPARE(split.layout.placement.layers_per_stage, (std::vector<int>{19, 20, 20, 21}));
        QCOMPARE(split.description, std::string("Set pipeline split to first 19, last 21 layers"));
        const auto rule = pipeline_split_rule(split.layout);
        QVERIFY(rule && rule->kind == PipelineSplitRule::Kind::Uneven && rule->first == 19 && rule->last == 21);
        // Megatron-LM refuses 81 counted layers over 4 ranks: so does the edit, with its reason.
        const auto counted = set_pipeline_split(l, {PipelineSplitRule::Kind::Accounted, true, false, {}, {}});
        QVERIFY2(QString::fromStdString(counted.refused).contains("do not split evenly over pp = 4"),
                 counted.refused.c_str());
        // The file spells the even split out: choosing even changes nothing.
        QVERIFY(set_pipeline_split(l, {}).layout == l);
        // Llama 3.1 405B's split is the accounted one.
        const auto big = pipeline_split_rule(bundled_layout("llama3.1-405b-h100-16384"));
        QVERIFY(big && big->kind == PipelineSplitRule::Kind::Accounted && big->embedding && big->loss);
    }

    // Full recomputation from the keyboard (its mnemonic, then the arrow keys): peak memory
    // falls and the step takes longer; undo and redo restore each layout exactly.
    void full_recompute_lowers_memory_and_raises_step_time() {
        Workbench w("llama3-70b-h100-64");  // selective recompute
        const Layout opened = w.layout();
        const double peak = w.figure("peak_bytes");
        const double step = w.figure("step_time_s");
        QVERIFY(peak > 0 && step > 0);
        auto* box = w.editor()->recompute()->mode_box();
        QCOMPARE(box->currentData().toString(), QString("selective"));

        w.window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w.window));
        QTest::keyClick(&w.window, Qt::Key_R, Qt::AltModifier);  // "&Recompute"
        QCOMPARE(QApplication::focusWidget(), box);
        edit_and_wait(w, [&] { QTest::keyClick(box, Qt::Key_Down); });
        QCOMPARE(w.layout().training.recompute, Recompute::Full);
        QCOMPARE(w.undo()->undoText(), QString("Set recompute to full"));
        QCOMPARE(w.undo()->count(), 1);
        const double full_peak = w.figure("peak_bytes");
        const double full_step = w.figure("step_time_s");
        qInfo("selective -> full recompute: peak %.2f -> %.2f GiB, step %.3f -> %.3f s", peak / (1 << 30),
              full_peak / (1 << 30), step, full_step);
        QVERIFY2(full_peak < peak * 0.9, qPrintable(QString("%1 vs %2 bytes").arg(full_peak).arg(peak)));
        QVERIFY2(full_step > step * 1.05, qPrintable(QString("%1 vs %2 s").arg(full_step).arg(step)));

        // The layer count opens with full recomputation: recomputing fewer layers keeps more.
        auto* layers = w.editor()->recompute()->layers_box();
        QVERIFY(layers->isEnabled());
        QCOMPARE(layers->value(), 0);
        QCOMPARE(layers->text(), QString("all"));
        edit_and_wait(w, [&] {
            layers->setFocus();
            QTest::keyClick(layers, Qt::Key_Up);
        });
        QCOMPARE(w.layout().training.recompute_num_layers, 1);
        QVERIFY(w.figure("peak_bytes") > full_peak);

        edit_and_wait(w, [&] { w.undo()->undo(); });
        QCOMPARE(w.figure("peak_bytes"), full_peak);
        edit_and_wait(w, [&] { w.undo()->undo(); });
        QVERIFY(w.layout() == opened);
        QCOMPARE(box->currentData().toString(), QString("selective"));
        QVERIFY(!layers->isEnabled());
        QCOMPARE(w.figure("peak_bytes"), peak);
        QCOMPARE(w.figure("step_time_s"), step);
        edit_and_wait(w, [&] { w.undo()->redo(); });
        QCOMPARE(w.layout().training.recompute, Recompute::Full);
        QCOMPARE(w.figure("peak_bytes"), full_peak);
    }

    // Module-level recomputation (Megatron-LM's --recompute-modules) from the dock: its row is
    // reached by its mnemonic, a module checked in its menu is one undo step that lowers the
    // peak and lengthens the step, modules the model lacks are closed saying why, and leaving
    // selective recomputation clears the list and closes the row.
    void recompute_modules_menu_is_an_edit() {
        Workbench w("llama3-70b-h100-64");  // selective recompute, dense, no MLA
        const Layout opened = w.layout();
        const double peak = w.figure("peak_bytes");
        const double step = w.figure("step_time_s");
        auto* button = w.editor()->recompute()->modules_button();
        QVERIFY(button->isEnabled());
        QVERIFY(button->text().startsWith("core_attn"));
        w.window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w.window));
        auto* menu = w.editor()->recompute()->modules_menu();
        QAction* mlp = nullptr;
        for (QAction* a : menu->actions()) {
            const QString name = a->data().toString();
            if (name == "mlp") mlp = a;
            if (name == "mla_up_proj" || name == "moe_act" || name == "moe" || name == "shared_experts") {
                QVERIFY2(!a->isEnabled(), qPrintable(name));
                QVERIFY(!a->toolTip().isEmpty());
            }
        }
        QVERIFY(mlp && mlp->isEnabled() && !mlp->isChecked());
        // Alt+B clicks the row's button, which opens the menu (a nested event loop): the arrow
        // keys walk the open modules (core_attn, layernorm, mlp) and Enter checks mlp.
        QTimer keys;
        keys.setInterval(20);
        QAction* walked_to = nullptr;
        connect(&keys, &QTimer::timeout, &keys, [&] {
            if (!menu->isVisible()) return;
            keys.stop();
            for (int i = 0; i < 3; ++i) QTest::keyClick(menu, Qt::Key_Down);
            walked_to = menu->activeAction();
            // Never leave the menu open: a wrong walk closes it (the checks below then fail).
            QTest::keyClick(menu, walked_to == mlp ? Qt::Key_Return : Qt::Key_Escape);
        });
        keys.start();
        edit_and_wait(w, [&] { QTest::keyClick(&w.window, Qt::Key_B, Qt::AltModifier); });  // "Recomputed su&bmodules"
        QVERIFY(!keys.isActive());
        QCOMPARE(walked_to, mlp);
        QVERIFY(!menu->isVisible());
        QCOMPARE(w.layout().training.recompute_modules, std::vector<RecomputeModule>{RecomputeModule::Mlp});
        QCOMPARE(w.undo()->undoText(), QString("Set recompute modules to mlp"));
        QCOMPARE(button->text(), QString("mlp"));
        const double mlp_peak = w.figure("peak_bytes");
        const double mlp_step = w.figure("step_time_s");
        qInfo("recompute modules core_attn -> mlp: peak %.2f -> %.2f GiB, step %.3f -> %.3f s", peak / (1 << 30),
              mlp_peak / (1 << 30), step, mlp_step);
        QVERIFY2(mlp_peak < peak, qPrintable(QString("%1 vs %2 bytes").arg(mlp_peak).arg(peak)));
        QVERIFY2(mlp_step > step, qPrintable(QString("%1 vs %2 s").arg(mlp_step).arg(step)));

        // Full recomputation clears the modules and closes the row; undo brings both back.
        auto* box = w.editor()->recompute()->mode_box();
        edit_and_wait(w, [&] {
            box->setFocus();
            QTest::keyClick(box, Qt::Key_Down);
        });
        QCOMPARE(w.layout().training.recompute, Recompute::Full);
        QVERIFY(w.layout().training.recompute_modules.empty());
        QVERIFY(!button->isEnabled());
        edit_and_wait(w, [&] { w.undo()->undo(); });
        QCOMPARE(w.layout().training.recompute_modules, std::vector<RecomputeModule>{RecomputeModule::Mlp});
        QVERIFY(button->isEnabled() && mlp->isChecked());
        edit_and_wait(w, [&] { w.undo()->undo(); });
        QVERIFY(w.layout() == opened);
        QVERIFY(!mlp->isChecked());
        QCOMPARE(w.figure("peak_bytes"), peak);
    }

    // The expert rank budget (training.moe_rank_capacity_factor) sits under Expert capacity:
    // closed on a dense model and on a dispatcher other than HybridEP, saying why.
    void rank_budget_is_closed_without_hybridep() {
        Workbench dense("llama3-70b-h100-64");
        QVERIFY(!dense.editor()->rank_capacity_box()->isEnabled());
        QVERIFY(dense.editor()->rank_capacity_box()->toolTip().contains("no experts"));
        Workbench moe("mixtral-8x7b-h100-64");
        QVERIFY(moe.layout().parallel.moe_flex_backend != MoeFlexBackend::HybridEP ||
                moe.layout().parallel.moe_dispatcher != MoeDispatcher::Flex);
        QVERIFY(!moe.editor()->rank_capacity_box()->isEnabled());
        QVERIFY(moe.editor()->rank_capacity_box()->toolTip().contains("HybridEP"));
    }

    // Captured modules (training.cuda_graph_modules): open with per-layer graphs only; checking
    // attn is one undoable edit that the layout and the button's text follow.
    void cuda_graph_modules_menu_is_an_edit() {
        Workbench w("llama3-70b-h100-64");
        const Layout opened = w.layout();
        QToolButton* button = nullptr;
        for (auto* b : w.editor()->findChildren<QToolButton*>()) {
            if (b->accessibleName() == "cuda_graph_modules") button = b;
        }
        QVERIFY(button && button->menu());
        QVERIFY(!button->isEnabled());  // no CUDA graphs in this layout
        QComboBox* graphs = w.editor()->cuda_graphs_box();
        edit_and_wait(w, [&] {
            graphs->setCurrentIndex(index_of(graphs, "per-layer"));
            emit graphs->activated(graphs->currentIndex());
        });
        QCOMPARE(w.layout().training.cuda_graphs, CudaGraphs::PerLayer);
        QVERIFY(button->isEnabled());
        QCOMPARE(button->text(), QString("Whole layer"));
        QAction* attn = nullptr;
        for (QAction* a : button->menu()->actions()) {
            if (a->text() == "attn") attn = a;
        }
        QVERIFY(attn && !attn->isChecked());
        edit_and_wait(w, [&] { attn->trigger(); });
        QCOMPARE(graph_module_names(w.layout().training.cuda_graph_modules), std::vector<std::string>{"attn"});
        QCOMPARE(w.undo()->undoText(), QString("Set CUDA-graph modules to attn"));
        QCOMPARE(button->text(), QString("attn"));
        edit_and_wait(w, [&] { w.undo()->undo(); });
        QVERIFY(w.layout().training.cuda_graph_modules.whole_layer());
        QVERIFY(!attn->isChecked());
        edit_and_wait(w, [&] { w.undo()->undo(); });
        QVERIFY(w.layout() == opened);
    }

    // ZeRO-3 shards the weights too: less memory without a pipeline (with one, FSDP holds
    // the stage's weights gathered from forward to backward: docs/cost-model.md). Weight
    // offload then opens and frees more; while it is on, the stages below 3 are closed,
    // saying why.
    // Hybrid sharding beside the stage: its choices are the replica counts that divide dp,
    // closed under ZeRO-0; choosing one is an undoable edit that raises the memory.
    void hybrid_sharding_is_an_edit() {
        Workbench w("llama3-70b-h100-64");  // ZeRO-1
        w.window.axis_editor()->spin_box("pp")->setValue(1);  // tp 8 × dp 8
        QCOMPARE(w.layout().parallel.mesh.dp, 8);
        w.window.estimate_panel()->runner()->wait();
        QTRY_COMPARE(w.figure("dp"), 8.0);
        const double peak = w.figure("peak_bytes");
        auto* replicas = w.editor()->zero_replicas_box();
        QStringList offered;
        for (int i = 0; i < replicas->count(); ++i) offered << replicas->itemData(i).toString();
        QCOMPARE(offered.join(' '), QString("1 2 4 8"));
        QVERIFY(replicas->isEnabled());
        edit_and_wait(w, [&] {
            replicas->setFocus();
            QTest::keyClick(replicas, Qt::Key_Down);
        });
        QCOMPARE(w.layout().training.zero_replicas, 2);
        QCOMPARE(w.undo()->undoText(), QString("Set ZeRO replicas to 2"));
        QVERIFY2(w.figure("peak_bytes") > peak, qPrintable(QString("%1 vs %2").arg(w.figure("peak_bytes")).arg(peak)));
        // ZeRO-0 has no shard group: choosing it resets the replicas, which then close.
        auto* zero = w.editor()->zero_box();
        edit_and_wait(w, [&] {
            zero->setFocus();
            QTest::keyClick(zero, Qt::Key_Home);
        });
        QCOMPARE(w.layout().training.zero_stage, 0);
        QCOMPARE(w.layout().training.zero_replicas, 1);
        QVERIFY(!replicas->isEnabled());
        w.undo()->undo();
        QCOMPARE(w.layout().training.zero_replicas, 2);
    }

    // ZeRO-3's shards as PyTorch FSDP keeps them, in the same row: closed below stage 3, an
    // undoable edit that lowers the memory by the bf16 shard, reset when the stage drops.
    void fsdp_fp32_shards_is_an_edit() {
        Workbench w("llama3-70b-h100-64");  // ZeRO-1
        w.window.axis_editor()->spin_box("pp")->setValue(1);  // tp 8 × dp 8
        w.window.estimate_panel()->runner()->wait();
        QTRY_COMPARE(w.figure("dp"), 8.0);
        auto* shards = w.editor()->fsdp_shards_box();
        QVERIFY(!choice_allowed(shards, index_of(shards, "on")));
        QVERIFY(shards->itemData(index_of(shards, "on"), Qt::ToolTipRole).toString().contains("ZeRO-3"));
        auto* zero = w.editor()->zero_box();
        edit_and_wait(w, [&] {
            zero->setFocus();
            QTest::keyClick(zero, Qt::Key_End);
        });
        QCOMPARE(w.layout().training.zero_stage, 3);
        QVERIFY(choice_allowed(shards, index_of(shards, "on")));
        const double peak = w.figure("peak_bytes");
        edit_and_wait(w, [&] {
            shards->setFocus();
            QTest::keyClick(shards, Qt::Key_Down);
        });
        QVERIFY(w.layout().training.fsdp_fp32_shards);
        QCOMPARE(w.undo()->undoText(), QString("Set FSDP shards to fp32 masters"));
        QVERIFY2(w.figure("peak_bytes") < peak, qPrintable(QString("%1 vs %2").arg(w.figure("peak_bytes")).arg(peak)));
        edit_and_wait(w, [&] {
            zero->setFocus();
            QTest::keyClick(zero, Qt::Key_Home);
        });
        QVERIFY(!w.layout().training.fsdp_fp32_shards);
        w.undo()->undo();
        QVERIFY(w.layout().training.fsdp_fp32_shards);
    }

    void zero3_and_weight_offload_lower_memory() {
        Workbench w("llama3-70b-h100-64");  // ZeRO-1
        w.window.axis_editor()->spin_box("pp")->setValue(1);  // tp 8 × dp 8
        QCOMPARE(w.layout().parallel.mesh.dp, 8);
        w.window.estimate_panel()->runner()->wait();
        QTRY_COMPARE(w.figure("dp"), 8.0);
        const Layout opened = w.layout();
        const double peak = w.figure("peak_bytes");
        auto* zero = w.editor()->zero_box();
        auto* params = w.editor()->offload_params_box();
        QVERIFY(!params->isEnabled());  // weight offload needs ZeRO-3
        QVERIFY(params->toolTip().contains("ZeRO 3"));
        QVERIFY(!choice_allowed(params, index_of(params, "cpu")));

        edit_and_wait(w, [&] {
            zero->setFocus();
            QTest::keyClick(zero, Qt::Key_End);
        });
        QCOMPARE(w.layout().training.zero_stage, 3);
        QCOMPARE(w.undo()->undoText(), QString("Set ZeRO stage to 3"));
        const double zero3_peak = w.figure("peak_bytes");
        qInfo("ZeRO-1 -> ZeRO-3 (tp 8, dp 8): peak %.2f -> %.2f GiB", peak / (1 << 30), zero3_peak / (1 << 30));
        QVERIFY2(zero3_peak < peak, qPrintable(QString("%1 vs %2").arg(zero3_peak).arg(peak)));

        QVERIFY(params->isEnabled());
        edit_and_wait(w, [&] {
            params->setFocus();
            QTest::keyClick(params, Qt::Key_Down);
        });
        QCOMPARE(w.layout().training.offload_params, Offload::Cpu);
        QCOMPARE(w.undo()->undoText(), QString("Set weight offload to cpu"));
        qInfo("ZeRO-3 + weight offload to cpu: peak %.2f GiB", w.figure("peak_bytes") / (1 << 30));
        QVERIFY(w.figure("peak_bytes") < zero3_peak);
        for (int stage = 0; stage < 3; ++stage) {
            QVERIFY(!choice_allowed(zero, stage));
            QVERIFY(zero->itemData(stage, Qt::ToolTipRole).toString().contains("Weight offload"));
        }
        QTest::keyClick(zero, Qt::Key_Up);  // nothing open above: stays
        QCOMPARE(w.layout().training.zero_stage, 3);
        QVERIFY(!zero->isEnabled());

        w.undo()->undo();
        w.undo()->undo();
        QVERIFY(w.layout() == opened);
        QCOMPARE(w.undo()->count(), 3);  // pp, ZeRO, offload
        QCOMPARE(zero->currentData().toString(), QString("1"));
        QVERIFY(!params->isEnabled());
    }

    // Every choice the dock closes is one validation refuses, and every open one it accepts
    // (warnings aside), on each bundled layout: the dock and validate_layout read one rule.
    void closed_choices_are_exactly_the_invalid_ones_data() {
        QTest::addColumn<QString>("layout");
        for (const char* name : {"llama3-70b-h100-64", "llama3.1-405b-h100-16384", "mixtral-8x7b-h100-64",
                                 "gpt3-175b-a100-1024", "tiny-cpu", "tiny-moe-cpu"}) {
            QTest::newRow(name) << QString(name);
        }
    }
    void closed_choices_are_exactly_the_invalid_ones() {
        QFETCH(QString, layout);
        Workbench w(layout.toUtf8().constData());
        auto* e = w.editor();
        using Propose = std::function<ProposedEdit(const Layout&, const QString&)>;
        auto check = [&](QComboBox* box, const Propose& propose) {
            for (int i = 0; i < box->count(); ++i) {
                const QString data = box->itemData(i).toString();
                if (data == "uneven" || data == "custom") continue;  // markers, never chosen
                const auto edit = propose(w.layout(), data);
                const bool valid = edit.refused.empty() && validate_layout(edit.layout, "test").valid();
                QVERIFY2(choice_allowed(box, i) == valid,
                         qPrintable(QString("%1 = %2: %3, %4").arg(box->accessibleName(), data,
                                                                    choice_allowed(box, i) ? "open" : "closed",
                                                                    box->itemData(i, Qt::ToolTipRole).toString())));
                if (!valid) QVERIFY(!box->itemData(i, Qt::ToolTipRole).toString().isEmpty());
            }
        };
        check(e->zero_box(), [](const Layout& l, const QString& d) { return set_zero_stage(l, d.toInt()); });
        for (auto [box, optimizer] : {std::pair{e->offload_optimizer_box(), true}, std::pair{e->offload_params_box(), false}}) {
            check(box, [optimizer](const Layout& l, const QString& d) {
                Offload o = Offload::None;
                parse_offload(d.toStdString(), o);
                return optimizer ? set_offload_optimizer(l, o) : set_offload_params(l, o);
            });
        }
        check(e->dtype_box(), [](const Layout& l, const QString& d) {
            DType t = DType::Bf16;
            parse_dtype(d.toStdString(), t);
            return set_dtype(l, t);
        });
        check(e->schedule_box(), [](const Layout& l, const QString& d) {
            Schedule s = Schedule::OneFOneB;
            parse_schedule(d.toStdString(), s);
            return set_schedule(l, s);
        });
        if (w.layout().parallel.mesh.pp > 1) {
            check(e->split_box(), [](const Layout& l, const QString& d) {
                PipelineSplitRule rule;
                if (d != "even") rule = {PipelineSplitRule::Kind::Accounted, d.contains("embedding"), d.contains("loss"), {}, {}};
                return set_pipeline_split(l, rule);
            });
        } else {
            QVERIFY(!e->split_box()->isEnabled());
            QVERIFY(!e->first_stage_box()->isEnabled());
        }
        // Warning rules close what would change nothing: bf16 gradients outside bf16/fp8
        // training, a capacity factor without experts.
        const auto& t = w.layout().training;
        QCOMPARE(choice_allowed(e->grad_reduce_box(), 1), t.dtype == DType::Bf16 || t.dtype == DType::Fp8);
        QCOMPARE(e->capacity_box()->isEnabled(), w.layout().model.is_moe());
    }

    // Machines without fp8 units or a host link: the choices are closed with the reason.
    void closed_choices_say_why() {
        Workbench a100("gpt3-175b-a100-1024");
        auto* dtype = a100.editor()->dtype_box();
        const int fp8 = index_of(dtype, "fp8");
        QVERIFY(!choice_allowed(dtype, fp8));
        QVERIFY2(dtype->itemData(fp8, Qt::ToolTipRole).toString().contains("no fp8 units"),
                 qPrintable(dtype->itemData(fp8, Qt::ToolTipRole).toString()));
        Workbench cpu("tiny-cpu");
        auto* optimizer = cpu.editor()->offload_optimizer_box();
        QVERIFY(!optimizer->isEnabled());
        QVERIFY(optimizer->itemData(1, Qt::ToolTipRole).toString().contains("no host link"));
        QCOMPARE(cpu.editor()->grad_reduce_box()->currentData().toString(), QString("fp32"));
        QCOMPARE(cpu.layout().training.dtype, DType::Fp32);  // what a CPU trains in
        QVERIFY(!cpu.editor()->grad_reduce_box()->isEnabled());
        QVERIFY(cpu.editor()->grad_reduce_box()->itemData(1, Qt::ToolTipRole).toString().contains("fp32 training"));
        // vpp 8 fixes the interleaved schedule; an even split cannot fill 128 chunks with 126 layers.
        Workbench big("llama3.1-405b-h100-16384");
        QVERIFY(!big.editor()->schedule_box()->isEnabled());
        QVERIFY(big.editor()->schedule_box()->itemData(0, Qt::ToolTipRole).toString().contains("interleaved"));
        QCOMPARE(big.editor()->split_box()->currentData().toString(), QString("embedding+loss"));
        QVERIFY(!choice_allowed(big.editor()->split_box(), 0));
        QVERIFY(big.editor()->split_box()->itemData(0, Qt::ToolTipRole).toString().contains("cannot fill"));
        // ZeRO-2 and 3 with pp 16: a warning, named in the items' tooltips, not a refusal.
        QVERIFY(choice_allowed(big.editor()->zero_box(), 3));
        QVERIFY(big.editor()->zero_box()->itemData(3, Qt::ToolTipRole).toString().contains("pp > 1"));
        QVERIFY(!big.editor()->zero_box()->itemData(1, Qt::ToolTipRole).toString().contains("pp > 1"));
        // 80 layers over pp 4 admit no accounted split: the box is closed and says why.
        Workbench even("llama3-70b-h100-64");
        auto* split = even.editor()->split_box();
        QVERIFY(!split->isEnabled());
        QVERIFY2(split->toolTip().contains("do not split evenly over pp = 4"), qPrintable(split->toolTip()));
    }

    // Kernels and numerics, each one step from the keyboard, each moving the estimate the
    // way it models: unfused attention keeps the scores and is slower; fp8 GEMMs are faster;
    // the upcast loss holds more; bf16 gradients halve the gradient memory.
    void kernels_and_numerics_move_the_estimate() {
        Workbench w("llama3-70b-h100-64");
        const Layout opened = w.layout();
        auto* e = w.editor();
        const Estimate base = estimate_layout(w.layout());

        edit_and_wait(w, [&] {
            e->flash_attention_box()->setFocus();
            QTest::keyClick(e->flash_attention_box(), Qt::Key_Space);
        });
        QVERIFY(!w.layout().training.flash_attention);
        QCOMPARE(w.undo()->undoText(), QString("Set flash attention to off"));
        const Estimate unfused = estimate_layout(w.layout());
        QVERIFY(unfused.step_time_s > base.step_time_s);
        w.undo()->undo();

        edit_and_wait(w, [&] {
            e->dtype_box()->setFocus();
            QTest::keyClick(e->dtype_box(), Qt::Key_End);  // fp8
        });
        QCOMPARE(w.layout().training.dtype, DType::Fp8);
        QCOMPARE(w.undo()->undoText(), QString("Set precision to fp8"));
        QVERIFY(w.figure("step_time_s") < base.step_time_s);
        w.undo()->undo();

        edit_and_wait(w, [&] {
            e->loss_box()->setFocus();
            QTest::keyClick(e->loss_box(), Qt::Key_Down);
        });
        QCOMPARE(w.layout().training.cross_entropy, CrossEntropy::Upcast);
        const Estimate upcast = estimate_layout(w.layout());
        QVERIFY(upcast.stages.back().peak_bytes > base.stages.back().peak_bytes);
        w.undo()->undo();

        edit_and_wait(w, [&] {
            e->fused_elementwise_box()->setFocus();
            QTest::keyClick(e->fused_elementwise_box(), Qt::Key_Space);
        });
        QVERIFY(!w.layout().training.fused_elementwise);
        QVERIFY(w.figure("step_time_s") > base.step_time_s);
        w.undo()->undo();

        edit_and_wait(w, [&] {
            e->grad_reduce_box()->setFocus();
            QTest::keyClick(e->grad_reduce_box(), Qt::Key_Down);
        });
        QVERIFY(w.layout().training.grad_reduce_in_bf16);
        QCOMPARE(w.undo()->undoText(), QString("Set gradient reduction to bf16"));
        const Estimate halved = estimate_layout(w.layout());
        QVERIFY(std::llabs(halved.stages[0].grads_bytes * 2 - base.stages[0].grads_bytes) <= 2);
        w.undo()->undo();
        QVERIFY(w.layout() == opened);
        QVERIFY(e->flash_attention_box()->isChecked() && e->fused_elementwise_box()->isChecked());
        QCOMPARE(e->dtype_box()->currentData().toString(), QString("bf16"));
    }

    // The batch: the global batch's arrows step by dp × micro-batch (always valid), more
    // micro-batches shrink the bubble; a typed batch that does not divide is refused, the
    // box snaps back and the dock says why.
    void batch_steps_and_refusals() {
        Workbench w("llama3-70b-h100-64");  // dp 2, mbs 1, gbs 128
        auto* gbs = w.editor()->global_batch_box();
        QCOMPARE(gbs->singleStep(), 2);
        const double bubble = w.figure("bubble");
        QVERIFY(bubble > 0);
        edit_and_wait(w, [&] {
            gbs->setFocus();
            QTest::keyClick(gbs, Qt::Key_Up);
        });
        QCOMPARE(w.layout().training.global_batch_size, 130);
        QCOMPARE(w.undo()->undoText(), QString("Set global batch to 130"));
        QVERIFY(w.figure("bubble") < bubble);
        // Steps of one setting are one undo step; stepping back to the start leaves none.
        QTest::keyClick(gbs, Qt::Key_Up);
        QTest::keyClick(gbs, Qt::Key_Up);
        QCOMPARE(w.layout().training.global_batch_size, 134);
        QCOMPARE(w.undo()->count(), 1);
        QCOMPARE(w.undo()->undoText(), QString("Set global batch to 134"));
        QTest::keyClick(gbs, Qt::Key_Down);
        QTest::keyClick(gbs, Qt::Key_Down);
        QTest::keyClick(gbs, Qt::Key_Down);
        QCOMPARE(w.layout().training.global_batch_size, 128);
        QCOMPARE(w.undo()->count(), 0);
        QVERIFY(!w.doc()->is_modified());
        QTest::keyClick(gbs, Qt::Key_Up);
        QCOMPARE(w.undo()->count(), 1);
        auto* mbs = w.editor()->micro_batch_box();
        mbs->setFocus();
        mbs->selectAll();
        QTest::keyClicks(mbs, "4");
        QTest::keyClick(mbs, Qt::Key_Return);  // 130 is not a multiple of 2 × 4
        QCOMPARE(w.layout().training.micro_batch_size, 1);
        QCOMPARE(mbs->value(), 1);
        QVERIFY2(w.editor()->last_refusal().contains("refused: Global batch: "),
                 qPrintable(w.editor()->last_refusal()));
        QCOMPARE(w.undo()->count(), 1);
    }

    // The split from the keyboard: the first rank one layer lighter (the last takes it),
    // shown as uneven; back to even by the chooser; a block dragged by hand shows as such.
    void pipeline_split_by_keyboard() {
        Workbench w("llama3-70b-h100-64");  // 80 layers, pp 4
        auto* split = w.editor()->split_box();
        auto* first = w.editor()->first_stage_box();
        QCOMPARE(split->currentData().toString(), QString("even"));
        QCOMPARE(first->value(), 20);
        edit_and_wait(w, [&] {
            first->setFocus();
            QTest::keyClick(first, Qt::Key_Down);
        });
        QCOMPARE(w.layout().placement.layers_per_stage, (std::vector<int>{19, 20, 20, 21}));
        QCOMPARE(w.undo()->undoText(), QString("Set pipeline split to first 19, last 21 layers"));
        QCOMPARE(split->currentData().toString(), QString("uneven"));
        QCOMPARE(w.editor()->last_stage_box()->value(), 21);
        edit_and_wait(w, [&] {
            split->setFocus();
            QTest::keyClick(split, Qt::Key_Home);
        });
        QCOMPARE(w.layout().stage_layers(), (std::vector<int>{20, 20, 20, 20}));
        QCOMPARE(split->currentData().toString(), QString("even"));
        QCOMPARE(w.undo()->undoText(), QString("Set pipeline split to even"));
        QVERIFY(w.doc()->apply(move_blocks_to_stage(w.layout(), {20}, 0)).accepted);
        QCOMPARE(split->currentData().toString(), QString("custom"));
        QCOMPARE(first->value(), 21);
    }

    // Ctrl+Shift+T brings the Training dock in front of the Model dock it shares a place
    // with, and focuses its first setting; a mnemonic of the dock does the same for its row.
    void shortcut_and_mnemonics_bring_the_dock_to_the_front() {
        QSettings().clear();  // the dock layout of a first start: Model in front
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        auto* e = w.training_editor();
        // A tab behind is "visible" to Qt but has nothing on screen.
        auto in_front = [e] { return !e->visibleRegion().isEmpty(); };
        QVERIFY(!in_front());
        QTest::keyClick(&w, Qt::Key_T, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_VERIFY(in_front());
        QWidget* f = QApplication::focusWidget();
        QVERIFY(f == e->micro_batch_box() || e->micro_batch_box()->isAncestorOf(f));

        QVERIFY(w.raise_dock("model"));
        QTRY_VERIFY(!in_front());
        QTest::keyClick(&w, Qt::Key_Z, Qt::AltModifier);  // "&ZeRO stage"
        QCOMPARE(QApplication::focusWidget(), e->zero_box());
        QTRY_VERIFY(in_front());
    }

    // No two mnemonics of the window clash (a clash makes Alt+key cycle instead of jump):
    // the labels with a buddy, the check boxes and the menu bar's titles.
    void mnemonics_are_unique() {
        Workbench w("llama3-70b-h100-64");
        QMap<QChar, QString> owner;
        auto take = [&](const QString& text) {
            const int at = text.indexOf('&');
            if (at < 0 || at + 1 >= text.size() || text[at + 1] == '&') return;
            const QChar key = text[at + 1].toLower();
            QVERIFY2(!owner.contains(key), qPrintable(QString("Alt+%1: '%2' and '%3'").arg(key, owner.value(key), text)));
            owner.insert(key, text);
        };
        for (auto* label : w.window.findChildren<QLabel*>()) {
            if (label->buddy()) take(label->text());
        }
        for (auto* box : w.window.findChildren<QCheckBox*>()) take(box->text());
        for (auto* action : w.window.menuBar()->actions()) take(action->text());
        // Every row of the Training dock has one.
        for (auto* label : w.editor()->findChildren<QLabel*>()) {
            if (label->buddy()) QVERIFY2(label->text().contains('&'), qPrintable(label->text()));
        }
        QVERIFY(owner.size() >= 18 + 5);  // the dock's rows and switches, the menus
    }

    // The documentation's picture: `meshwork --screenshot --dock training` renders the
    // window at the size asked with the dock raised; an unknown dock exits 2 naming it.
    void screenshot_raises_the_dock() {
        QTemporaryDir dir;
        const QString png = dir.filePath("training.png");
        QProcess app;
        app.start(MESHWORK_GUI_PATH, {"--screenshot", png, "--dock", "training", "--size", "1600x1080",
                                      bundled("llama3.1-405b-h100-16384")});
        QVERIFY(app.waitForFinished(60000));
        QCOMPARE(app.exitCode(), 0);
        const QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size() / image.devicePixelRatio(), QSize(1600, 1080));
        app.start(MESHWORK_GUI_PATH, {"--screenshot", dir.filePath("none.png"), "--dock", "nothing",
                                      bundled("tiny-cpu")});
        QVERIFY(app.waitForFinished(60000));
        QCOMPARE(app.exitCode(), 2);
        QVERIFY(QString::fromUtf8(app.readAllStandardError()).contains("--dock: unknown dock 'nothing'"));
        QVERIFY(!QFile::exists(dir.filePath("none.png")));
    }

    // Tab walks the dock top to bottom, skipping closed controls (here the expert capacity
    // of a dense model, the layer count of selective recompute, weight offload below ZeRO-3
    // the fp8 recipe of a bf16 layout, and the split chooser, which no accounted split of 80 layers over pp 4 opens).
    void tab_order_follows_the_groups() {
        Workbench w("llama3-70b-h100-64");
        auto* e = w.editor();
        e->micro_batch_box()->setFocus();
        QStringList seen;
        for (int i = 0; i < 20; ++i) {
            QWidget* f = QApplication::focusWidget();
            if (!f || !e->isAncestorOf(f)) break;
            // A spin box's line edit has the focus: name its box.
            QWidget* named = qobject_cast<QAbstractSpinBox*>(f->parentWidget()) ? f->parentWidget() : f;
            seen << named->accessibleName();
            QTest::keyClick(f, Qt::Key_Tab);
        }
        const QStringList expected{"micro_batch_size", "global_batch_size", "seq_length", "zero_stage", "zero_replicas", "recompute",
                                   "recompute_modules", "offload_optimizer", "dtype", "grad_reduce_dtype", "cross_entropy",
                                   "flash_attention", "fused_elementwise", "attention_kernel", "cuda_graphs", "schedule", "first_stage_layers", "last_stage_layers"};
        QCOMPARE(seen.join(' '), expected.join(' '));
        // The scroll area around the groups is no Tab stop: Shift+Tab from the first control
        // reaches no part of the dock that is not a control.
        auto* area = e->findChild<QScrollArea*>();
        QVERIFY(area);
        QCOMPARE(area->focusPolicy(), Qt::NoFocus);
        e->micro_batch_box()->setFocus();
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Backtab);
        QVERIFY(QApplication::focusWidget() != area);
        // At the default window size the Pipeline group lies below the fold: its mnemonic
        // brings it into view.
        w.window.resize(1600, 960);
        QCoreApplication::processEvents();
        auto* last = e->last_stage_box();
        w.window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w.window));
        auto* scroll = e->findChild<QScrollArea*>();
        QVERIFY(scroll);
        e->micro_batch_box()->setFocus();  // back at the top (Tab above scrolled down)
        scroll->verticalScrollBar()->setValue(0);
        QTest::keyClick(&w.window, Qt::Key_Y, Qt::AltModifier);  // "Stage la&yers"
        QCOMPARE(QApplication::focusWidget() == e->first_stage_box() ||
                     e->first_stage_box()->isAncestorOf(QApplication::focusWidget()),
                 true);
        auto* viewport = scroll->viewport();
        const QRect in_view(last->mapTo(viewport, QPoint(0, 0)), last->size());
        QVERIFY2(scroll->widget()->height() > viewport->height(),
                 qPrintable(QString("content %1 px, view %2 px").arg(scroll->widget()->height()).arg(viewport->height())));
        QVERIFY2(viewport->rect().contains(in_view),
                 qPrintable(QString("last box at %1..%2 of %3 px").arg(in_view.top()).arg(in_view.bottom()).arg(viewport->height())));
    }
};

QTEST_MAIN(TstTraining)
#include "tst_training.moc"
