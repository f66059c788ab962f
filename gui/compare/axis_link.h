// Keeps two timeline views on one time axis: zooming or panning either one moves the other
// to the same window, each measured from its own time origin (so that step starts line up),
// and both share one extent so that clamping at the edges treats them alike.
#pragma once

#include <QObject>

namespace meshwork::gui {

class TimelineView;

class AxisLink : public QObject {
    Q_OBJECT
public:
    AxisLink(TimelineView* a, TimelineView* b, QObject* parent = nullptr);
    // Call after both views have their sources and origins: sets the shared extent (the
    // union of both traces, each relative to its origin) and shows all of it.
    void reset();

private:
    void follow(TimelineView* from, TimelineView* to);

    TimelineView* a_;
    TimelineView* b_;
    bool following_ = false;
};

}  // namespace meshwork::gui
