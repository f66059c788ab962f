// Frame time of the GUI at cluster scale (plain timed harness; results in docs/BENCHMARKS.md,
// "GUI at cluster scale"):
//   QT_QPA_PLATFORM=offscreen bench_gui_cluster [KERNELS=200] [PATH=/tmp/bench_gui_cluster.sqlite] [FRAMES=40]
// Writes (once; kept at PATH) a trace of the bundled 1,024-GPU layout (gpt3-175b-a100-1024:
// tp 8 × dp 8 × pp 16) with the profiler's TraceWriter: per rank a compute stream of KERNELS
// kernels a step, comm:tp and comm:dp streams and a host lane, 8 steps, rank 517 slowed 1.5×.
// Then, through TraceReaderSource (the path every opened trace takes), paints the timeline
// at 1600×900 at zooms from the whole trace to 20 µs, in the layout it opens with (dp
// replicas collapsed) and fully expanded at the top and the middle of its 4,000+ rows,
// moving the window one pixel every other frame so that every frame queries the trace; and
// paints the rank overview of the trace's rank × step matrix. Prints per-frame wall and
// CPU time (min / median / max) and the items drawn.
#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "gui/app/theme.h"
#include "gui/ranks/rank_overview.h"
#include "gui/timeline/timeline_view.h"
#include "gui/timeline/trace_reader_source.h"
#include "profiler/analysis/rank_steps.h"
#include "profiler/analysis/trace_layout.h"
#include "tests/gui/cluster_trace.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {

double cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Figures {
    double min = 0, median = 0, max = 0;
};

Figures figures(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v.front(), v[v.size() / 2], v.back()};
}

// Paints `frames` frames of `paint(frame)`, printing per-frame wall and CPU ms.
template <class Paint, class Items>
void measure(const char* what, int frames, Paint paint, Items items) {
    // MESHWORK_BENCH_ONLY=TEXT: only the measures whose name contains TEXT (profiling one).
    if (const QString only = qEnvironmentVariable("MESHWORK_BENCH_ONLY"); !only.isEmpty() && !QString(what).contains(only)) {
        return;
    }
    std::vector<double> wall, cpu;
    for (int f = 0; f < frames; ++f) {
        QElapsedTimer t;
        t.start();
        const double c0 = cpu_ms();
        paint(f);
        cpu.push_back(cpu_ms() - c0);
        wall.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    }
    const auto w = figures(wall), c = figures(cpu);
    std::printf("%-44s wall %6.2f / %6.2f / %6.2f ms   cpu %6.2f / %6.2f / %6.2f ms   %8zu items\n", what, w.min,
                w.median, w.max, c.min, c.median, c.max, items());
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const QStringList args = QApplication::arguments();
    const int kernels = args.size() > 1 ? args[1].toInt() : 200;
    const std::string path = args.size() > 2 ? args[2].toStdString() : "/tmp/bench_gui_cluster.sqlite";
    const int frames = args.size() > 3 ? args[3].toInt() : 40;
    apply_theme(Theme::Dark);

    QElapsedTimer t;
    t.start();
    if (!QFileInfo::exists(QString::fromStdString(path))) {
        test::ClusterTraceShape shape;
        shape.steps = 8;
        shape.kernels_per_step = kernels;
        shape.slow_rank = 517;
        shape.slow_factor = 1.5;
        const auto events = test::write_cluster_trace(shape, path);
        std::printf("wrote %lld events to %s in %.1f s\n", static_cast<long long>(events), path.c_str(),
                    static_cast<double>(t.elapsed()) / 1e3);
    }
    t.restart();
    auto source = std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path));
    std::printf("opened: %lld events, %d lanes, %.1f MB, in %lld ms (tracks sorted, layout read)\n",
                static_cast<long long>(source->event_count()), source->lane_count(),
                static_cast<double>(QFileInfo(QString::fromStdString(path)).size()) / 1e6,
                static_cast<long long>(t.elapsed()));

    TimelineView view;
    view.resize(1600, 900);
    t.restart();
    view.set_source(source);
    std::printf("set_source (lane groups built): %lld ms, %d rows\n", static_cast<long long>(t.elapsed()),
                view.lane_groups().row_count());
    view.show();
    QApplication::processEvents();
    QImage frame(view.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    std::printf("viewport %dx%d, %d px of track, %d rows visible\n", frame.width(), frame.height(),
                frame.width() - view.lane_header_width(), (frame.height() - view.ruler_height()) / view.lane_height());

    const double begin = static_cast<double>(source->begin_ns()), end = static_cast<double>(source->end_ns());
    struct Zoom {
        const char* name;
        double width_ns;  // < 0: the whole trace
    };
    const Zoom zooms[] = {{"whole trace", -1}, {"one step (1/8)", (end - begin) / 8}, {"1 ms", 1e6},
                          {"200 us", 2e5}, {"20 us", 2e4}};
    auto run_zooms = [&](const char* layout) {
        for (const auto& z : zooms) {
            double a = begin, b = end;
            if (z.width_ns < 0) {
                view.fit_all();
                std::tie(a, b) = view.visible_window();
            } else {
                a = begin + 0.45 * (end - begin);
                b = a + z.width_ns;
            }
            view.set_visible_window(a, b);
            const double px = view.ns_per_pixel();
            QPainter p(&frame);
            const std::string what = std::string(layout) + ", " + z.name;
            measure(
                what.c_str(), frames,
                [&](int f) {
                    const double shift = f % 2 ? 0.0 : px;  // a new window every other frame
                    view.set_visible_window(a + shift, b + shift);
                    view.render_frame(p, frame.size());
                },
                [&] { return view.last_frame_items(); });
        }
    };
    run_zooms("opened (replicas collapsed)");
    view.set_all_groups_collapsed(false);
    view.scroll_to_row(0);
    run_zooms("expanded, top");
    view.scroll_to_row(view.lane_groups().row_count() / 2);
    run_zooms("expanded, middle");
    view.set_all_groups_collapsed(true);
    run_zooms("every group collapsed");
    if (qEnvironmentVariableIsSet("MESHWORK_SCREENSHOT_TIMELINE")) {
        view.set_all_groups_collapsed(false);
        view.set_group_collapsed(0, true);
        view.show_ranks({517});
        view.fit_all();
        QApplication::processEvents();
        view.grab().save(qEnvironmentVariable("MESHWORK_SCREENSHOT_TIMELINE"));
    }

    if (qEnvironmentVariableIsSet("MESHWORK_BENCH_ONLY") && !qEnvironmentVariable("MESHWORK_BENCH_ONLY").contains("overview")) {
        return 0;
    }
    // The rank overview: the matrix computed once (the Ranks tab's worker-thread job), then
    // frames of the heatmap.
    t.restart();
    const double c0 = cpu_ms();
    auto reader = profiler::TraceReader::open(path);
    auto matrix = profiler::compute_rank_steps(reader);
    const auto layout = profiler::trace_layout(reader);
    const DeviceMesh mesh = layout->mesh();
    auto data = std::make_shared<RankOverviewData>(make_rank_overview_data(std::move(matrix), &mesh, "bench"));
    std::printf("rank × step matrix: %zu ranks × %zu steps in %lld ms (cpu %.0f ms), off the GUI thread\n",
                data->matrix.ranks.size(), data->matrix.steps.size(), static_cast<long long>(t.elapsed()),
                cpu_ms() - c0);
    RankOverview overview;
    overview.resize(1600, 900);
    overview.set_data(data);
    overview.show();
    QApplication::processEvents();
    QImage overview_frame(overview.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    for (const auto metric : {RankMetric::StepTime, RankMetric::ExposedComm}) {
        overview.set_metric(metric);
        QPainter p(&overview_frame);
        measure(metric == RankMetric::StepTime ? "rank overview, step time" : "rank overview, exposed comm", frames,
                [&](int) { overview.render_frame(p, overview_frame.size()); }, [&] { return data->matrix.cells.size(); });
    }
    if (qEnvironmentVariableIsSet("MESHWORK_SCREENSHOT_OVERVIEW")) {
        // FILE.png gives FILE-step.png and FILE-comm.png.
        QString base = qEnvironmentVariable("MESHWORK_SCREENSHOT_OVERVIEW");
        base.chop(4);
        overview.set_metric(RankMetric::StepTime);
        overview.grab().save(base + "-step.png");
        overview.set_metric(RankMetric::ExposedComm);
        overview.grab().save(base + "-comm.png");
    }
    t.restart();
    for (int i = 0; i < 10; ++i) overview.set_metric(i % 2 ? RankMetric::StepTime : RankMetric::ExposedComm);
    std::printf("metric switch (scale + cell image of %zu cells): %.2f ms\n", data->matrix.cells.size(),
                static_cast<double>(t.nsecsElapsed()) / 1e7);
    return 0;
}
