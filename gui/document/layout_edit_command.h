// One undoable edit: the whole layout before and after. Layouts are small (a few KB), so
// snapshots are simpler and safer than inverse operations.
#pragma once

#include <QUndoCommand>

#include "core/layout/layout.h"

namespace meshwork::gui {

class LayoutDocument;

class LayoutEditCommand : public QUndoCommand {
public:
    // `merge_id` >= 0: a following command with the same id on top of this one merges into
    // it (QUndoStack asks mergeWith), keeping this one's before and taking its after and text.
    LayoutEditCommand(LayoutDocument* document, Layout before, Layout after, const QString& text, int merge_id = -1);
    void undo() override;
    void redo() override;
    [[nodiscard]] int id() const override { return merge_id_; }
    // A merge that comes back to where it started leaves nothing to undo: obsolete.
    bool mergeWith(const QUndoCommand* other) override;

private:
    LayoutDocument* document_;
    Layout before_;
    Layout after_;
    int merge_id_;
};

}  // namespace meshwork::gui
