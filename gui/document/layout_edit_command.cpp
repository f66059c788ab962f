#include "gui/document/layout_edit_command.h"

#include <utility>

#include "gui/document/layout_document.h"

namespace meshwork::gui {

LayoutEditCommand::LayoutEditCommand(LayoutDocument* document, Layout before, Layout after,
                                     const QString& text, int merge_id)
    : QUndoCommand(text),
      document_(document),
      before_(std::move(before)),
      after_(std::move(after)),
      merge_id_(merge_id) {}

bool LayoutEditCommand::mergeWith(const QUndoCommand* other) {
    const auto* next = dynamic_cast<const LayoutEditCommand*>(other);
    if (!next || next->merge_id_ != merge_id_ || merge_id_ < 0) return false;
    after_ = next->after_;
    setText(next->text());
    setObsolete(after_ == before_);
    return true;
}

void LayoutEditCommand::undo() { document_->set_layout_from_history(before_); }

void LayoutEditCommand::redo() { document_->set_layout_from_history(after_); }

}  // namespace meshwork::gui
