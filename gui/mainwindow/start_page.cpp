#include "gui/mainwindow/start_page.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace meshwork::gui {

StartPage::StartPage(const QString& examples_dir, QWidget* parent) : QWidget(parent) {
    auto* outer = new QHBoxLayout(this);
    outer->addStretch(1);
    auto* column = new QVBoxLayout;
    column->addStretch(1);
    auto* title = new QLabel(tr("<h2>Meshwork</h2>"), this);
    column->addWidget(title);
    auto* text = new QLabel(
        tr("Design how a transformer is split over a cluster, see what it costs, run it and profile it.<br>"
           "Start a <b>new layout</b> from a model and a cluster, <b>open</b> a layout file, or <b>open a "
           "trace</b> (a Meshwork trace, a PyTorch / Kineto JSON or an Nsight Systems SQLite export). "
           "Or begin with one of the bundled examples below."),
        this);
    text->setWordWrap(true);
    text->setMaximumWidth(560);
    column->addWidget(text);
    auto* buttons = new QHBoxLayout;
    auto* new_button = new QPushButton(tr("New Layout…"), this);
    auto* open_button = new QPushButton(tr("Open Layout…"), this);
    auto* trace_button = new QPushButton(tr("Open Trace…"), this);
    for (auto* b : {new_button, open_button, trace_button}) buttons->addWidget(b);
    buttons->addStretch(1);
    column->addLayout(buttons);
    auto* examples_label = new QLabel(tr("Examples (double-click or Enter to open):"), this);
    column->addWidget(examples_label);
    examples_ = new QListWidget(this);
    examples_->setObjectName("start_examples");
    examples_->setMaximumWidth(560);
    examples_->setMaximumHeight(200);
    // No mnemonics here: the window's Alt+letters belong to the menus and the docks (the
    // buttons are reached with Tab, the list is focused first).
    const auto files = QDir(examples_dir).entryInfoList({"*.json"}, QDir::Files, QDir::Name);
    for (const QFileInfo& f : files) {
        auto* item = new QListWidgetItem(f.completeBaseName(), examples_);
        item->setData(Qt::UserRole, f.absoluteFilePath());
        item->setToolTip(f.absoluteFilePath());
    }
    if (examples_->count() > 0) examples_->setCurrentRow(0);
    setFocusProxy(examples_);
    column->addWidget(examples_);
    column->addStretch(2);
    outer->addLayout(column, 3);
    outer->addStretch(1);

    connect(new_button, &QPushButton::clicked, this, &StartPage::new_requested);
    connect(open_button, &QPushButton::clicked, this, &StartPage::open_requested);
    connect(trace_button, &QPushButton::clicked, this, &StartPage::open_trace_requested);
    connect(examples_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { emit example_chosen(item->data(Qt::UserRole).toString()); });
}

}  // namespace meshwork::gui
