// The edits behind drag and drop and the axis editor, on bundled layouts.
#include <QtTest>

#include "gui/document/layout_document.h"
#include "gui/document/layout_edits.h"
#include "core/layout/layout_json.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {
Layout bundled(const char* name) {
    return load_layout(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/" + name + ".json");
}
}  // namespace

class TstLayoutEdits : public QObject {
    Q_OBJECT
private slots:
    void block_moves_to_the_previous_stage() {
        const Layout l = bundled("llama3-70b-h100-64");
        const auto edit = move_blocks_to_stage(l, {20}, 0);
        QVERIFY(edit.refused.empty());
        QCOMPARE(edit.layout.placement.layers_per_stage, (std::vector<int>{21, 19, 20, 20}));
    }
    void block_moves_to_the_next_stage() {
        const Layout l = bundled("llama3-70b-h100-64");
        const auto edit = move_blocks_to_stage(l, {18, 19}, 1);
        QCOMPARE(edit.layout.placement.layers_per_stage, (std::vector<int>{18, 22, 20, 20}));
    }
    void emptying_a_stage_is_refused_by_validation() {
        const Layout l = bundled("llama3-70b-h100-64");
        LayoutDocument doc;
        doc.reset(l, "llama.json");
        const auto edit = move_blocks_to_stage(l, {20, 39}, 0);  // takes all of stage 1
        QCOMPARE(edit.layout.placement.layers_per_stage, (std::vector<int>{40, 0, 20, 20}));
        const auto outcome = doc.apply(edit);
        QVERIFY(!outcome.accepted);
        QVERIFY2(outcome.reason.startsWith("stage 1 would hold 0 layers"), qPrintable(outcome.reason));
        QVERIFY(doc.layout() == l);
        QCOMPARE(doc.undo_stack()->count(), 0);
    }
    void drop_on_its_own_stage_is_refused() {
        const auto edit = move_blocks_to_stage(bundled("llama3-70b-h100-64"), {3}, 0);
        QVERIFY(!edit.refused.empty());
    }
    void experts_move_between_ep_ranks() {
        const Layout l = bundled("tiny-moe-cpu");
        const auto edit = move_experts_to_ep_rank(l, {0}, 1);
        QVERIFY(edit.refused.empty());
        QCOMPARE(edit.layout.placement.experts_per_ep_rank,
                 (std::vector<std::vector<int>>{{1, 2, 3}, {0, 4, 5, 6, 7}}));
    }
    void axis_change_keeps_the_world_size() {
        const Layout l = bundled("llama3-70b-h100-64");
        const auto edit = set_mesh_axis(l, "tp", 4);
        QVERIFY(edit.refused.empty());
        QCOMPARE(edit.layout.parallel.mesh.dp, 4);
        QCOMPARE(edit.layout.placement.layers_per_stage, l.placement.layers_per_stage);
        const auto pp = set_mesh_axis(l, "pp", 8);
        QCOMPARE(pp.layout.parallel.mesh.dp, 1);
        QVERIFY(pp.layout.placement.layers_per_stage.empty());  // back to an even split
        QVERIFY(!set_mesh_axis(l, "tp", 3).refused.empty());    // 64 GPUs / (3·4)
    }
    void undo_and_redo_restore_each_state() {
        const Layout l = bundled("llama3-70b-h100-64");
        LayoutDocument doc;
        doc.reset(l, "llama.json");
        QVERIFY(doc.apply(move_blocks_to_stage(l, {20}, 0)).accepted);
        QVERIFY(doc.apply(set_mesh_axis(doc.layout(), "tp", 4)).accepted);
        QVERIFY(doc.is_modified());
        doc.undo_stack()->undo();
        QCOMPARE(doc.layout().parallel.mesh.tp, 8);
        QCOMPARE(doc.layout().placement.layers_per_stage, (std::vector<int>{21, 19, 20, 20}));
        doc.undo_stack()->undo();
        QVERIFY(doc.layout() == l);
        QVERIFY(!doc.is_modified());
        doc.undo_stack()->redo();
        QCOMPARE(doc.layout().placement.layers_per_stage, (std::vector<int>{21, 19, 20, 20}));
    }
    void save_and_reload_round_trips() {
        QTemporaryDir dir;
        const Layout l = bundled("mixtral-8x7b-h100-64");
        LayoutDocument doc;
        doc.reset(l, {});
        QVERIFY(doc.apply(move_blocks_to_stage(l, {8}, 0)).accepted);
        const QString path = dir.filePath("edited.json");
        doc.save(path);
        QVERIFY(!doc.is_modified());
        QCOMPARE(doc.path(), path);
        QVERIFY(load_layout(path.toStdString()) == doc.layout());
    }
};

QTEST_MAIN(TstLayoutEdits)
#include "tst_layout_edits.moc"
