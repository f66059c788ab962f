// A QComboBox whose items carry the layout's spelling (item data), a tooltip each, and can be
// closed one by one where a layout rule forbids them: the closed item's tooltip then says
// why (the rule's reason) instead of what it models. Keyboard and mouse skip closed items.
#pragma once

#include <QComboBox>
#include <QString>

#include <string>

namespace meshwork::gui {

// The layout's spelling of a value ("selective", "cpu") as item data.
inline QString spelt(const std::string& s) { return QString::fromStdString(s); }

// The split chooser's item data: even, the accounted forms, and the two markers (a split set
// by the first / last stage layers, or placed by hand) that show a split but are never chosen.
inline const char* const kSplitEven = "even";
inline const char* const kSplitUneven = "uneven";
inline const char* const kSplitCustom = "custom";
inline QString split_data(bool embedding, bool loss) {
    return embedding && loss ? "embedding+loss" : embedding ? "embedding" : "loss";
}

// Appends an item: `label` shown, `data` the layout's spelling, `tip` what it models.
void add_choice(QComboBox* box, const QString& label, const QString& data, const QString& tip);
// Opens or closes item `index`; closed, its tooltip is `why`.
void set_choice_allowed(QComboBox* box, int index, bool allowed, const QString& why = {});
[[nodiscard]] bool choice_allowed(const QComboBox* box, int index);
// Selects the item whose data is `data` (closed or not: the layout may hold it).
void select_choice(QComboBox* box, const QString& data);
// Whether any item but the current one is open.
[[nodiscard]] bool has_other_choice(const QComboBox* box);
// The box's own tooltip (what the setting models and its default), kept for refresh_box.
void set_box_tip(QComboBox* box, const QString& tip);
// Enables the box only when another item is open; closed, its tooltip adds each closed
// item's reason, so that hovering the box says why it cannot change.
void refresh_box(QComboBox* box);

}  // namespace meshwork::gui
