#include "gui/estimate/assessment_runner.h"

namespace meshwork::gui {

AssessmentRunner::AssessmentRunner(QObject* parent) : QObject(parent) { qRegisterMetaType<LayoutAssessment>(); }

void AssessmentRunner::wait() { jobs_.wait(); }

void AssessmentRunner::request(const Layout& layout, const QString& file) {
    // Requests are serial; a newer edit makes the queued ones stale: they are cancelled and
    // skip the work, and a result that arrives after a newer request is dropped.
    jobs_.cancel();
    const std::uint64_t generation = ++generation_;
    jobs_.start(
        [layout, file = file.toStdString(), generation](const JobControl& job) {
            if (job.stop_requested()) return LayoutAssessment{};  // stale: generation 0, dropped
            LayoutAssessment a = assess_layout(layout, file);
            a.generation = generation;
            return a;
        },
        [this](const LayoutAssessment& a) {
            if (a.generation == generation_) emit ready(a);
        },
        // assess_layout puts what is wrong with a layout in its result; anything else that
        // escapes it is a bug to see in the log, not a reason to take the window down.
        [](const QString& message) { qWarning("assessing the layout failed: %s", qPrintable(message)); });
}

}  // namespace meshwork::gui
