// What the window shows before anything is open: what can be done (a new layout, a layout
// or a trace file) and the bundled example layouts, one click or Enter each, instead of an
// example opened silently that a first-time user takes for their own.
#pragma once

#include <QWidget>

class QListWidget;

namespace meshwork::gui {

class StartPage : public QWidget {
    Q_OBJECT
public:
    // `examples_dir`: the folder of bundled layouts listed (resources/layouts).
    explicit StartPage(const QString& examples_dir, QWidget* parent = nullptr);
    [[nodiscard]] QListWidget* examples() const { return examples_; }

signals:
    void new_requested();
    void open_requested();
    void open_trace_requested();
    void example_chosen(const QString& path);

private:
    QListWidget* examples_ = nullptr;
};

}  // namespace meshwork::gui
