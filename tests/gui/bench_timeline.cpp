// Frame time of the timeline on a generated trace (MESHWORK_BENCH_EVENTS events, 5M by
// default): whole trace, a 1 ms window and a 1 µs-per-pixel zoom, at 1600×900.
// Run: bench_gui_timeline -median 5  (figures in docs/BENCHMARKS.md, "GUI").
// With MESHWORK_SCREENSHOT=FILE it also saves the zoomed-out frame as a PNG.
#include <QtTest>

#include <QPainter>

#include "app/theme.h"
#include "synthetic_trace.h"
#include "timeline/timeline_panel.h"
#include "timeline/timeline_view.h"

using namespace meshwork;
using namespace meshwork::gui;

class BenchTimeline : public QObject {
    Q_OBJECT
    std::shared_ptr<MemoryTimelineSource> trace_;
    std::unique_ptr<TimelineView> view_;
    QImage frame_;

    void paint_window(double t0, double t1) {
        view_->set_visible_window(t0, t1);
        QPainter p(&frame_);
        QBENCHMARK { view_->render_frame(p, frame_.size()); }
        qInfo("%zu items drawn", view_->last_frame_items());
    }

private slots:
    void initTestCase() {
        const qint64 events = qEnvironmentVariableIsSet("MESHWORK_BENCH_EVENTS")
                                  ? qEnvironmentVariable("MESHWORK_BENCH_EVENTS").toLongLong() : 5'000'000;
        QElapsedTimer t;
        t.start();
        trace_ = test::make_synthetic_trace({32, events, 11});
        qInfo("generated %lld events on %d lanes in %lld ms", static_cast<long long>(trace_->event_count()),
              trace_->lane_count(), static_cast<long long>(t.elapsed()));
        view_ = std::make_unique<TimelineView>();
        view_->resize(1600, 900);
        view_->set_source(trace_);
        view_->show();
        QVERIFY(QTest::qWaitForWindowExposed(view_.get()));
        frame_ = QImage(view_->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    }

    void frame_whole_trace() {
        view_->fit_all();
        const auto [a, b] = view_->visible_window();
        paint_window(a, b);
        if (qEnvironmentVariableIsSet("MESHWORK_SCREENSHOT")) save_screenshot(qEnvironmentVariable("MESHWORK_SCREENSHOT"));
    }

    // The timeline tab as the documentation shows it: dark theme, a 3 ms window in the
    // middle of the trace, one event selected.
    void save_screenshot(const QString& path) {
        apply_theme(Theme::Dark);
        TimelinePanel panel;
        panel.resize(1600, 900);
        panel.set_source(trace_, "generated trace");
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const double t0 = static_cast<double>(trace_->begin_ns()) + 0.3 * static_cast<double>(trace_->end_ns() - trace_->begin_ns());
        std::vector<TimelineItem> items;
        trace_->query(1, static_cast<std::int64_t>(t0 + 1e6), static_cast<std::int64_t>(t0 + 2e6), 1000, items);
        for (const auto& it : items) {
            if (it.count == 1) {
                panel.view()->select_event(it.event);
                break;
            }
        }
        panel.view()->set_visible_window(t0, t0 + 3e6);
        QApplication::processEvents();
        panel.grab().save(path);
    }

    void frame_1ms_window() {
        const double t0 = static_cast<double>(trace_->begin_ns()) + 0.4 * static_cast<double>(trace_->end_ns() - trace_->begin_ns());
        paint_window(t0, t0 + 1e6);
    }

    void frame_1us_per_pixel() {
        const double t0 = static_cast<double>(trace_->begin_ns()) + 0.7 * static_cast<double>(trace_->end_ns() - trace_->begin_ns());
        const double width = view_->viewport()->width() - view_->lane_header_width();
        paint_window(t0, t0 + width * 1000.0);
    }
};

QTEST_MAIN(BenchTimeline)
#include "bench_timeline.moc"
