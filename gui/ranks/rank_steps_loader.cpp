#include "gui/ranks/rank_steps_loader.h"

#include <QFileInfo>

#include "gui/trace/remote_trace_source.h"
#include "profiler/analysis/rank_step_bound.h"
#include "profiler/analysis/trace_layout.h"

namespace meshwork::gui {

namespace {
// The phases the progress bar walks through; computing the matrix is the long one.
enum Phase { kOpening, kComputing, kGrouping, kPhases };
}  // namespace

RankStepsLoader::RankStepsLoader(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<const RankOverviewData>>();
    jobs_.on_progress([this](qint64 done, qint64 total) { emit progress(phase_, done, total); });
}

void RankStepsLoader::load(const QString& path) {
    const int generation = ++generation_;
    jobs_.cancel();  // an older load's result is stale
    phase_ = tr("Opening %1…").arg(QFileInfo(path).fileName());
    emit progress(phase_, 0, kPhases);
    jobs_.start(
        [this, path](const JobControl& job) -> std::shared_ptr<const RankOverviewData> {
            if (job.stop_requested()) return nullptr;
            // A remote trace's matrix is computed where the trace lies (serve-trace's
            // rank_steps): only the matrix crosses the network.
            RemoteSpec remote;
            const bool served = is_remote_trace(path, remote);
            std::unique_ptr<profiler::remote::TraceClient> client;
            std::optional<profiler::TraceReader> reader;
            if (served) client = connect_remote_trace(remote);
            else reader.emplace(profiler::TraceReader::open(path.toStdString()));
            job.post([this] { phase_ = tr("Computing step times per rank…"); });
            job.progress(kComputing, kPhases);
            auto matrix = served ? client->rank_steps() : profiler::compute_rank_steps_bounded(*reader);
            if (job.stop_requested()) return nullptr;
            job.post([this] { phase_ = tr("Grouping ranks by mesh coordinates…"); });
            job.progress(kGrouping, kPhases);
            // A layout that does not parse leaves the ranks in rank order, and says why.
            const profiler::TraceMesh mesh =
                served ? client->mesh()  // preset names only: no local file a peer names is opened
                       : profiler::trace_mesh(reader->path(), reader->run_info());
            auto data = std::make_shared<RankOverviewData>(
                make_rank_overview_data(std::move(matrix), mesh.get(), QFileInfo(path).fileName()));
            data->layout_error = QString::fromStdString(mesh.error);
            job.progress(kPhases, kPhases);
            return data;
        },
        [this, path, generation](std::shared_ptr<const RankOverviewData> data) {
            if (generation != generation_ || !data) return;
            emit loaded(std::move(data), path);
        },
        [this, path, generation](const QString& message) {
            if (generation == generation_) emit failed(path, message);
        });
}

}  // namespace meshwork::gui
