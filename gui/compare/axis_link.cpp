#include "gui/compare/axis_link.h"

#include <algorithm>

#include "gui/timeline/timeline_view.h"

namespace meshwork::gui {

AxisLink::AxisLink(TimelineView* a, TimelineView* b, QObject* parent) : QObject(parent), a_(a), b_(b) {
    connect(a_, &TimelineView::window_changed, this, [this] { follow(a_, b_); });
    connect(b_, &TimelineView::window_changed, this, [this] { follow(b_, a_); });
}

void AxisLink::reset() {
    if (!a_->source() || !b_->source()) return;
    const double oa = a_->time_origin(), ob = b_->time_origin();
    const double begin = std::min(static_cast<double>(a_->source()->begin_ns()) - oa,
                                  static_cast<double>(b_->source()->begin_ns()) - ob);
    const double end = std::max(static_cast<double>(a_->source()->end_ns()) - oa,
                                static_cast<double>(b_->source()->end_ns()) - ob);
    following_ = true;
    a_->set_time_extent(std::make_pair(begin + oa, end + oa));
    b_->set_time_extent(std::make_pair(begin + ob, end + ob));
    a_->fit_all();
    b_->fit_all();
    following_ = false;
}

void AxisLink::follow(TimelineView* from, TimelineView* to) {
    // The follower's own window_changed comes back here while it moves: ignore that echo.
    if (following_ || !from->source() || !to->source()) return;
    following_ = true;
    if (from->showing_all()) {
        // Both fit the same extent; fitting (rather than copying the window) keeps the
        // follower refitting on its own resizes too.
        to->fit_all();
        following_ = false;
        return;
    }
    const auto [t0, t1] = from->visible_window();
    const double shift = to->time_origin() - from->time_origin();
    to->set_visible_window(t0 + shift, t1 + shift);
    following_ = false;
}

}  // namespace meshwork::gui
