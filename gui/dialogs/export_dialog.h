// File → Export: the open layout as a Megatron-LM command line, a DeepSpeed config, a
// torchtitan TOML, a SLURM script or the layout JSON, previewed as the user switches
// formats, with everything the target cannot express listed above the text. Copy puts the
// text on the clipboard; Save writes it atomically (core/export save_text_file).
#pragma once

#include <QDialog>

#include "core/export/export_types.h"
#include "core/layout/layout.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace meshwork::gui {

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    ExportDialog(const Layout& layout, const QString& layout_path, QWidget* parent = nullptr);

    void set_format(ExportFormat format);
    [[nodiscard]] QString preview_text() const;
    [[nodiscard]] QStringList lost() const { return lost_; }
    // Writes the previewed text to `path`; false with the reason in last_error().
    bool save_to(const QString& path);
    [[nodiscard]] QString last_error() const { return last_error_; }
    void copy_to_clipboard();

private:
    void refresh();
    [[nodiscard]] ExportFormat format() const;
    [[nodiscard]] QString suggested_file_name() const;

    Layout layout_;
    QString layout_path_;
    QComboBox* format_ = nullptr;
    QComboBox* trainer_ = nullptr;
    QLabel* trainer_label_ = nullptr;
    QLabel* lost_label_ = nullptr;
    QPlainTextEdit* preview_ = nullptr;
    QPushButton* save_ = nullptr;
    QStringList lost_;
    QString last_error_;
};

}  // namespace meshwork::gui
