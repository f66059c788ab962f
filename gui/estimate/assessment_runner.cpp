#include "gui/estimate/assessment_runner.h"

#include <QMetaObject>
#include <QPointer>

namespace meshwork::gui {

AssessmentRunner::AssessmentRunner(QObject* parent) : QObject(parent) {
    qRegisterMetaType<LayoutAssessment>();
    pool_.setMaxThreadCount(1);  // requests are serial; stale ones are skipped below
}

AssessmentRunner::~AssessmentRunner() { pool_.waitForDone(); }

void AssessmentRunner::wait() { pool_.waitForDone(); }

void AssessmentRunner::request(const Layout& layout, const QString& file) {
    const std::uint64_t generation = ++generation_;
    QPointer<AssessmentRunner> self(this);
    pool_.start([self, this, layout, file = file.toStdString(), generation] {
        if (generation != generation_.load()) return;  // a newer edit is queued
        LayoutAssessment a = assess_layout(layout, file);
        a.generation = generation;
        QMetaObject::invokeMethod(this, [self, a] {
            if (self && a.generation == self->generation_.load()) emit self->ready(a);
        }, Qt::QueuedConnection);
    });
}

}  // namespace meshwork::gui
