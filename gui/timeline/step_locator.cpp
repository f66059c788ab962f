#include "gui/timeline/step_locator.h"

#include <QMetaObject>
#include <QRegularExpression>

#include <exception>

#include "profiler/store/trace_reader.h"

namespace meshwork::gui {

bool parse_step_target(const QString& text, int& step, int& micro_batch) {
    static const QRegularExpression pattern(R"(^\s*(\d+)\s*(?:[./]\s*(\d+))?\s*$)");
    const auto m = pattern.match(text);
    if (!m.hasMatch()) return false;
    bool ok = false;
    step = m.captured(1).toInt(&ok);
    if (!ok) return false;
    micro_batch = m.captured(2).isEmpty() ? -1 : m.captured(2).toInt(&ok);
    return ok;
}

StepLocator::StepLocator(QObject* parent) : QObject(parent) {}

StepLocator::~StepLocator() {
    if (worker_.joinable()) worker_.join();
}

void StepLocator::locate(const QString& trace_path, int step, int micro_batch) {
    if (worker_.joinable()) worker_.join();
    const QString what = micro_batch >= 0 ? tr("step %1, micro-batch %2").arg(step).arg(micro_batch) : tr("step %1").arg(step);
    // The destructor joins, so `this` outlives the calls posted to it.
    worker_ = std::jthread([this, path = trace_path.toStdString(), step, micro_batch, what] {
        try {
            const auto reader = profiler::TraceReader::open(path);
            const auto span = reader.step_span(step, micro_batch);
            QMetaObject::invokeMethod(this, [this, span, what] {
                if (span) {
                    emit found(span->first, span->second, what);
                } else {
                    emit failed(tr("No event of this trace belongs to %1.").arg(what));
                }
            }, Qt::QueuedConnection);
        } catch (const std::exception& e) {
            QMetaObject::invokeMethod(this, [this, message = QString::fromUtf8(e.what())] { emit failed(message); },
                                      Qt::QueuedConnection);
        }
    });
}

}  // namespace meshwork::gui
