// Timestamp flags on the timeline, as Perfetto's flags and Nsight Systems' timeline markers:
// instants the user marks (M at the cursor, Shift+M clears them all), drawn as a line across
// the lanes with the flag's time on the ruler, and between neighbouring flags the time from
// one to the next, so that two marks measure an interval that stays on screen while the view
// pans and zooms.
#pragma once

#include <QColor>
#include <QRectF>

#include <functional>
#include <vector>

class QPainter;

namespace meshwork::gui {

class TimeFlags {
public:
    // Adds a flag at `t_ns`, or removes the one within `tolerance_ns` of it (the nearest).
    // Returns true when a flag was added.
    bool toggle(double t_ns, double tolerance_ns);
    void clear() { flags_ns_.clear(); }
    [[nodiscard]] const std::vector<double>& flags_ns() const { return flags_ns_; }  // ascending
    [[nodiscard]] bool empty() const { return flags_ns_.empty(); }

    // Lines across `lanes` (clipped by the caller) at each flag's x.
    void paint_lines(QPainter& p, const QRectF& lanes, const std::function<double(double)>& x_of,
                     const QColor& colour) const;
    // In `ruler` (the time axis band): a marker and the flag's time from `origin_ns` at each
    // flag, and the time between neighbouring flags centred between them where it fits.
    void paint_ruler(QPainter& p, const QRectF& ruler, const std::function<double(double)>& x_of, double origin_ns,
                     const QColor& colour, const QColor& text) const;

private:
    std::vector<double> flags_ns_;
};

}  // namespace meshwork::gui
