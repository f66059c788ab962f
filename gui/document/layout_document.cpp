#include "gui/document/layout_document.h"

#include "gui/document/issue_words.h"

#include <QHash>

#include "gui/document/layout_edit_command.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"

namespace meshwork::gui {

LayoutDocument::LayoutDocument(QObject* parent) : QObject(parent) {}

void LayoutDocument::reset(const Layout& layout, const QString& path) {
    undo_.clear();
    layout_ = layout;
    previous_ = layout;
    has_layout_ = true;
    path_ = path;
    emit path_changed(path_);
    emit reset_done();
    emit changed();
}

void LayoutDocument::load(const QString& path) { reset(load_layout(path.toStdString()), path); }

void LayoutDocument::save(const QString& path) {
    save_layout(layout_, path.toStdString());
    undo_.setClean();
    if (path != path_) {
        path_ = path;
        emit path_changed(path_);
    }
}

EditOutcome LayoutDocument::check(const ProposedEdit& edit) const {
    if (!has_layout_) return {false, tr("no layout is open")};
    if (!edit.refused.empty()) return {false, QString::fromStdString(edit.refused)};
    if (edit.layout == layout_) return {false, tr("nothing changes")};
    const std::string file = path_.toStdString();
    const auto before = validate_layout(layout_, file);
    const auto after = validate_layout(edit.layout, file);
    // A valid layout must stay valid; an invalid one (opened from a file) may be repaired
    // step by step, so only edits that add errors are refused there.
    if (!after.valid() && (before.valid() || after.errors.size() > before.errors.size())) {
        const auto& e = after.errors.front();
        return {false, refusal_in_words(e, edit.layout)};
    }
    return {true, {}};
}

EditOutcome LayoutDocument::apply(const ProposedEdit& edit) {
    if (const EditOutcome checked = check(edit); !checked.accepted) return checked;
    // A stable id per merge key (QUndoCommand ids are ints); -1: never merged.
    const int merge_id = edit.merge_key.empty()
                             ? -1
                             : static_cast<int>(qHash(QString::fromStdString(edit.merge_key)) & 0x7fffffff);
    undo_.push(new LayoutEditCommand(this, layout_, edit.layout, QString::fromStdString(edit.description), merge_id));
    return {true, {}};
}

void LayoutDocument::set_layout_from_history(const Layout& layout) {
    previous_ = layout_;
    layout_ = layout;
    emit changed();
}

}  // namespace meshwork::gui
