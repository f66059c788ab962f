// The open layout: its file, its undo history and the rule that every edit is validated.
// Views read layout() and listen to changed(); edits go through apply() so that each one
// lands on the undo stack, and an edit that makes the layout invalid is refused.
#pragma once

#include <QObject>
#include <QString>
#include <QUndoStack>

#include "gui/document/layout_edits.h"
#include "core/layout/layout.h"

namespace meshwork::gui {

struct EditOutcome {
    bool accepted = false;
    QString reason;  // why it was refused, in words (issue_words.h): the validation message
};

class LayoutDocument : public QObject {
    Q_OBJECT
public:
    explicit LayoutDocument(QObject* parent = nullptr);

    [[nodiscard]] const Layout& layout() const { return layout_; }
    [[nodiscard]] bool has_layout() const { return has_layout_; }
    [[nodiscard]] QString path() const { return path_; }
    [[nodiscard]] bool is_modified() const { return !undo_.isClean(); }
    [[nodiscard]] QUndoStack* undo_stack() { return &undo_; }
    // The layout before the latest change (edit, undo or redo): the estimate panel shows
    // the difference from it.
    [[nodiscard]] const Layout& previous_layout() const { return previous_; }

    // Replaces the document (New, Open): clears the history.
    void reset(const Layout& layout, const QString& path);
    // Throws InputError (the message names the file and field) when the file is bad.
    void load(const QString& path);
    // Writes atomically; marks the history clean. Throws on I/O errors.
    void save(const QString& path);

    // Pushes the edit on the undo stack when it is allowed. Refused: the edit could not be
    // formed, or it adds validation errors (a layout that was valid must stay valid).
    EditOutcome apply(const ProposedEdit& edit);
    // Whether apply() would accept `edit`, without applying it (spin-box arrows ask it).
    [[nodiscard]] EditOutcome check(const ProposedEdit& edit) const;

    // Used by the undo commands only.
    void set_layout_from_history(const Layout& layout);

signals:
    void changed();        // any change of layout()
    void reset_done();     // a different layout was loaded (views may reset zoom, selection)
    void path_changed(const QString& path);

private:
    Layout layout_;
    Layout previous_;
    bool has_layout_ = false;
    QString path_;
    QUndoStack undo_;
};

}  // namespace meshwork::gui
