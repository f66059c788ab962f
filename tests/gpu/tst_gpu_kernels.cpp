// Every Backend op of the CUDA backend against the CPU backend on the same data. Tolerances
// (max error relative to max(1, |reference|)): 1e-5 for fp32 kernels and fp32 GEMMs (only
// summation order differs), 5e-3 for TF32 GEMMs (10-bit mantissa products), 2e-2 for bf16
// GEMMs (8-bit mantissa inputs); docs/gpu.md lists them.
#include "tests/gpu/gpu_test_support.h"

using namespace gpu_test;

namespace {
constexpr double kFp32Tol = 1e-5;
constexpr double kTf32Tol = 5e-3;
constexpr double kBf16Tol = 2e-2;
}  // namespace

class TestGpuKernels : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { MESHWORK_REQUIRE_GPUS(1); }

    void fill_normal_matches_cpu() {
        Twin t;
        const std::size_t n = 100'003;
        auto x = t.zeros<float>(n);
        t.run([&](Backend& be, bool g) {
            be.fill_normal(on(x, g), n, 77, 1'000'000, 0.02f, be.compute_stream());
        });
        QVERIFY2(t.error(x, n) < 1e-6, "fill_normal differs from the counter stream");
    }

    void gemm_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<double>("tol");
        QTest::newRow("fp32") << static_cast<int>(CudaGemmMode::Fp32) << kFp32Tol;
        QTest::newRow("tf32") << static_cast<int>(CudaGemmMode::Tf32) << kTf32Tol;
        QTest::newRow("bf16") << static_cast<int>(CudaGemmMode::Bf16) << kBf16Tol;
    }
    void gemm() {
        QFETCH(int, mode);
        QFETCH(double, tol);
        Twin t(static_cast<CudaGemmMode>(mode));
        // Odd sizes, padded leading dimensions, accumulate with beta, every transpose pair.
        const int m = 67, n = 45, k = 129, pad = 3;
        for (Transpose ta : {Transpose::No, Transpose::Yes}) {
            for (Transpose tb : {Transpose::No, Transpose::Yes}) {
                const int lda = (ta == Transpose::No ? k : m) + pad;
                const int ldb = (tb == Transpose::No ? n : k) + pad;
                const int ldc = n + pad;
                const int rows_a = ta == Transpose::No ? m : k, rows_b = tb == Transpose::No ? k : n;
                auto a = t.up(randn(static_cast<std::size_t>(rows_a) * lda, 1));
                auto b = t.up(randn(static_cast<std::size_t>(rows_b) * ldb, 2));
                auto c = t.up(randn(static_cast<std::size_t>(m) * ldc, 3));
                t.run([&](Backend& be, bool g) {
                    be.gemm(ta, tb, m, n, k, 0.5f, on(a, g), lda, on(b, g), ldb, 0.25f, on(c, g),
                            ldc, be.compute_stream());
                });
                const double err = t.error(c, static_cast<std::size_t>(m) * ldc);
                QVERIFY2(err < tol, qPrintable(QString("ta=%1 tb=%2 error %3")
                                                   .arg(ta == Transpose::Yes)
                                                   .arg(tb == Transpose::Yes)
                                                   .arg(err)));
            }
        }
        // k = 0 scales C by beta.
        auto c0 = t.up(randn(12, 4));
        t.run([&](Backend& be, bool g) {
            be.gemm(Transpose::No, Transpose::No, 3, 4, 0, 1.0f, nullptr, 1, nullptr, 4, 0.5f,
                    on(c0, g), 4, be.compute_stream());
        });
        QVERIFY(t.error(c0, 12) < kFp32Tol);
    }

    void elementwise() {
        Twin t;
        const std::size_t n = 70'001;
        auto x = t.up(randn(n, 5)), y = t.up(randn(n, 6));
        t.run([&](Backend& be, bool g) {
            be.axpy(on(y, g), on(x, g), n, -0.3f, be.compute_stream());
            be.scale(on(x, g), n, 1.7f, be.compute_stream());
        });
        QVERIFY(t.error(x, n) < kFp32Tol);
        QVERIFY(t.error(y, n) < kFp32Tol);

        auto gate = t.up(randn(n, 7, 3.0f)), upv = t.up(randn(n, 8)), out = t.zeros<float>(n);
        auto dout = t.up(randn(n, 9)), dgate = t.zeros<float>(n), dup = t.zeros<float>(n);
        t.run([&](Backend& be, bool g) {
            be.swiglu_forward(on(gate, g), on(upv, g), on(out, g), n, be.compute_stream());
            be.swiglu_backward(on(dout, g), on(gate, g), on(upv, g), on(dgate, g), on(dup, g), n,
                               be.compute_stream());
        });
        QVERIFY(t.error(out, n) < kFp32Tol);
        QVERIFY(t.error(dgate, n) < kFp32Tol);
        QVERIFY(t.error(dup, n) < kFp32Tol);
    }

    void adamw() {
        Twin t;
        const std::size_t n = 50'000;
        auto p = t.up(randn(n, 10)), gr = t.up(randn(n, 11, 0.1f));
        auto m = t.zeros<float>(n), v = t.zeros<float>(n);
        Backend::AdamW hp{1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 1};
        for (int step = 1; step <= 3; ++step) {
            hp.step = step;
            t.run([&](Backend& be, bool g) {
                be.adamw(on(p, g), on(gr, g), on(m, g), on(v, g), n, hp, be.compute_stream());
            });
        }
        QVERIFY(t.error(p, n) < kFp32Tol);
        QVERIFY(t.error(m, n) < kFp32Tol);
        QVERIFY(t.error(v, n) < kFp32Tol);
    }

    void rmsnorm() {
        Twin t;
        const int rows = 300, cols = 1000;  // cols not a multiple of the block
        const std::size_t n = static_cast<std::size_t>(rows) * cols;
        auto x = t.up(randn(n, 12)), w = t.up(randn(cols, 13)), dy = t.up(randn(n, 14));
        auto y = t.zeros<float>(n), rstd = t.zeros<float>(rows), dx = t.zeros<float>(n);
        auto dw = t.up(randn(cols, 15));  // accumulated into
        t.run([&](Backend& be, bool g) {
            be.rmsnorm_forward(on(x, g), on(w, g), on(y, g), on(rstd, g), rows, cols, 1e-5f,
                               be.compute_stream());
            be.rmsnorm_backward(on(dy, g), on(x, g), on(w, g), on(rstd, g), on(dx, g), on(dw, g),
                                rows, cols, be.compute_stream());
        });
        QVERIFY(t.error(y, n) < kFp32Tol);
        QVERIFY(t.error(rstd, rows) < kFp32Tol);
        QVERIFY(t.error(dx, n) < kFp32Tol);
        QVERIFY(t.error(dw, cols) < 1e-4);  // a 300-row sum
    }

    void rope_round_trip() {
        Twin t;
        const int rows = 64, heads = 3, hd = 16;
        const std::size_t n = static_cast<std::size_t>(rows) * heads * hd;
        std::vector<std::int32_t> pos(rows);
        for (int r = 0; r < rows; ++r) pos[static_cast<std::size_t>(r)] = 1000 * r + 7;  // far positions
        auto p = t.up(pos);
        auto x = t.up(randn(n, 16));
        t.run([&](Backend& be, bool g) {
            be.rope(on(x, g), on(p, g), rows, heads, hd, 500000.0f, false, be.compute_stream());
        });
        QVERIFY(t.error(x, n) < kFp32Tol);
        t.run([&](Backend& be, bool g) {
            be.rope(on(x, g), on(p, g), rows, heads, hd, 500000.0f, true, be.compute_stream());
        });
        QVERIFY(t.error(x, n) < kFp32Tol);
    }

    void masked_softmax() {
        Twin t;
        // Context-parallel-like positions: queries from two chunks, keys out of order.
        const int rows = 40, cols = 300;
        std::vector<std::int32_t> qp(rows), kp(cols);
        for (int r = 0; r < rows; ++r) qp[static_cast<std::size_t>(r)] = r < 20 ? r : 260 + r;
        for (int c = 0; c < cols; ++c) kp[static_cast<std::size_t>(c)] = (c * 37) % cols;
        qp[0] = -1;  // a query that sees no key: its row stays zero
        auto q = t.up(qp), kk = t.up(kp);
        const std::size_t n = static_cast<std::size_t>(rows) * cols;
        auto s = t.up(randn(n, 17, 4.0f)), dp = t.up(randn(n, 18));
        t.run([&](Backend& be, bool g) {
            MaskedSoftmaxArgs a{rows, cols, 0.125f, on(q, g), on(kk, g)};
            be.masked_softmax_forward(on(s, g), a, be.compute_stream());
            be.softmax_backward(on(s, g), on(dp, g), rows, cols, 0.125f, be.compute_stream());
        });
        QVERIFY(t.error(s, n) < kFp32Tol);
        QVERIFY(t.error(dp, n) < kFp32Tol);

        auto r = t.up(randn(n, 19, 5.0f));
        t.run([&](Backend& be, bool g) { be.softmax_rows(on(r, g), rows, cols, be.compute_stream()); });
        QVERIFY(t.error(r, n) < kFp32Tol);
    }

    void cross_entropy() {
        Twin t;
        const int rows = 50, cols = 777, vocab_begin = 700;  // a vocabulary shard
        const std::size_t n = static_cast<std::size_t>(rows) * cols;
        std::vector<std::int32_t> tg(rows);
        for (int r = 0; r < rows; ++r) tg[static_cast<std::size_t>(r)] = (r * 97) % 2000;
        auto targets = t.up(tg);
        auto logits = t.up(randn(n, 20, 3.0f)), weight = t.up(randn(rows, 21));
        auto mx = t.zeros<float>(rows), se = t.zeros<float>(rows), tl = t.zeros<float>(rows);
        t.run([&](Backend& be, bool g) {
            const Stream st = be.compute_stream();
            be.row_max(on(logits, g), on(mx, g), rows, cols, st);
            be.row_sum_exp_and_target(on(logits, g), on(mx, g), on(targets, g), vocab_begin,
                                      on(se, g), on(tl, g), rows, cols, st);
            be.cross_entropy_backward(on(logits, g), on(mx, g), on(se, g), on(targets, g),
                                      vocab_begin, on(weight, g), rows, cols, st);
        });
        QVERIFY(t.error(mx, rows) < kFp32Tol);
        QVERIFY(t.error(se, rows) < kFp32Tol);
        QVERIFY(t.error(tl, rows) < kFp32Tol);
        QVERIFY(t.error(logits, n) < kFp32Tol);
    }

    // A bf16 layout (engine/precision.h): both backends read the norm weights, the embedding
    // rows and the GEMM operands as bf16. The rounding is the same on both (ties to even), so
    // the embedding rows agree exactly, the rest up to the order of fp32 sums.
    void bf16_reads_match_the_cpu_emulation() {
        Twin t(CudaGemmMode::Bf16);
        t.cpu().set_precision(Precision::Bf16);
        t.gpu().set_precision(Precision::Bf16);
        const int rows = 64, cols = 1000;
        const std::size_t n = static_cast<std::size_t>(rows) * cols;
        auto x = t.up(randn(n, 40)), w = t.up(randn(cols, 41, 1.0f + 1.0f / 300));
        auto y = t.zeros<float>(n), rstd = t.zeros<float>(rows);
        const int count = 100, hidden = 96;
        std::vector<std::int32_t> tok(count);
        for (int i = 0; i < count; ++i) tok[static_cast<std::size_t>(i)] = (i * 13) % 64;
        auto tokens = t.up(tok);
        auto table = t.up(randn(static_cast<std::size_t>(64) * hidden, 42));
        const std::size_t rows_out = static_cast<std::size_t>(count) * hidden;
        auto out = t.zeros<float>(rows_out);
        auto a = t.up(randn(static_cast<std::size_t>(rows) * 256, 43));
        auto b = t.up(randn(static_cast<std::size_t>(256) * 128, 44));
        auto c = t.zeros<float>(static_cast<std::size_t>(rows) * 128);
        t.run([&](Backend& be, bool g) {
            be.rmsnorm_forward(on(x, g), on(w, g), on(y, g), on(rstd, g), rows, cols, 1e-5f,
                               be.compute_stream());
            be.embedding_forward(on(table, g), on(tokens, g), on(out, g), count, hidden, 0, 64,
                                 be.compute_stream());
            be.gemm(Transpose::No, Transpose::No, rows, 128, 256, 1.0f, on(a, g), 256, on(b, g), 128,
                    0.0f, on(c, g), 128, be.compute_stream());
        });
        QCOMPARE(t.error(out, rows_out), 0.0);
        auto [cpu_out, gpu_out] = t.down(out, rows_out);
        for (float v : gpu_out) QCOMPARE(round_to_bf16(v), v);
        QVERIFY(t.error(y, n) < kFp32Tol);
        // Same bf16 operands; tensor cores sum the exact products in their own order.
        QVERIFY(t.error(c, static_cast<std::size_t>(rows) * 128) < 1e-3);
    }

    void embedding_and_moe_rows() {
        Twin t;
        const int count = 200, hidden = 96, vocab_begin = 64, vocab_rows = 64;
        std::vector<std::int32_t> tok(count);
        for (int i = 0; i < count; ++i) tok[static_cast<std::size_t>(i)] = (i * 13) % 256;  // repeats
        auto tokens = t.up(tok);
        auto table = t.up(randn(static_cast<std::size_t>(vocab_rows) * hidden, 22));
        const std::size_t n = static_cast<std::size_t>(count) * hidden;
        auto out = t.zeros<float>(n), dout = t.up(randn(n, 23));
        auto dtable = t.up(randn(static_cast<std::size_t>(vocab_rows) * hidden, 24));
        t.run([&](Backend& be, bool g) {
            be.embedding_forward(on(table, g), on(tokens, g), on(out, g), count, hidden,
                                 vocab_begin, vocab_rows, be.compute_stream());
            be.embedding_backward(on(dout, g), on(tokens, g), on(dtable, g), count, hidden,
                                  vocab_begin, vocab_rows, be.compute_stream());
        });
        QVERIFY(t.error(out, n) < kFp32Tol);
        QVERIFY(t.error(dtable, static_cast<std::size_t>(vocab_rows) * hidden) < kFp32Tol);

        // MoE permute (gather), unpermute with weights onto repeated rows, combine-weight grad.
        const int tokens_n = 50;
        std::vector<std::int32_t> idx(count);
        for (int i = 0; i < count; ++i) idx[static_cast<std::size_t>(i)] = (i * 7) % tokens_n;
        auto index = t.up(idx);
        auto src = t.up(randn(static_cast<std::size_t>(tokens_n) * hidden, 25));
        auto perm = t.zeros<float>(n), w = t.up(randn(count, 26));
        auto dst = t.zeros<float>(static_cast<std::size_t>(tokens_n) * hidden);
        auto dots = t.zeros<float>(count);
        t.run([&](Backend& be, bool g) {
            const Stream st = be.compute_stream();
            be.gather_rows(on(src, g), on(index, g), on(perm, g), count, hidden, st);
            be.scatter_add_rows(on(perm, g), on(index, g), on(w, g), on(dst, g), count, hidden, st);
            be.scatter_add_rows(on(perm, g), on(index, g), nullptr, on(dst, g), count, hidden, st);
            be.row_dot(on(perm, g), on(dout, g), on(dots, g), count, hidden, st);
        });
        QVERIFY(t.error(perm, n) < kFp32Tol);
        QVERIFY(t.error(dst, static_cast<std::size_t>(tokens_n) * hidden) < kFp32Tol);
        QVERIFY(t.error(dots, count) < kFp32Tol);
    }
};

QTEST_GUILESS_MAIN(TestGpuKernels)
#include "tst_gpu_kernels.moc"
