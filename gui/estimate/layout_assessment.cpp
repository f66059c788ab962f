#include "gui/estimate/layout_assessment.h"

#include "gui/app/format.h"

#include <QElapsedTimer>
#include <QObject>

#include <algorithm>

#include "core/common/error.h"
#include "core/cost/cost_model.h"
#include "core/layout/layout_summary.h"

namespace meshwork::gui {

LayoutAssessment assess_layout(const Layout& layout, const std::string& file) {
    QElapsedTimer timer;
    timer.start();
    LayoutAssessment a;
    a.validation = validate_layout(layout, file);
    using U = Figure::Unit;
    const auto model = model_summary_json(layout.model, layout.training.seq_length);
    a.figures.push_back({"params_total", QObject::tr("Parameters"), model.value("params_total", 0.0), U::Count});
    if (layout.model.is_moe()) {
        a.figures.push_back({"params_active", QObject::tr("Active parameters"), model.value("params_active", 0.0), U::Count});
    }
    a.figures.push_back({"flops_per_token", QObject::tr("FLOPs per token (fwd+bwd)"),
                         model.value("flops_per_token", 0.0), U::Count});
    const auto& t = layout.training;
    a.figures.push_back({"tokens_per_step", QObject::tr("Tokens per step"),
                         static_cast<double>(t.global_batch_size) * t.seq_length, U::Count});
    a.figures.push_back({"micro_batches", QObject::tr("Micro-batches per pipeline"),
                         static_cast<double>(layout.num_micro_batches()), U::Plain});
    a.figures.push_back({"pipeline_chunks", QObject::tr("Pipeline chunks (pp×vpp)"),
                         static_cast<double>(layout.parallel.mesh.pp) * layout.parallel.vpp, U::Plain});
    a.figures.push_back({"dp", QObject::tr("Data-parallel replicas"), static_cast<double>(layout.parallel.mesh.dp), U::Plain});
    a.estimate_available = false;
    if (!a.validation.valid()) {
        a.estimate_note = QObject::tr("Fix the errors below to see step time, MFU and memory.");
    } else {
        try {
            const Estimate e = estimate_layout(layout);
            a.figures.push_back({"step_time_s", QObject::tr("Step time"), e.step_time_s, U::Seconds});
            a.figures.push_back({"tokens_per_s", QObject::tr("Tokens/s"), e.tokens_per_s, U::Count});
            a.figures.push_back({"mfu", QObject::tr("MFU"), e.mfu, U::Fraction});
            a.figures.push_back({"model_tflops", QObject::tr("Model TFLOP/s per GPU"), e.model_tflops_per_gpu, U::Plain});
            a.figures.push_back({"bubble", QObject::tr("Pipeline bubble"), e.bubble_fraction, U::Fraction});
            a.figures.push_back({"exposed_comm_s", QObject::tr("Exposed communication"), e.exposed_comm_s, U::Seconds});
            double peak = 0;
            for (const auto& st : e.stages) {
                peak = std::max(peak, static_cast<double>(st.peak_bytes));
                a.stage_memory_bytes.emplace_back(static_cast<double>(st.peak_bytes),
                                                  static_cast<double>(layout.cluster.gpu.hbm_bytes));
                StageMemoryBreakdown bars;
                bars.stage = st.stage;
                bars.capacity_bytes = static_cast<double>(layout.cluster.gpu.hbm_bytes);
                bars.bytes = {static_cast<double>(st.params_bytes), static_cast<double>(st.grads_bytes),
                              static_cast<double>(st.optimizer_bytes), static_cast<double>(st.activations_bytes),
                              static_cast<double>(st.buffers_bytes), static_cast<double>(st.reserved_bytes)};
                a.stage_memory.push_back(bars);
            }
            a.figures.push_back({"peak_bytes", QObject::tr("Peak memory per GPU"), peak, U::Bytes});
            a.estimate_available = true;
            a.fits = e.fits;
            a.overflow_bytes = static_cast<double>(e.max_overflow_bytes);
            a.worst_stage = e.worst_stage;
            if (!e.fits) {
                a.estimate_note = QObject::tr("Stage %1 does not fit: %2 over the GPU's memory.")
                                      .arg(e.worst_stage)
                                      .arg(format_bytes(static_cast<double>(e.max_overflow_bytes)));
            }
        } catch (const InputError& e) {
            a.estimate_note = QString::fromStdString(e.what());
        }
    }
    a.elapsed_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    return a;
}

Verdict verdict_of(const LayoutAssessment& a) {
    if (!a.validation.valid()) return Verdict::Invalid;
    return a.estimate_available && !a.fits ? Verdict::DoesNotFit : Verdict::Valid;
}

QString verdict_text(const LayoutAssessment& a, bool warnings) {
    QString text;
    switch (verdict_of(a)) {
        case Verdict::Invalid:
            return QObject::tr("Invalid layout · %n error(s)", "", static_cast<int>(a.validation.errors.size()));
        case Verdict::DoesNotFit:
            text = QObject::tr("Valid layout · does not fit: stage %1 over HBM by %2 GiB")
                       .arg(a.worst_stage)
                       .arg(a.overflow_bytes / (1u << 30), 0, 'f', 1);
            break;
        case Verdict::Valid:
            text = a.estimate_available ? QObject::tr("Valid layout · fits") : QObject::tr("Valid layout");
            break;
    }
    if (warnings && !a.validation.warnings.empty()) {
        text += QObject::tr(" · %n warning(s)", "", static_cast<int>(a.validation.warnings.size()));
    }
    return text;
}

}  // namespace meshwork::gui
