#include "gui/document/layout_edit_command.h"

#include <utility>

#include "gui/document/layout_document.h"

namespace meshwork::gui {

LayoutEditCommand::LayoutEditCommand(LayoutDocument* document, Layout before, Layout after,
                                     const QString& text)
    : QUndoCommand(text), document_(document), before_(std::move(before)), after_(std::move(after)) {}

void LayoutEditCommand::undo() { document_->set_layout_from_history(before_); }

void LayoutEditCommand::redo() { document_->set_layout_from_history(after_); }

}  // namespace meshwork::gui
