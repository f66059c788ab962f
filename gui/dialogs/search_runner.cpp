#include "gui/dialogs/search_runner.h"

#include <QMetaObject>

#include <exception>

#include "core/search/simulator_rerank.h"

namespace meshwork::gui {

SearchRunner::SearchRunner(QObject* parent) : QObject(parent) {}

SearchRunner::~SearchRunner() {
    if (worker_.joinable()) {
        worker_.request_stop();
        worker_.join();
    }
}

bool SearchRunner::start(search::SearchRequest request, bool rerank_with_simulator) {
    if (running_) return false;
    if (worker_.joinable()) worker_.join();
    running_ = true;
    // Results are queued to this object on the GUI thread. The destructor joins the worker
    // first, so `this` outlives every call the worker posts; Qt drops posted calls of a
    // deleted object.
    worker_ = std::jthread([this, request = std::move(request), rerank_with_simulator](std::stop_token stop) {
        search::SearchHooks hooks;
        hooks.stop = stop;
        hooks.progress_interval = std::chrono::milliseconds(50);
        hooks.progress = [this](std::int64_t done, std::int64_t total) {
            QMetaObject::invokeMethod(this, [this, done, total] { emit progress(done, total); }, Qt::QueuedConnection);
        };
        if (rerank_with_simulator) {
            hooks.rerank = search::simulator_rerank();
            hooks.rerank_name = search::kSimulatorRerankName;
        }
        try {
            auto result = std::make_shared<const search::SearchResult>(search::run_search(request, hooks));
            QMetaObject::invokeMethod(this, [this, result] {
                running_ = false;
                emit finished(result);
            }, Qt::QueuedConnection);
        } catch (const std::exception& e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(this, [this, message] {
                running_ = false;
                emit failed(message);
            }, Qt::QueuedConnection);
        }
    });
    return true;
}

void SearchRunner::cancel() {
    if (worker_.joinable()) worker_.request_stop();
}

}  // namespace meshwork::gui
