#include "compare/comparison_loader.h"

#include <QMetaObject>

#include <exception>
#include <optional>

#include "common/json_reader.h"
#include "compare/step_origin.h"
#include "layout/layout_json.h"
#include "mesh/device_mesh.h"
#include "timeline/trace_reader_source.h"

namespace meshwork::gui {

namespace {

// The mesh that says which pipeline stage each rank is in: from the layout a trace carries
// (as `meshwork-cli compare` does without --layout); none when neither carries one.
std::optional<DeviceMesh> mesh_of(const profiler::TraceReader& a, const profiler::TraceReader& b) {
    for (const auto* t : {&a, &b}) {
        if (t->run_info().layout_json.empty()) continue;
        const auto layout = layout_from_json(parse_json_text(t->run_info().layout_json, t->path()),
                                             t->path() + " (meta.layout_json)");
        return layout.mesh();
    }
    return std::nullopt;
}

ComparedTrace describe(const QString& path, profiler::TraceReader reader) {
    ComparedTrace side;
    side.path = path;
    side.source_name = QString::fromStdString(reader.run_info().source);
    side.stats = profiler::compute_stats(reader, 10);
    if (const auto start = first_step_start_ns(reader)) {
        side.origin_ns = static_cast<double>(*start);
        side.origin_label = QObject::tr("step start");
    } else {
        side.origin_ns = static_cast<double>(reader.start_ns());
        side.origin_label = QObject::tr("first event");
    }
    side.timeline = std::make_shared<TraceReaderSource>(std::move(reader));
    return side;
}

}  // namespace

ComparisonLoader::ComparisonLoader(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<const ComparisonData>>();
    pool_.setMaxThreadCount(1);
}

ComparisonLoader::~ComparisonLoader() { pool_.waitForDone(); }

void ComparisonLoader::wait() { pool_.waitForDone(); }

std::shared_ptr<const ComparisonData> ComparisonLoader::load_now(const QString& predicted_path,
                                                                 const QString& measured_path) {
    auto predicted = profiler::TraceReader::open(predicted_path.toStdString());
    auto measured = profiler::TraceReader::open(measured_path.toStdString());
    auto data = std::make_shared<ComparisonData>();
    const auto mesh = mesh_of(predicted, measured);
    data->stages_from_layout = mesh.has_value();
    const auto stage_of = [&mesh](int rank) {
        return mesh && rank < mesh->world_size() ? mesh->coords(rank).pp : rank;
    };
    data->comparison = profiler::compare_traces(predicted, measured, stage_of);
    data->predicted = describe(predicted_path, std::move(predicted));
    data->measured = describe(measured_path, std::move(measured));
    return data;
}

void ComparisonLoader::load(const QString& predicted_path, const QString& measured_path) {
    pool_.start([this, predicted_path, measured_path] {
        std::shared_ptr<const ComparisonData> data;
        QString error;
        try {
            data = load_now(predicted_path, measured_path);
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(this, [this, data, error] {
            if (data) emit loaded(data);
            else emit failed(error);
        }, Qt::QueuedConnection);
    });
}

}  // namespace meshwork::gui
