// Runs assess_layout() on a worker thread for each layout change and reports the newest
// result only: a result for a layout that was edited again meanwhile is dropped.
#pragma once

#include <QObject>

#include <cstdint>

#include "gui/app/background_jobs.h"
#include "gui/estimate/layout_assessment.h"

namespace meshwork::gui {

class AssessmentRunner : public QObject {
    Q_OBJECT
public:
    explicit AssessmentRunner(QObject* parent = nullptr);
    void request(const Layout& layout, const QString& file);
    // Blocks until the worker is idle (tests, shutdown).
    void wait();

signals:
    void ready(const meshwork::gui::LayoutAssessment& assessment);

private:
    std::uint64_t generation_ = 0;  // of the newest request
    BackgroundJobs jobs_;
};

}  // namespace meshwork::gui
