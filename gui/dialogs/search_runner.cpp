#include "gui/dialogs/search_runner.h"

#include "core/search/simulator_rerank.h"

namespace meshwork::gui {

SearchRunner::SearchRunner(QObject* parent) : QObject(parent) {
    jobs_.on_progress([this](qint64 done, qint64 total) { emit progress(done, total); }, 50);
}

bool SearchRunner::start(search::SearchRequest request, bool rerank_with_simulator) {
    if (running()) return false;
    jobs_.start(
        [request = std::move(request), rerank_with_simulator](const JobControl& job) {
            search::SearchHooks hooks;
            hooks.stop = job.stop_token();
            hooks.progress_interval = std::chrono::milliseconds(50);
            hooks.progress = [&job](std::int64_t done, std::int64_t total) { job.progress(done, total); };
            if (rerank_with_simulator) {
                hooks.rerank = search::simulator_rerank();
                hooks.rerank_name = search::kSimulatorRerankName;
            }
            return std::make_shared<const search::SearchResult>(search::run_search(request, hooks));
        },
        [this](std::shared_ptr<const search::SearchResult> result) { emit finished(std::move(result)); },
        [this](const QString& message) { emit failed(message); });
    return true;
}

void SearchRunner::cancel() { jobs_.cancel(); }

}  // namespace meshwork::gui
