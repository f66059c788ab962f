// OpenBLAS sgemm at the shapes the CPU engine runs (plain timed harness; results in
// docs/BENCHMARKS.md, "GEMM pace on the CPU engine").
//   bench_cpu_gemm_shapes [REPEATS=500]
// One thread (the engine sets one BLAS thread per process: CpuBackend::set_blas_threads),
// row-major, fp32, the three calls of a linear layer as core/engine/model/linear.h makes
// them: forward x·W (NN), input gradient dy·Wᵀ (NT), weight gradient xᵀ·dy (TN, beta 1).
// Per shape the median CPU time of one call over REPEATS back-to-back calls (operands warm in
// cache, as inside an op that reuses its activations), in µs, and GFLOP/s. The shapes: the
// tiny model's projections (hidden 64 and 128, head_dim 16, GQA 4:2, SwiGLU ffn 2×hidden,
// vocabulary 256) at tp 1 and 2 for rows = micro-batch × sequence in {32 … 512}, and the
// unfused core attention's per-(micro-batch, head) GEMMs at sequence 32 … 128.
// Then a least-squares fit of t = alpha + F / R over all shapes and, per shape, the ratio of
// measured to fitted (how much of the pace the two figures leave out), beside the cost
// model's GPU form t = F / (R · d / (d + h)) with d = min(m, n, k) fitted the same way.
#include <cblas.h>

#include <algorithm>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Shape {
    std::string what;
    int m, n, k;
    char kind;  // 'N' forward NN, 'I' input gradient NT, 'W' weight gradient TN
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The calling thread's CPU time: on a shared host a wall clock also counts the time other
// processes hold the core; the engine's calibration reads compute as CPU time too.
double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Median CPU seconds of one call, timed in batches of 10 calls (a call is 1-1000 µs).
double time_call(const Shape& s, int repeats) {
    // Operand extents as the engine stores them (linear.h): x rows×k, W k×n, y rows×n.
    const int m = s.m, n = s.n, k = s.k;
    std::vector<float> a(static_cast<std::size_t>(m) * k + static_cast<std::size_t>(k) * n + 64, 0.01f);
    std::vector<float> b(static_cast<std::size_t>(k) * n + static_cast<std::size_t>(m) * n + 64, 0.02f);
    std::vector<float> c(static_cast<std::size_t>(m) * n + 64, 0.0f);
    auto call = [&] {
        if (s.kind == 'N') {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
        } else if (s.kind == 'I') {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, c.data(), n);
        } else {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), m, b.data(), n, 1.0f, c.data(), n);
        }
    };
    for (int i = 0; i < 50; ++i) call();
    std::vector<double> t;
    const int batch = 10;
    for (int r = 0; r < std::max(1, repeats / batch); ++r) {
        const double t0 = thread_cpu_s();
        for (int i = 0; i < batch; ++i) call();
        t.push_back((thread_cpu_s() - t0) / batch);
    }
    return median(t);
}

// The three calls of a linear layer of `rows` tokens, `in` → `out` features.
void linear(std::vector<Shape>& v, const std::string& what, int rows, int in, int out) {
    v.push_back({what + " fwd", rows, out, in, 'N'});
    v.push_back({what + " dgrad", rows, in, out, 'I'});
    v.push_back({what + " wgrad", in, out, rows, 'W'});
}

}  // namespace

int main(int argc, char** argv) {
    const int repeats = argc > 1 ? std::atoi(argv[1]) : 500;
    openblas_set_num_threads(1);
    std::vector<Shape> shapes;
    for (int hidden : {64, 128}) {
        const int q = hidden, kv = hidden / 2, ffn = 2 * hidden, vocab = 256;
        for (int tp : {1, 2}) {
            for (int rows : {32, 64, 128, 256, 512}) {
                const std::string tag = "h" + std::to_string(hidden) + " tp" + std::to_string(tp) +
                                        " rows" + std::to_string(rows) + " ";
                linear(shapes, tag + "qkv", rows, hidden, (q + 2 * kv) / tp);
                linear(shapes, tag + "proj", rows, q / tp, hidden);
                linear(shapes, tag + "fc1", rows, hidden, 2 * ffn / tp);
                linear(shapes, tag + "fc2", rows, ffn / tp, hidden);
                linear(shapes, tag + "head", rows, hidden, vocab / tp);
            }
        }
    }
    for (int seq : {32, 64, 128}) {
        const std::string tag = "core seq" + std::to_string(seq) + " ";
        shapes.push_back({tag + "qk", seq, seq, 16, 'I'});
        shapes.push_back({tag + "av", seq, 16, seq, 'N'});
    }
    std::printf("%-34s %5s %5s %5s %10s %9s\n", "shape", "m", "n", "k", "us/call", "GFLOP/s");
    std::vector<double> secs, flops, inv_d;
    for (const auto& s : shapes) {
        const double t = time_call(s, repeats);
        const double f = 2.0 * s.m * s.n * s.k;
        secs.push_back(t);
        flops.push_back(f);
        inv_d.push_back(f / std::min({s.m, s.n, s.k}));
        std::printf("%-34s %5d %5d %5d %10.3f %9.2f\n", s.what.c_str(), s.m, s.n, s.k, t * 1e6, f / t * 1e-9);
    }
    // Least squares, relative (each shape weighted by 1/t²): t = x0·u + x1·w for regressors
    // (u, w): (1, F) for alpha + F/R; (F, F/d) for the GPU form (1/(R) + h/(R·d)).
    auto fit2 = [&](const std::vector<double>& u, const std::vector<double>& w, double& x0, double& x1) {
        double uu = 0, uw = 0, ww = 0, ut = 0, wt = 0;
        for (std::size_t i = 0; i < secs.size(); ++i) {
            const double q = 1.0 / (secs[i] * secs[i]);
            uu += q * u[i] * u[i], uw += q * u[i] * w[i], ww += q * w[i] * w[i];
            ut += q * u[i] * secs[i], wt += q * w[i] * secs[i];
        }
        const double det = uu * ww - uw * uw;
        x0 = (ut * ww - uw * wt) / det;
        x1 = (uu * wt - uw * ut) / det;
        double e2 = 0, worst = 0;
        for (std::size_t i = 0; i < secs.size(); ++i) {
            const double r = (x0 * u[i] + x1 * w[i]) / secs[i] - 1;
            e2 += r * r, worst = std::max(worst, std::fabs(r));
        }
        std::printf("   rms relative error %.1f %%, worst %.1f %%\n", 100 * std::sqrt(e2 / secs.size()), 100 * worst);
    };
    const std::vector<double> ones(secs.size(), 1.0);
    double alpha = 0, inv_r = 0, a = 0, b = 0;
    std::printf("fit t = alpha + F/R:\n");
    fit2(ones, flops, alpha, inv_r);
    std::printf("   alpha %.3f us, R %.2f GFLOP/s\n", alpha * 1e6, 1e-9 / inv_r);
    std::printf("fit t = F / (R d/(d+h)), d = min(m,n,k):\n");
    fit2(flops, inv_d, a, b);
    std::printf("   R %.2f GFLOP/s, h %.1f\n", 1e-9 / a, b / a);
    return 0;
}
