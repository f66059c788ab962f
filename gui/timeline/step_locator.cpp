#include "gui/timeline/step_locator.h"

#include <QRegularExpression>

#include <optional>
#include <utility>

#include "gui/trace/remote_trace_source.h"
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

void StepLocator::locate(const QString& trace_path, int step, int micro_batch) {
    const QString what = micro_batch >= 0 ? tr("step %1, micro-batch %2").arg(step).arg(micro_batch) : tr("step %1").arg(step);
    jobs_.start(
        [trace_path, step, micro_batch](const JobControl&) {
            // A remote trace is asked over a session of its own, as a local one is read
            // by a reader of its own: the timeline's is busy painting.
            RemoteSpec remote;
            if (is_remote_trace(trace_path, remote)) return connect_remote_trace(remote)->step_span(step, micro_batch);
            return profiler::TraceReader::open(trace_path.toStdString()).step_span(step, micro_batch);
        },
        [this, what](std::optional<std::pair<std::int64_t, std::int64_t>> span) {
            if (span) {
                emit found(span->first, span->second, what);
            } else {
                emit failed(tr("No event of this trace belongs to %1.").arg(what));
            }
        },
        [this](const QString& message) { emit failed(message); });
}

}  // namespace meshwork::gui
