// A spin box whose arrows (and Page Up/Down, the wheel) step through the values an edit
// would accept only: TP 2 → Up → 4 on 64 GPUs, skipping 3, which the layout refuses. Typing
// a value is still possible; a refused one snaps back with its reason (AxisEditor).
#pragma once

#include <QSpinBox>

#include <functional>
#include <map>
#include <utility>

namespace meshwork::gui {

class AxisSpinBox : public QSpinBox {
    Q_OBJECT
public:
    // `accepts(v)`: whether the edit to v would be accepted. Unset: every value is.
    using Accepts = std::function<bool(int)>;
    explicit AxisSpinBox(QWidget* parent = nullptr) : QSpinBox(parent) {}
    void set_accepts(Accepts accepts) {
        accepts_ = std::move(accepts);
        invalidate();
    }
    // What is accepted changed (the layout did): the neighbours found so far are dropped.
    void invalidate() { neighbours_.clear(); }
    // The next accepted value from value() in the direction of `steps` (|steps| accepted
    // values away), or value() when there is none.
    [[nodiscard]] int next_accepted(int steps) const;
    void stepBy(int steps) override;

protected:
    [[nodiscard]] StepEnabled stepEnabled() const override;

private:
    // The accepted neighbours (below, above) of a value, found once per layout: stepEnabled()
    // runs on every paint and must not validate layouts each time.
    [[nodiscard]] std::pair<int, int> neighbours() const;
    [[nodiscard]] int walk(int steps) const;

    Accepts accepts_;
    mutable std::map<int, std::pair<int, int>> neighbours_;
};

}  // namespace meshwork::gui
