// One undoable edit: the whole layout before and after. Layouts are small (a few KB), so
// snapshots are simpler and safer than inverse operations.
#pragma once

#include <QUndoCommand>

#include "core/layout/layout.h"

namespace meshwork::gui {

class LayoutDocument;

class LayoutEditCommand : public QUndoCommand {
public:
    LayoutEditCommand(LayoutDocument* document, Layout before, Layout after, const QString& text);
    void undo() override;
    void redo() override;

private:
    LayoutDocument* document_;
    Layout before_;
    Layout after_;
};

}  // namespace meshwork::gui
