#include "gui/compare/comparison_loader.h"

#include <QDir>
#include <QFileInfo>

#include <optional>

#include "profiler/analysis/calibrate.h"
#include "core/cluster/cluster_spec.h"
#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "gui/app/format.h"
#include "gui/compare/step_origin.h"
#include "gui/compare/trace_roles.h"
#include "core/layout/layout_json.h"
#include "core/mesh/device_mesh.h"
#include "gui/timeline/trace_reader_source.h"
#include "profiler/analysis/trace_layout.h"

namespace meshwork::gui {

namespace {

// The mesh that says which pipeline stage each rank is in; none when no trace carries a layout.
std::optional<DeviceMesh> mesh_of(const profiler::TraceReader& a, const profiler::TraceReader& b) {
    if (auto layout = profiler::first_trace_layout({&a, &b})) return layout->mesh();
    return std::nullopt;
}

ComparedTrace describe(const QString& path, profiler::TraceReader reader, int warmup_steps) {
    ComparedTrace side;
    side.path = path;
    side.source_name = QString::fromStdString(reader.run_info().source);
    side.simulated = role_of(reader.run_info()) == TraceRole::Prediction;
    side.stats = profiler::compute_stats(reader, 10, warmup_steps);
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
}

void ComparisonLoader::wait() { jobs_.wait(); }

std::shared_ptr<const ComparisonData> ComparisonLoader::load_now(const QString& predicted_path,
                                                                 const QString& measured_path,
                                                                 int warmup_steps, RoleOrder order) {
    auto predicted = profiler::TraceReader::open(predicted_path.toStdString());
    auto measured = profiler::TraceReader::open(measured_path.toStdString());
    if (order == RoleOrder::FromTraces && needs_role_swap(predicted.run_info(), measured.run_info())) {
        // The simulation is the prediction whichever file was chosen first.
        return load_now(measured_path, predicted_path, warmup_steps, RoleOrder::AsGiven);
    }
    auto data = std::make_shared<ComparisonData>();
    const auto mesh = mesh_of(predicted, measured);
    data->stages_from_layout = mesh.has_value();
    const auto stage_of = [&mesh](int rank) {
        return mesh && rank < mesh->world_size() ? mesh->coords(rank).pp : rank;
    };
    data->warmup_steps = warmup_steps;
    data->comparison = profiler::compare_traces(predicted, measured, stage_of, warmup_steps);
    // Memory with the prediction's layout first: its cluster is the one the prediction was
    // made on (a calibrated one after Calibrate & Re-predict).
    if (const auto layout = profiler::first_trace_layout({&predicted, &measured})) {
        try {
            data->memory = profiler::compare_memory(*layout, measured);
            if (data->memory.has_memory) data->memory_series = profiler::memory_series(measured);
        } catch (const InputError& e) {
            data->memory.note = std::string("the layout the traces carry cannot be estimated: ") + e.what();
        }
    } else {
        data->memory.note = "neither trace carries its layout: nothing to predict memory with";
    }
    data->predicted = describe(predicted_path, std::move(predicted), warmup_steps);
    data->measured = describe(measured_path, std::move(measured), warmup_steps);
    return data;
}

std::shared_ptr<const ComparisonData> ComparisonLoader::calibrate_now(const QString& predicted_path,
                                                                      const QString& measured_path,
                                                                      const QString& out_dir,
                                                                      int warmup_steps) {
    const auto measured = profiler::TraceReader::open(measured_path.toStdString());
    const auto predicted = profiler::TraceReader::open(predicted_path.toStdString());
    // The layout that ran first: the measured trace's.
    const auto layout = profiler::first_trace_layout({&measured, &predicted});
    if (!layout) {
        throw InputError(measured_path.toStdString(), "meta.layout_json",
                         "neither trace carries the layout that ran: nothing to re-predict");
    }
    if (!QDir().mkpath(out_dir)) {
        throw RuntimeError("cannot create the folder " + out_dir.toStdString());
    }
    const QString stem = QFileInfo(measured_path).completeBaseName();
    const QString new_prediction = QDir(out_dir).filePath(stem + ".calibrated-prediction.sqlite");
    const QString cluster_path = QDir(out_dir).filePath(stem + ".calibrated-cluster.json");
    const auto r =
        profiler::calibrate_and_repredict(measured, *layout, new_prediction.toStdString(), warmup_steps);
    save_json_file(cluster_to_json(r.cluster), cluster_path.toStdString());
    auto data = std::const_pointer_cast<ComparisonData>(load_now(new_prediction, measured_path, warmup_steps));
    const auto& was = layout->cluster;
    auto link = [](const profiler::LinkFit& f) {
        if (!f.fitted) return QObject::tr("not fitted");
        QString text = f.latency_fitted
                           ? QObject::tr("latency %1 µs/step").arg(f.latency_s * 1e6, 0, 'f', 1)
                           : QString();
        if (f.bus_bandwidth_bytes_per_s > 0) {
            if (!text.isEmpty()) text += ", ";
            text += QObject::tr("busbw %1 GB/s").arg(f.bus_bandwidth_bytes_per_s / 1e9, 0, 'g', 3);
        }
        return text;
    };
    data->calibration_note =
        QObject::tr(
            "calibrated on the measurement: GEMM efficiency %1 → %2; intra-node link %3; "
            "inter-node link %4")
            // A preset that states no GEMM efficiency takes the kernel table's (core/cost/gemm_efficiency.h).
            .arg(was.efficiency.gemm > 0 ? QString::number(was.efficiency.gemm, 'g', 3) : QObject::tr("the kernel table's"))
            .arg(r.cluster.efficiency.gemm, 0, 'g', 3)
            .arg(link(r.fit.intra_node), link(r.fit.inter_node)) +
        (r.memory.fitted ? QObject::tr("; memory reserve %1 fixed + %2 % of activations and buffers")
                               .arg(format_bytes(static_cast<double>(r.memory.fixed_bytes)))
                               .arg(100 * r.memory.fragmentation, 0, 'f', 1)
                         : QString());
    data->calibrated_cluster_path = cluster_path;
    return data;
}

void ComparisonLoader::calibrate(const QString& predicted_path, const QString& measured_path,
                                 const QString& out_dir, int warmup_steps) {
    run([predicted_path, measured_path, out_dir, warmup_steps] {
        return calibrate_now(predicted_path, measured_path, out_dir, warmup_steps);
    });
}

void ComparisonLoader::load(const QString& predicted_path, const QString& measured_path, int warmup_steps,
                            RoleOrder order) {
    run([predicted_path, measured_path, warmup_steps, order] {
        return load_now(predicted_path, measured_path, warmup_steps, order);
    });
}

void ComparisonLoader::run(std::function<std::shared_ptr<const ComparisonData>()> work) {
    jobs_.start([work = std::move(work)](const JobControl&) { return work(); },
                [this](std::shared_ptr<const ComparisonData> data) { emit loaded(std::move(data)); },
                [this](const QString& message) { emit failed(message); });
}

}  // namespace meshwork::gui
