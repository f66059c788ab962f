// Every layout of the matrix (core/engine/reference_layouts.h) trains 3 AdamW steps in-process and
// matches the unsharded reference within 1e-4 relative: losses of every step and every
// updated weight shard.
#include <QtTest>

#include <cmath>

#include "core/engine/engine_run.h"
#include "core/engine/memory_estimate.h"
#include "core/engine/precision.h"
#include "core/engine/reference_layouts.h"
#include "core/layout/layout_validate.h"

using namespace meshwork;
using namespace meshwork::engine;

class TestEngineLayouts : public QObject {
    Q_OBJECT
private slots:
    void matches_reference_data();
    void matches_reference();
    void matches_reference_in_bf16_data() { matches_reference_data(); }
    void matches_reference_in_bf16();
    void bf16_rounds_what_the_model_reads();
    void bf16_check_still_finds_a_different_model();
    void reference_learns();
    void same_layout_is_bitwise_deterministic();
    void memory_estimate_brackets_measured_peak();
    void interleaved_with_a_larger_micro_batch_group();
    void empty_end_chunks_match_the_reference();
};

// Interleaved with a micro-batch count pp does not divide (3 on pp 2): the schedule runs
// Megatron-LM's larger micro-batch group (core/schedule, interleaved_group_size) and the
// engine follows it to the reference's losses (Megatron's default group would leave
// dependency bubbles, or never finish on some shapes).
namespace {

// Runs `layout` sharded in process for `steps` steps beside the unsharded reference: the
// engine's own check finds no mismatch, and every step's loss is within 1e-4 (relative).
void check_against_reference(const Layout& layout, int steps) {
    EngineOptions options;
    options.steps = steps;
    const ReferenceState ref = run_reference(layout, options);
    RunHooks hooks;
    hooks.reference = &ref;
    hooks.tolerance = 1e-4;
    const RunResult r = run_in_process(layout, options, hooks);
    QCOMPARE(static_cast<int>(r.steps.size()), steps);
    QVERIFY2(!r.mismatch, r.mismatch ? r.mismatch->to_string().c_str() : "");
    for (int s = 0; s < steps; ++s) {
        QVERIFY(std::abs(r.steps[static_cast<std::size_t>(s)].loss - ref.losses[static_cast<std::size_t>(s)]) <=
                1e-4 * ref.losses[static_cast<std::size_t>(s)]);
    }
}

}  // namespace

void TestEngineLayouts::interleaved_with_a_larger_micro_batch_group() {
    LayoutOverrides o;
    for (const auto& c : reference_layouts()) {
        if (std::string(c.name) == "PP2 interleaved v2") o = overrides_of(c);
    }
    QVERIFY(o.schedule && *o.schedule == "interleaved");
    o.mbs = 1;
    o.gbs = 3;
    const Layout layout = build_layout(std::nullopt, o);
    require_valid_layout(layout, "<test>");
    QCOMPARE(layout.num_micro_batches(), 3);
    check_against_reference(layout, 2);
}

void TestEngineLayouts::matches_reference_data() {
    QTest::addColumn<int>("index");
    const auto& cases = reference_layouts();
    for (std::size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name) << static_cast<int>(i);
}

void TestEngineLayouts::matches_reference() {
    QFETCH(int, index);
    const auto& c = reference_layouts()[static_cast<std::size_t>(index)];
    const Layout layout = build_layout(std::nullopt, overrides_of(c));
    require_valid_layout(layout, "<test>");
    check_against_reference(layout, 3);
}

// The same matrix with the layouts in bf16 (engine/precision.h): sharded and reference runs
// round the same tensors, so they differ only where a different summation order, or a
// partial sum rounded before its reduction, moves a value across a bf16 rounding boundary.
// The tolerance is derived in docs/engine.md ("bf16").
void TestEngineLayouts::matches_reference_in_bf16() {
    QFETCH(int, index);
    const auto& c = reference_layouts()[static_cast<std::size_t>(index)];
    LayoutOverrides o = overrides_of(c);
    o.dtype = "bf16";
    const Layout layout = build_layout(std::nullopt, o);
    require_valid_layout(layout, "<test>");
    QCOMPARE(precision_of(layout), Precision::Bf16);
    EngineOptions options;
    options.steps = 3;
    const ReferenceState ref = run_reference(layout, options);
    RunHooks hooks;
    hooks.reference = &ref;
    hooks.tolerance = default_check_tolerance(Precision::Bf16).weights;
    hooks.loss_tolerance = default_check_tolerance(Precision::Bf16).loss;
    const RunResult r = run_in_process(layout, options, hooks);
    QVERIFY2(!r.mismatch, r.mismatch ? r.mismatch->to_string().c_str() : "");
}

// bf16 changes the numbers (the reference in fp32 and in bf16 differ by about bf16's
// precision, not by fp32's), and every value the CPU backend reads as bf16 is one.
void TestEngineLayouts::bf16_rounds_what_the_model_reads() {
    QCOMPARE(round_to_bf16(1.0f), 1.0f);
    QCOMPARE(round_to_bf16(1.0f + 1.0f / 256), 1.0f);            // a tie: to even
    QCOMPARE(round_to_bf16(1.0f + 3.0f / 256), 1.0f + 4.0f / 256);  // a tie: to even (up)
    QCOMPARE(round_to_bf16(1.0f + 1.0f / 128), 1.0f + 1.0f / 128);  // bf16's spacing at 1
    QVERIFY(std::isnan(round_to_bf16(std::nanf(""))));
    QVERIFY(std::isinf(round_to_bf16(3.4e38f)));  // beyond bf16's largest finite value

    LayoutOverrides o = overrides_of(reference_layouts()[0]);
    o.dp = 1;
    o.gpus = 1;
    EngineOptions options;
    options.steps = 2;
    o.dtype = "fp32";
    const RunResult fp32 = run_in_process(build_layout(std::nullopt, o), options, {});
    o.dtype = "bf16";
    const RunResult bf16 = run_in_process(build_layout(std::nullopt, o), options, {});
    for (std::size_t s = 0; s < fp32.steps.size(); ++s) {
        const double rel = std::abs(bf16.steps[s].loss - fp32.steps[s].loss) / fp32.steps[s].loss;
        QVERIFY2(rel > 1e-6 && rel < 2e-2, std::to_string(rel).c_str());
    }
}

// The bf16 tolerances still flag a run that is not the reference's. A reference trained
// with half the learning rate stands for a bug that changes every update of every tensor by
// half (docs/engine.md, "bf16": after 3 steps ~0.05 relative, while bf16 rounding stays
// within 0.011 on the matrix). The losses alone barely see it; the weights do.
void TestEngineLayouts::bf16_check_still_finds_a_different_model() {
    LayoutOverrides o = overrides_of(reference_layouts()[1]);
    o.dtype = "bf16";
    const Layout layout = build_layout(std::nullopt, o);
    EngineOptions options;
    options.steps = 3;
    EngineOptions half = options;
    half.lr = options.lr / 2;
    const ReferenceState ref = run_reference(layout, half);
    RunHooks hooks;
    hooks.reference = &ref;
    hooks.tolerance = default_check_tolerance(Precision::Bf16).weights;
    hooks.loss_tolerance = 1.0;  // look at the weights
    const RunResult r = run_in_process(layout, options, hooks);
    QVERIFY(r.mismatch.has_value());
    QVERIFY2(r.mismatch->tensor != "loss" && r.mismatch->rel_error > hooks.tolerance,
             r.mismatch->to_string().c_str());
}

void TestEngineLayouts::reference_learns() {
    // The synthetic stream is predictable (each token follows from the previous one up to
    // 2 bits): 20 steps on fresh batches lower the loss from about ln(256).
    LayoutOverrides o = overrides_of(reference_layouts()[0]);
    o.dp = 1;
    o.gpus = 1;
    EngineOptions options;
    options.steps = 20;
    options.lr = 3e-3f;
    const RunResult r = run_in_process(build_layout(std::nullopt, o), options, {});
    QVERIFY(std::abs(r.steps.front().loss - std::log(256.0)) < 0.1);
    QVERIFY2(r.steps.back().loss < r.steps.front().loss - 0.3, std::to_string(r.steps.back().loss).c_str());
}

void TestEngineLayouts::same_layout_is_bitwise_deterministic() {
    const Layout layout = build_layout(std::nullopt, overrides_of(reference_layouts()[7]));
    EngineOptions options;
    options.steps = 2;
    const RunResult a = run_in_process(layout, options, {});
    const RunResult b = run_in_process(layout, options, {});
    for (std::size_t s = 0; s < a.steps.size(); ++s) QCOMPARE(a.steps[s].loss, b.steps[s].loss);
}

void TestEngineLayouts::memory_estimate_brackets_measured_peak() {
    for (int index : {0, 5, 7, 11}) {
        const Layout layout = build_layout(std::nullopt, overrides_of(reference_layouts()[static_cast<std::size_t>(index)]));
        EngineOptions options;
        options.steps = 1;
        const auto predicted = estimate_memory(layout, options);
        const RunResult r = run_in_process(layout, options, {});
        QCOMPARE(predicted.size(), r.peak_bytes.size());
        for (std::size_t rank = 0; rank < predicted.size(); ++rank) {
            const double ratio = static_cast<double>(predicted[rank].peak_bytes) / static_cast<double>(r.peak_bytes[rank]);
            const std::string msg = reference_layouts()[static_cast<std::size_t>(index)].name +
                                    std::string(" rank ") + std::to_string(rank) + ": predicted/measured = " + std::to_string(ratio);
            QVERIFY2(ratio > 0.7 && ratio < 1.5, msg.c_str());
        }
    }
}

// Megatron-LM's accounted split with one layer per chunk: the first chunk holds only the
// embedding, the last only the head and loss (0, 1, 1, 1, 1, 0 over pp 2 × vpp 3). The
// engine builds chunks without blocks and still matches the unsharded reference.
void TestEngineLayouts::empty_end_chunks_match_the_reference() {
    LayoutOverrides o;
    for (const auto& c : reference_layouts()) {
        if (std::string(c.name) == "PP2 interleaved v2") o = overrides_of(c);
    }
    QVERIFY(o.schedule && *o.schedule == "interleaved");
    o.vpp = 3;
    o.account_for_embedding = o.account_for_loss = true;
    const Layout layout = build_layout(std::nullopt, o);
    require_valid_layout(layout, "<test>");
    QCOMPARE(layout.stage_layers(), (std::vector<int>{0, 1, 1, 1, 1, 0}));
    check_against_reference(layout, 2);
}

QTEST_APPLESS_MAIN(TestEngineLayouts)
#include "tst_engine_layouts.moc"
