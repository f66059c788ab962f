// The timeline over a generated trace of millions of events: folding keeps the work per
// frame bounded by pixels, zoom and pan change the window, selection finds events.
#include <QtTest>

#include <QPainter>

#include "tests/gui/synthetic_trace.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/timeline_view.h"
#include "gui/timeline/trace_reader_source.h"

using namespace meshwork;
using namespace meshwork::gui;

class TstTimeline : public QObject {
    Q_OBJECT
    std::shared_ptr<MemoryTimelineSource> trace_;

private slots:
    void initTestCase() {
        trace_ = test::make_synthetic_trace({16, 2'000'000, 7});
        QCOMPARE(trace_->lane_count(), 48);
        QVERIFY(trace_->event_count() >= 1'990'000);
    }

    void folded_items_account_for_every_event_and_stay_bounded() {
        const std::int64_t t0 = trace_->begin_ns(), t1 = trace_->end_ns();
        for (std::size_t pixels : {200u, 1500u}) {
            std::vector<TimelineItem> items;
            trace_->query(0, t0, t1 + 1, pixels, items);
            QVERIFY2(items.size() <= pixels, qPrintable(QString::number(items.size())));
            std::int64_t counted = 0;
            for (std::size_t i = 0; i < items.size(); ++i) {
                counted += items[i].count;
                if (i > 0) QVERIFY(items[i].start_ns >= items[i - 1].end_ns);
            }
            QCOMPARE(counted, trace_->event_count() / trace_->lane_count());
        }
        // Zoomed in far enough, events come back one by one with their ids.
        std::vector<TimelineItem> items;
        trace_->query(0, t0, t0 + 200'000, 1500, items);
        QVERIFY(!items.empty());
        for (const auto& it : items) {
            if (it.count == 1) QVERIFY(it.event >= 0);
        }
        QVERIFY(std::any_of(items.begin(), items.end(), [](const TimelineItem& it) { return it.count == 1; }));
    }

    void zoom_changes_the_window_and_items_stay_bounded() {
        TimelineView view;
        view.resize(1400, 700);
        view.set_source(trace_);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QImage frame(view.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        QPainter p(&frame);
        view.render_frame(p, frame.size());
        const auto [a0, b0] = view.visible_window();
        const std::size_t width = static_cast<std::size_t>(view.viewport()->width());
        const std::size_t lanes_visible = static_cast<std::size_t>(view.viewport()->height() / view.lane_height() + 1);
        QVERIFY(view.last_frame_items() > 0);
        QVERIFY2(view.last_frame_items() <= lanes_visible * width, qPrintable(QString::number(view.last_frame_items())));

        const double anchor = view.lane_header_width() + 300;
        const double t_anchor = a0 + (anchor - view.lane_header_width()) * (b0 - a0) / (width - view.lane_header_width());
        view.zoom(8.0, anchor);
        const auto [a1, b1] = view.visible_window();
        QVERIFY(std::abs((b1 - a1) - (b0 - a0) / 8) < (b0 - a0) * 1e-6);
        // The time under the cursor stays under the cursor.
        const double t_after = a1 + (anchor - view.lane_header_width()) * (b1 - a1) / (width - view.lane_header_width());
        QVERIFY(std::abs(t_after - t_anchor) < (b1 - a1) * 1e-6);
        view.render_frame(p, frame.size());
        QVERIFY(view.last_frame_items() <= lanes_visible * width);

        QTest::keyClick(&view, Qt::Key_D);  // pan right
        QVERIFY(view.visible_window().first > a1);
        QTest::keyClick(&view, Qt::Key_Home);
        QVERIFY(std::abs((view.visible_window().second - view.visible_window().first) - (b0 - a0)) < (b0 - a0) * 1e-6);
    }

    // A repaint of an unchanged window (hover, selection, expose) draws the previous
    // frame's items without asking the source; any zoom or pan asks again, and at every
    // zoom from the whole trace down to nanoseconds the items stay within lanes × pixels.
    void repaints_reuse_items_and_zooming_stays_bounded() {
        TimelineView view;
        view.resize(1400, 700);
        view.set_source(trace_);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QImage frame(view.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        QPainter p(&frame);
        view.render_frame(p, frame.size());
        const std::size_t queries = view.source_queries();
        const std::size_t items = view.last_frame_items();
        view.render_frame(p, frame.size());
        QCOMPARE(view.source_queries(), queries);
        QCOMPARE(view.last_frame_items(), items);
        const std::size_t width = static_cast<std::size_t>(view.viewport()->width() - view.lane_header_width());
        const std::size_t lanes_visible = static_cast<std::size_t>(view.viewport()->height() / view.lane_height() + 1);
        std::size_t previous_queries = view.source_queries();
        for (int step = 0; step < 60; ++step) {
            const double before = view.ns_per_pixel();
            view.zoom(2.0, view.lane_header_width() + 500);
            if (view.ns_per_pixel() == before) break;  // the deepest zoom
            view.render_frame(p, frame.size());
            QVERIFY(view.source_queries() > previous_queries);
            previous_queries = view.source_queries();
            QVERIFY2(view.last_frame_items() <= lanes_visible * width, qPrintable(QString::number(view.last_frame_items())));
        }
        QVERIFY(view.ns_per_pixel() < 0.1);
    }

    // The same through a trace file: the reader's level-of-detail windows keep every frame
    // within lanes × pixels from the whole trace down to single events.
    void trace_file_frames_stay_bounded_when_zooming() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("synthetic.sqlite");
        test::write_synthetic_trace({8, 300'000, 5}, path.toStdString());
        auto source = std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString()));
        QCOMPARE(source->lane_count(), 24);
        TimelineView view;
        view.resize(1200, 700);
        view.set_source(source);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QImage frame(view.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        QPainter p(&frame);
        const std::size_t width = static_cast<std::size_t>(view.viewport()->width() - view.lane_header_width());
        const std::size_t lanes_visible = static_cast<std::size_t>(view.viewport()->height() / view.lane_height() + 1);
        bool reached_deep_zoom = false;
        for (int step = 0; step < 60; ++step) {
            view.render_frame(p, frame.size());
            QVERIFY(view.last_frame_items() > 0);
            QVERIFY2(view.last_frame_items() <= lanes_visible * width, qPrintable(QString::number(view.last_frame_items())));
            const double before = view.ns_per_pixel();
            view.zoom(2.0, view.lane_header_width() + 300);
            if (view.ns_per_pixel() == before) break;
            reached_deep_zoom = reached_deep_zoom || view.ns_per_pixel() < 10;
        }
        QVERIFY(reached_deep_zoom);
    }

    void wheel_zooms_around_the_cursor() {
        TimelineView view;
        view.resize(1200, 500);
        view.set_source(trace_);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const auto [a0, b0] = view.visible_window();
        const QPointF pos(view.lane_header_width() + 200, 100);
        QWheelEvent wheel(pos, view.viewport()->mapToGlobal(pos), {}, QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(view.viewport(), &wheel);
        const auto [a1, b1] = view.visible_window();
        QVERIFY((b1 - a1) < (b0 - a0) * 0.7);
    }

    void click_selects_an_event_and_find_jumps_to_a_name() {
        TimelinePanel panel;
        panel.resize(1400, 800);
        panel.set_source(trace_, "synthetic");
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* view = panel.view();
        QSignalSpy selected(view, &TimelineView::event_selected);
        QVERIFY(panel.find_next("reduce_scatter"));
        QCOMPARE(selected.count(), 1);
        const auto details = selected.takeFirst().at(0).value<TimelineEventDetails>();
        QVERIFY(QString::fromStdString(details.event.name).contains("reduce_scatter"));
        const auto [a, b] = view->visible_window();
        QVERIFY(details.event.start_ns >= a && details.event.end_ns <= b);
        // The next match lies later.
        QVERIFY(panel.find_next("reduce_scatter"));
        const auto next = selected.takeFirst().at(0).value<TimelineEventDetails>();
        QVERIFY(next.event.start_ns > details.event.start_ns);
    }

    void range_statistics_add_up() {
        const std::int64_t t0 = trace_->begin_ns(), t1 = t0 + 5'000'000;
        const auto stats = trace_->range_stats(0, 2, t0, t1);
        QVERIFY(stats.events > 0);
        QVERIFY(stats.busy_ns[static_cast<int>(EventKind::Compute)] > 0);
        QVERIFY(stats.busy_ns[static_cast<int>(EventKind::Communication)] > 0);
        QVERIFY(stats.busy_ns[0] + stats.busy_ns[1] <= 3 * (t1 - t0));
    }
};

QTEST_MAIN(TstTimeline)
#include "tst_timeline.moc"
