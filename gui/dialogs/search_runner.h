// Runs a layout search (core/search) on a worker thread for the search dialog: progress
// arrives on the GUI thread at most every 50 ms, cancel() asks the search to stop at its
// next mesh shape, and the result (cancelled or not) arrives once through finished().
#pragma once

#include <QObject>

#include <memory>

#include "core/search/search.h"
#include "gui/app/background_jobs.h"

namespace meshwork::gui {

class SearchRunner : public QObject {
    Q_OBJECT
public:
    explicit SearchRunner(QObject* parent = nullptr);

    // Starts a search; false when one is already running.
    bool start(search::SearchRequest request, bool rerank_with_simulator);
    void cancel();
    [[nodiscard]] bool running() const { return jobs_.running(); }

signals:
    void progress(qint64 done, qint64 total);
    void finished(std::shared_ptr<const meshwork::search::SearchResult> result);
    void failed(const QString& message);

private:
    BackgroundJobs jobs_;  // cancels and waits for a running search when destroyed
};

}  // namespace meshwork::gui
