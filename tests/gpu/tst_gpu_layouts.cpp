// The engine's layout matrix (core/engine/reference_layouts.h) on the CUDA backend:
// every layout that fits the visible GPUs trains 3 steps with one GPU per rank and NCCL,
// and its losses and updated weights match the unsharded reference run on the CPU backend.
// A one-GPU row (the unsharded layout itself on the GPU) runs on any machine with a GPU.
// GEMMs run in fp32 here (MESHWORK_CUDA_GEMM=fp32): cuBLAS sums in another order than
// OpenBLAS and AdamW normalises each element's update, so the tolerance is 1e-3 relative
// (docs/gpu.md); TF32 or bf16 GEMMs would differ by ~1e-2 and are checked per kernel in
// tst_gpu_kernels instead.
#include <QtTest>

#include "core/engine/cuda/cuda_runtime_probe.h"
#include "core/engine/engine_run.h"
#include "core/engine/reference_layouts.h"
#include "core/layout/layout_validate.h"

using namespace meshwork;
using namespace meshwork::engine;

namespace {
constexpr double kTolerance = 1e-3;

LayoutOverrides single_gpu_overrides() {
    LayoutOverrides o = overrides_of(reference_layouts().front());
    o.dp = 1;
    o.gpus = 1;
    return o;
}
}  // namespace

class TstGpuLayouts : public QObject {
    Q_OBJECT
    int gpus_ = 0;

private slots:
    void initTestCase() {
        std::string why;
        gpus_ = cuda_device_count(&why);
        if (gpus_ == 0) QSKIP(qPrintable(QString::fromStdString(why)));
        qputenv("MESHWORK_CUDA_GEMM", "fp32");
    }

    void matches_cpu_reference_data() {
        QTest::addColumn<int>("index");
        QTest::newRow("single GPU") << -1;
        const auto& cases = reference_layouts();
        for (std::size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name) << static_cast<int>(i);
    }

    void matches_cpu_reference() {
        QFETCH(int, index);
        const LayoutOverrides o = index < 0 ? single_gpu_overrides()
                                            : overrides_of(reference_layouts()[static_cast<std::size_t>(index)]);
        const Layout layout = build_layout(std::nullopt, o);
        require_valid_layout(layout, "<test>");
        if (layout.gpus > gpus_) QSKIP(qPrintable(QString("needs %1 GPUs, %2 visible").arg(layout.gpus).arg(gpus_)));
        EngineOptions options;
        options.steps = 3;
        const ReferenceState ref = run_reference(layout, options);  // always on the CPU backend
        options.backend = BackendKind::Cuda;
        RunHooks hooks;
        hooks.reference = &ref;
        hooks.tolerance = kTolerance;
        const RunResult r = run_in_process(layout, options, hooks);
        QCOMPARE(static_cast<int>(r.steps.size()), 3);
        QVERIFY2(!r.mismatch, r.mismatch ? r.mismatch->to_string().c_str() : "");
        for (std::size_t s = 0; s < r.steps.size(); ++s) {
            qInfo("step %zu: loss %.7f (CPU reference %.7f)", s + 1, r.steps[s].loss, ref.losses[s]);
        }
    }
};

QTEST_MAIN(TstGpuLayouts)
#include "tst_gpu_layouts.moc"
