// The timeline: a time ruler on top, lane names on the left, one lane per rank × stream,
// items from a TimelineSource drawn for the visible window only. Wheel zooms around the
// cursor, dragging pans, Shift+drag selects a time range, a click selects an event.
// Keyboard: W/S or +/− zoom, A/D or arrows pan, Home shows everything, F frames the
// selection, Esc clears it; M sets a timestamp flag at the cursor (or removes the one there),
// Shift+M clears them (time_flags.h).
// When the source carries a mesh, lanes are grouped under a header row per pipeline stage
// and data-parallel replica (lane_groups.h): a click on a header, or Space/Enter on the
// current one (Ctrl+Up/Down), collapses or expands it; [ and ] collapse and expand it,
// { and } every group; Backspace steps back from a change of many groups at once (every
// group, ranks shown from the rank overview). A collapsed group is one summary row.
#pragma once

#include <QAbstractScrollArea>
#include <QHash>
#include <QImage>
#include <QStaticText>

#include <memory>
#include <optional>

#include "gui/timeline/lane_groups.h"
#include "gui/timeline/peer_flows.h"
#include "gui/timeline/time_flags.h"
#include "gui/timeline/timeline_colours.h"
#include "gui/timeline/timeline_source.h"

namespace meshwork::gui {

class TimelineView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);
    // What the view says with no trace: how to open or record one.
    [[nodiscard]] static QString empty_message();
    void set_source(std::shared_ptr<const TimelineSource> source);
    [[nodiscard]] const TimelineSource* source() const { return source_.get(); }

    // The visible time window [first, second) in ns.
    [[nodiscard]] std::pair<double, double> visible_window() const;
    void set_visible_window(double t0, double t1);
    // Zooms by `factor` (> 1 zooms in) keeping the time under viewport x `anchor_x` fixed.
    void zoom(double factor, double anchor_x);
    void pan_pixels(double dx);
    void fit_all();
    void select_event(std::int64_t event);  // and scrolls it into view
    // Selects [t0_ns, t1_ns) over every row, as a Shift+drag across all lanes does
    // (range_selected follows): --select and tests.
    void select_range(double t0_ns, double t1_ns);
    // Timestamp flags: M's toggle at `t_ns` (removing a flag within 4 px of it), and clearing.
    void toggle_flag(double t_ns);
    void clear_flags();
    [[nodiscard]] const TimeFlags& time_flags() const { return flags_; }
    // Whether the step row and step lines are drawn for a source with steps (default on; a
    // remote trace has none: its protocol carries no steps).
    void set_steps_shown(bool shown);

    // Where the ruler's zero lies (default: the source's first event). A comparison measures
    // each trace from its own step start.
    void set_time_origin(std::optional<double> origin_ns);
    [[nodiscard]] double time_origin() const;
    // The time range fit_all() shows and zoom and pan may reach (default: the source's).
    // Two linked views share one, so that neither clamps where the other does not.
    void set_time_extent(std::optional<std::pair<double, double>> extent_ns);
    [[nodiscard]] double ns_per_pixel() const { return ns_per_px_; }
    // True while the view shows everything (after fit_all, until a zoom or pan).
    [[nodiscard]] bool showing_all() const { return fitted_; }

    // Items drawn in the latest frame, over all lanes: bounded by the width in pixels.
    [[nodiscard]] std::size_t last_frame_items() const { return last_frame_items_; }
    // Window queries sent to the source so far (a repaint of an unchanged window sends none).
    [[nodiscard]] std::size_t source_queries() const { return source_queries_; }
    // Paints one frame into `painter` at `size`, as paintEvent does (benchmarks).
    void render_frame(QPainter& painter, QSize size);

    // Lanes grouped by mesh axis: the rows drawn, which groups are collapsed.
    [[nodiscard]] const LaneGroups& lane_groups() const { return groups_; }
    void toggle_group(int group);
    void set_group_collapsed(int group, bool collapsed);
    void set_all_groups_collapsed(bool collapsed);
    // Shows the lanes of `ranks`: the groups holding them expanded, every other collapsed,
    // the first of them scrolled to the top. False when none of them has lanes.
    bool show_ranks(const std::vector<int>& ranks);
    // Back to the groups' state before the last change of many at once; false when none.
    bool groups_back();
    // The group whose header the keyboard acts on; -1 when none.
    [[nodiscard]] int current_group() const { return current_group_; }
    void set_current_group(int group);  // and scrolls its header into view
    // Totals over rows [row_first, row_last] (a collapsed group: all of its lanes); `lanes`
    // receives the number of lanes they cover.
    [[nodiscard]] TimelineRangeStats range_stats(int row_first, int row_last, double t0_ns, double t1_ns,
                                                 int* lanes = nullptr) const;
    [[nodiscard]] int first_visible_row() const { return lane_offset_px_ / lane_h_; }
    void scroll_to_row(int row);  // to the top of the lanes

    [[nodiscard]] int lane_header_width() const { return header_w_; }
    [[nodiscard]] int lane_height() const { return lane_h_; }
    [[nodiscard]] int ruler_height() const { return ruler_h_; }
    // The event the selected one flows to or from (shares its correlation id), once a frame
    // has looked for it.
    [[nodiscard]] const std::optional<TimelineEventDetails>& flow_partner() const { return flow_partner_; }
    // The events on other ranks the selected communication event joins (peer_flows.h): its
    // send or receive, or the same collective on the other ranks of its group.
    [[nodiscard]] const PeerFlows& peer_flows() const { return peer_flows_; }

signals:
    void window_changed(double t0_ns, double t1_ns);
    void event_selected(const meshwork::gui::TimelineEventDetails& details);
    // Rows [row_first, row_last] of lane_groups() (the lanes, when not grouped).
    void range_selected(int row_first, int row_last, double t0_ns, double t1_ns);
    void selection_cleared();
    // The selected event and the one that shares its correlation id (launch → kernel).
    void flow_found(const meshwork::gui::TimelineEventDetails& from, const meshwork::gui::TimelineEventDetails& to);
    // The selected communication event and its partners on other ranks.
    void peers_found(const meshwork::gui::TimelineEventDetails& selected, const meshwork::gui::PeerFlows& flows);
    // After each paint: last_frame_items() now describes what is on screen.
    void frame_painted();

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool viewportEvent(QEvent* event) override;  // tooltips
    void scrollContentsBy(int dx, int dy) override;

private:
    struct DrawnItem {
        QRectF rect;
        TimelineItem item;
    };
    [[nodiscard]] double x_of(double t_ns) const { return header_w_ + (t_ns - t0_) / ns_per_px_; }
    [[nodiscard]] double t_of(double x) const { return t0_ + (x - header_w_) * ns_per_px_; }
    [[nodiscard]] double track_width() const;
    [[nodiscard]] double extent_begin() const;
    [[nodiscard]] double extent_end() const;
    [[nodiscard]] bool has_events() const { return source_ && source_->event_count() > 0; }
    [[nodiscard]] int row_at(double y) const;
    void after_rows_changed();
    void paint_group_header(QPainter& p, const LaneRow& row, double y);
    [[nodiscard]] const DrawnItem* item_at(QPointF pos) const;
    void clamp_window();
    void sync_scrollbars();
    void changed_window();
    // Fetches the visible lanes' items for a frame of `size` from the source, unless the
    // last frame's answer the same query: every source query happens here, none in paint.
    void prepare_lanes(QSize size);
    void paint_frame(QPainter& p, QSize size);
    // Draws the items prepare_lanes() fetched.
    void paint_lanes(QPainter& p, QSize size);
    void paint_ruler(QPainter& p, QSize size);
    void paint_headers(QPainter& p, QSize size);
    void paint_selection(QPainter& p, QSize size);
    // The step row under the time axis and the step starts across the lanes (a source
    // with steps, TimelineSource::steps()).
    void paint_step_row(QPainter& p, QSize size);
    void update_ruler_height();
    // Flows: the event that shares the selected one's correlation id (a launch and its
    // kernel) on another lane of its rank among the items of this frame, drawn as an arrow
    // from the earlier to the later; flow_found tells the details pane. For a communication
    // event also its partners on the other ranks' lanes of this frame (peer_flows.h): an
    // arrow from a send to its receive, dashed lines between the ranks of a collective;
    // peers_found tells the details pane.
    void find_flow_partner();
    void paint_flow(QPainter& p);
    static constexpr int kMaxFlowLookups = 4000;  // details() calls per selection and window
    void paint_step_lines(QPainter& p, QSize size);
    QString item_tooltip(const DrawnItem& d) const;
    void paint_label(QPainter& p, const QRect& r, std::uint32_t name_id, const QColor& fill);
    // The first line of the band image, which is at least width × height.
    QRgb* band_row(int width, int height);

    struct Label {
        QString text;
        int width = 0;
        QStaticText static_text;
    };
    QHash<std::uint32_t, Label> labels_;
    ItemColourTable colours_;

    std::shared_ptr<const TimelineSource> source_;
    double t0_ = 0;
    double ns_per_px_ = 1000;
    int header_w_ = 176;
    int lane_h_ = 22;
    int ruler_h_ = 28;
    int step_row_h_ = 0;  // the step row's height within the ruler (0: no steps)
    bool steps_shown_ = true;  // set_steps_shown
    std::optional<TimelineEventDetails> flow_partner_;
    PeerFlows peer_flows_;
    TimeFlags flags_;
    bool flow_checked_ = false;
    int lane_offset_px_ = 0;  // vertical scroll
    bool syncing_scrollbars_ = false;
    bool fitted_ = true;  // showing the whole trace: a resize refits instead of cropping
    std::optional<double> origin_ns_;
    std::optional<std::pair<double, double>> extent_ns_;

    // Per visible lane, from the last frame; the vectors keep their capacity from frame to
    // frame (fresh ones cost page faults on every whole-trace frame).
    std::vector<std::vector<DrawnItem>> drawn_;
    // The items the source returned for the last frame, per visible lane, and the query they
    // answer: a repaint of the same window (hover, selection, expose) draws them again
    // without asking the source.
    struct ItemsKey {
        const TimelineSource* source = nullptr;
        std::int64_t t0 = 0, t1 = 0;
        std::size_t pixels = 0;
        int first_row = 0, last_row = -1;
        unsigned rows_generation = 0;
        bool operator==(const ItemsKey&) const = default;
    };
    ItemsKey items_key_;
    // The selection and window the flow was last looked for in.
    std::int64_t flow_event_ = -1;
    ItemsKey flow_items_key_;
    QImage band_;  // one lane's items, composed as pixels
    struct PendingLabel {
        QRect rect;
        const TimelineItem* item;
        QColor fill;
    };
    std::vector<PendingLabel> labels_to_draw_;
    std::vector<std::vector<TimelineItem>> lane_items_;
    std::vector<TimelineItem> summary_scratch_;
    LaneGroups groups_;
    int current_group_ = -1;
    std::size_t source_queries_ = 0;
    std::size_t last_frame_items_ = 0;

    std::optional<std::int64_t> selected_event_;
    std::optional<TimelineEventDetails> selected_details_;
    std::optional<std::pair<double, double>> selected_range_;
    std::pair<int, int> selected_lanes_{0, 0};

    QPoint press_pos_;
    double press_t0_ = 0;
    bool dragging_ = false;
    bool box_selecting_ = false;
};

}  // namespace meshwork::gui
