// The run dialog's live loss: one point per finished step, a line scaled to the range seen
// so far, the latest value printed in the corner.
#pragma once

#include <QWidget>

#include <vector>

namespace meshwork::gui {

class LossPlot : public QWidget {
    Q_OBJECT
public:
    explicit LossPlot(QWidget* parent = nullptr);
    void clear();
    void add(int step, double loss);
    [[nodiscard]] const std::vector<std::pair<int, double>>& points() const { return points_; }
    [[nodiscard]] QSize sizeHint() const override { return {420, 140}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<std::pair<int, double>> points_;
};

}  // namespace meshwork::gui
