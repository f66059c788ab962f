// Frame time of the timeline at 1600×900: the whole trace, a 1 ms window and a 1 µs-per-pixel
// zoom, over a generated trace held in memory (MESHWORK_BENCH_EVENTS events, 5M by default)
// and the same kind of trace read from a Meshwork trace file through TraceReader
// (MESHWORK_BENCH_STORE_EVENTS, 10M by default; 0 skips it). MESHWORK_BENCH_STORE_PATH
// keeps that file between runs (it is generated when missing).
// "frame" moves the window by one pixel every other frame, so every frame asks the source
// again (as while panning); "repaint" draws an unchanged window (hover, selection), which
// the view answers from the items of the previous frame.
// "nested_flows_*": a third trace (MESHWORK_BENCH_NESTED_EVENTS, 10M by default; 0 skips it)
// with a host thread per rank whose slices nest three deep (a lane per depth), and a send
// selected, so every frame that moves also looks for its flows to other ranks (peer_flows.h).
// Run: bench_gui_timeline -perf -perfcounter task-clock -median 5  (docs/BENCHMARKS.md, "GUI").
// With MESHWORK_SCREENSHOT=FILE it also saves a timeline picture as a PNG.
#include <QtTest>

#include <QPainter>

#include "gui/app/theme.h"
#include "tests/gui/synthetic_trace.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/timeline_view.h"
#include "gui/timeline/trace_reader_source.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {
qint64 env_count(const char* name, qint64 fallback) {
    return qEnvironmentVariableIsSet(name) ? qEnvironmentVariable(name).toLongLong() : fallback;
}
}  // namespace

class BenchTimeline : public QObject {
    Q_OBJECT
    std::shared_ptr<MemoryTimelineSource> trace_;
    std::shared_ptr<TraceReaderSource> store_;
    std::unique_ptr<TimelineView> view_;
    std::unique_ptr<TimelineView> store_view_;
    std::shared_ptr<MemoryTimelineSource> nested_;
    std::unique_ptr<TimelineView> nested_view_;
    QTemporaryDir dir_;
    QImage frame_;
    std::size_t frames_painted_ = 0;

    std::unique_ptr<TimelineView> make_view(std::shared_ptr<const TimelineSource> source) {
        auto view = std::make_unique<TimelineView>();
        view->resize(1600, 900);
        view->set_source(std::move(source));
        view->show();
        if (!QTest::qWaitForWindowExposed(view.get())) qFatal("window not exposed");
        return view;
    }

    // `fraction` of the way into the trace, `width_ns` wide; a negative width: the whole trace.
    void paint(TimelineView& view, double fraction, double width_ns, bool move_every_other_frame) {
        const auto* s = view.source();
        double t0, t1;
        if (width_ns < 0) {
            view.fit_all();
            std::tie(t0, t1) = view.visible_window();
        } else {
            t0 = static_cast<double>(s->begin_ns()) + fraction * static_cast<double>(s->end_ns() - s->begin_ns());
            t1 = t0 + width_ns;
        }
        view.set_visible_window(t0, t1);
        const double px = view.ns_per_pixel();
        QPainter p(&frame_);
        const std::size_t queries_before = view.source_queries();
        QBENCHMARK {
            if (move_every_other_frame) {
                // Counted across calls: -median runs the function once per measurement.
                const double shift = (frames_painted_++ % 2) ? 0.0 : px;
                view.set_visible_window(t0 + shift, t1 + shift);
            }
            view.render_frame(p, frame_.size());
        }
        qInfo("%zu items drawn, %zu source queries", view.last_frame_items(), view.source_queries() - queries_before);
    }
    double one_us_per_px(const TimelineView& view) const {
        return (view.viewport()->width() - view.lane_header_width()) * 1000.0;
    }

private slots:
    void initTestCase() {
        const qint64 events = env_count("MESHWORK_BENCH_EVENTS", 5'000'000);
        QElapsedTimer t;
        t.start();
        trace_ = test::make_synthetic_trace({32, events, 11});
        qInfo("in memory: %lld events on %d lanes, generated in %lld ms", static_cast<long long>(trace_->event_count()),
              trace_->lane_count(), static_cast<long long>(t.elapsed()));
        view_ = make_view(trace_);
        frame_ = QImage(view_->viewport()->size(), QImage::Format_ARGB32_Premultiplied);

        const qint64 nested_events = env_count("MESHWORK_BENCH_NESTED_EVENTS", 10'000'000);
        if (nested_events > 0) {
            t.restart();
            nested_ = test::make_synthetic_trace({32, nested_events, 11, 3});
            qInfo("nested with flows: %lld events on %d lanes, generated in %lld ms",
                  static_cast<long long>(nested_->event_count()), nested_->lane_count(), static_cast<long long>(t.elapsed()));
            nested_view_ = make_view(nested_);
        }

        const qint64 store_events = env_count("MESHWORK_BENCH_STORE_EVENTS", 10'000'000);
        if (store_events <= 0) return;
        QString path = qEnvironmentVariable("MESHWORK_BENCH_STORE_PATH");
        if (path.isEmpty()) path = dir_.filePath("bench_timeline.sqlite");
        t.restart();
        if (!QFileInfo::exists(path)) test::write_synthetic_trace({32, store_events, 11}, path.toStdString());
        const qint64 write_ms = t.restart();
        store_ = std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString()));
        qInfo("trace store: %lld events on %d lanes, %.0f MB; written in %lld ms (0: kept from an earlier run), "
              "opened in %lld ms",
              static_cast<long long>(store_->event_count()), store_->lane_count(),
              static_cast<double>(QFileInfo(path).size()) / 1e6, static_cast<long long>(write_ms),
              static_cast<long long>(t.elapsed()));
        store_view_ = make_view(store_);
    }

    void frame_whole_trace() {
        paint(*view_, 0, -1, true);
        if (qEnvironmentVariableIsSet("MESHWORK_SCREENSHOT")) save_screenshot(qEnvironmentVariable("MESHWORK_SCREENSHOT"));
    }
    void repaint_whole_trace() { paint(*view_, 0, -1, false); }
    void frame_1ms_window() { paint(*view_, 0.4, 1e6, true); }
    void frame_1us_per_pixel() { paint(*view_, 0.7, one_us_per_px(*view_), true); }

    // A send of rank 0 near `fraction` of the trace selected: its flows are looked for in
    // every frame whose window moved.
    void select_send(double fraction) {
        const auto* s = nested_.get();
        const auto t = static_cast<std::int64_t>(static_cast<double>(s->begin_ns()) +
                                                 fraction * static_cast<double>(s->end_ns() - s->begin_ns()));
        std::vector<TimelineItem> items;
        for (int lane = 0; lane < s->lane_count(); ++lane) {
            if (s->lane(lane).rank != 0 || s->lane(lane).kind != TrackKind::CommStream) continue;
            s->query(lane, t, t + 2'000'000, 100000, items);
            for (const auto& it : items) {
                if (it.count == 1 && s->name(it.name_id).rfind("send(", 0) == 0) {
                    nested_view_->select_event(it.event);
                    return;
                }
            }
        }
        qWarning("no send selected");
    }
    void nested_flows_frame_whole_trace() {
        if (!nested_view_) QSKIP("MESHWORK_BENCH_NESTED_EVENTS=0");
        select_send(0.4);
        paint(*nested_view_, 0, -1, true);
    }
    void nested_flows_frame_1ms_window() {
        if (!nested_view_) QSKIP("MESHWORK_BENCH_NESTED_EVENTS=0");
        select_send(0.4);
        paint(*nested_view_, 0.4, 1e6, true);
        qInfo("flows: %s", nested_view_->peer_flows().kind == PeerFlows::Kind::None ? "none found" : "drawn");
    }
    void nested_flows_frame_1us_per_pixel() {
        if (!nested_view_) QSKIP("MESHWORK_BENCH_NESTED_EVENTS=0");
        select_send(0.7);
        paint(*nested_view_, 0.7, one_us_per_px(*nested_view_), true);
    }

    void store_frame_whole_trace() {
        if (!store_view_) QSKIP("MESHWORK_BENCH_STORE_EVENTS=0");
        paint(*store_view_, 0, -1, true);
    }
    void store_repaint_whole_trace() {
        if (!store_view_) QSKIP("MESHWORK_BENCH_STORE_EVENTS=0");
        paint(*store_view_, 0, -1, false);
    }
    void store_frame_1ms_window() {
        if (!store_view_) QSKIP("MESHWORK_BENCH_STORE_EVENTS=0");
        paint(*store_view_, 0.4, 1e6, true);
    }
    void store_frame_1us_per_pixel() {
        if (!store_view_) QSKIP("MESHWORK_BENCH_STORE_EVENTS=0");
        paint(*store_view_, 0.7, one_us_per_px(*store_view_), true);
    }

private:
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
};

QTEST_MAIN(BenchTimeline)
#include "bench_timeline.moc"
