#include "gui/compare/trace_roles.h"

#include <QObject>

namespace meshwork::gui {

TraceRole role_of(const TraceRunInfo& info) {
    return info.source == "meshwork-sim" || info.clock_domain == "simulated" ? TraceRole::Prediction
                                                                             : TraceRole::Measurement;
}

bool needs_role_swap(const TraceRunInfo& first, const TraceRunInfo& second) {
    return role_of(first) == TraceRole::Measurement && role_of(second) == TraceRole::Prediction;
}

QString comparison_prompt(const QString& open_name, TraceRole open_role) {
    return open_role == TraceRole::Prediction
               ? QObject::tr("Choose the measured trace to compare with %1 (a simulation: the prediction)")
                     .arg(open_name)
               : QObject::tr("Choose the prediction to compare with %1 (a measured run: the measurement); "
                             "a measured trace chosen here is compared against %1 instead")
                     .arg(open_name);
}

}  // namespace meshwork::gui
