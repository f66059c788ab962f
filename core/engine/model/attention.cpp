#include "core/engine/model/attention.h"

#include <cmath>

#include "core/engine/model/cp_ring.h"
#include "core/engine/model/linear.h"
#include "core/engine/model/pre_norm.h"
#include "core/engine/model/tp_regions.h"

namespace meshwork::engine {

namespace {
std::string pname(int block, const char* what) {
    return "block." + std::to_string(block) + ".attention." + what;
}
}  // namespace

PreNorm AttentionLayer::pre_norm() const { return {d_, norm_, block_, "block." + std::to_string(block_) + ".attention"}; }

AttentionLayer::AttentionLayer(ParamStore& store, const ModelDims& d, int block, int tp_rank)
    : d_(d), block_(block) {
    const int qc = d.heads * d.head_dim, kvc = d.kv_heads * d.head_dim;
    // Under sequence parallelism each TP rank normalises different rows: partial gradients.
    norm_ = store.add({.name = "block." + std::to_string(block) + ".input_norm", .full_rows = 1,
                       .full_cols = d.hidden, .init = ParamInit::Ones, .tp_partial_grad = d.sp,
                       .weight_decay = false});
    const auto column = [&](const char* w, int cols) {
        return store.add({.name = pname(block, w), .full_rows = d.hidden, .full_cols = cols,
                          .split = SplitDim::Cols, .parts = d.tp, .index = tp_rank});
    };
    wq_ = column("wq", qc);
    wk_ = column("wk", kvc);
    wv_ = column("wv", kvc);
    wo_ = store.add({.name = pname(block, "wo"), .full_rows = qc, .full_cols = d.hidden,
                     .split = SplitDim::Rows, .parts = d.tp, .index = tp_rank});
}

Tensor AttentionLayer::forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                               const Tensor& x) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int rows = d_.rows, hd = d_.head_dim, qc = d_.q_cols(), kvc = d_.kv_cols();
    const int sl = d_.seq_local, sall = d_.cp * d_.seq_local, H = d_.hidden;
    Cache c;
    c.h = pre_norm().forward(ctx, store, x, c.x, c.rstd);
    c.q = Tensor(be, rows, qc);
    Tensor k(be, rows, kvc), v(be, rows, kvc);
    {
        RankContext::Op op(ctx, pname(block_, "qkv.fwd"), block_, gemm_flops(rows, qc + 2 * kvc, H));
        matmul(be, s, c.h.ptr(), store.value(wq_), c.q.ptr(), rows, qc, H);
        matmul(be, s, c.h.ptr(), store.value(wk_), k.ptr(), rows, kvc, H);
        matmul(be, s, c.h.ptr(), store.value(wv_), v.ptr(), rows, kvc, H);
        be.rope(c.q.ptr(), mb.pos.data(), rows, d_.heads_local, hd, d_.rope_theta, false, s);
        be.rope(k.ptr(), mb.pos.data(), rows, d_.kv_heads_local, hd, d_.rope_theta, false, s);
    }
    if (d_.cp == 1) {
        c.kseq = std::move(k);
        c.vseq = std::move(v);
    } else {
        // Every cp rank's K/V, then sequence-major so that one GEMM covers one sequence.
        const std::size_t n = k.size();
        Floats kall(be, n * d_.cp), vall(be, n * d_.cp);
        ring_all_gather(ctx, k.ptr(), n, kall.data());
        ring_all_gather(ctx, v.ptr(), n, vall.data());
        c.kseq = Tensor(be, d_.mbs * sall, kvc);
        c.vseq = Tensor(be, d_.mbs * sall, kvc);
        const std::size_t piece = static_cast<std::size_t>(sl) * kvc;
        for (int b = 0; b < d_.mbs; ++b) {
            for (int r = 0; r < d_.cp; ++r) {
                const std::size_t from = r * n + static_cast<std::size_t>(b) * piece;
                const std::size_t to = (static_cast<std::size_t>(b) * d_.cp + r) * piece;
                be.copy(c.kseq.ptr() + to, kall.data() + from, piece * sizeof(float), s);
                be.copy(c.vseq.ptr() + to, vall.data() + from, piece * sizeof(float), s);
            }
        }
    }
    const int group = d_.heads_local / d_.kv_heads_local;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    c.probs = Tensor(be, d_.mbs * d_.heads_local * sl, sall);
    c.ctx = Tensor(be, rows, qc);
    {
        RankContext::Op op(ctx, pname(block_, "core.fwd"), block_,
                           2.0 * gemm_flops(sl, sall, hd) * d_.mbs * d_.heads_local);
        MaskedSoftmaxArgs args{sl, sall, scale, mb.q_pos.data(), mb.k_pos.data()};
        for (int b = 0; b < d_.mbs; ++b) {
            for (int h = 0; h < d_.heads_local; ++h) {
                const int g = h / group;
                const float* qbh = c.q.row(b * sl) + h * hd;
                const float* kbg = c.kseq.row(b * sall) + g * hd;
                const float* vbg = c.vseq.row(b * sall) + g * hd;
                float* p = c.probs.row((b * d_.heads_local + h) * sl);
                be.gemm(Transpose::No, Transpose::Yes, sl, sall, hd, 1.0f, qbh, qc, kbg, kvc, 0.0f, p, sall, s);
                be.masked_softmax_forward(p, args, s);
                be.gemm(Transpose::No, Transpose::No, sl, hd, sall, 1.0f, p, sall, vbg, kvc, 0.0f,
                        c.ctx.row(b * sl) + h * hd, qc, s);
            }
        }
    }
    Tensor o(be, rows, H);
    {
        RankContext::Op op(ctx, pname(block_, "proj.fwd"), block_, gemm_flops(rows, H, qc));
        matmul(be, s, c.ctx.ptr(), store.value(wo_), o.ptr(), rows, H, qc);
    }
    Tensor out = reduce_from_tp(ctx, d_, o);
    be.axpy(out.ptr(), x.ptr(), out.size(), 1.0f, s);
    cache_[mb.index] = std::move(c);
    return out;
}

Tensor AttentionLayer::backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                                const Tensor& dout) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    Cache c = std::move(cache_.at(mb.index));
    cache_.erase(mb.index);
    const int rows = d_.rows, hd = d_.head_dim, qc = d_.q_cols(), kvc = d_.kv_cols();
    const int sl = d_.seq_local, sall = d_.cp * d_.seq_local, H = d_.hidden;
    Tensor dof = gather_for_tp(ctx, d_, dout);
    Tensor dctx(be, rows, qc);
    {
        RankContext::Op op(ctx, pname(block_, "proj.bwd"), block_, 2 * gemm_flops(rows, H, qc));
        matmul_nt(be, s, dof.ptr(), store.value(wo_), dctx.ptr(), rows, qc, H);
        matmul_tn(be, s, c.ctx.ptr(), dof.ptr(), store.grad(wo_), qc, H, rows);
    }
    Tensor dq(be, rows, qc), dkseq(be, d_.mbs * sall, kvc), dvseq(be, d_.mbs * sall, kvc);
    be.fill(dkseq.ptr(), dkseq.size(), 0.0f, s);
    be.fill(dvseq.ptr(), dvseq.size(), 0.0f, s);
    {
        RankContext::Op op(ctx, pname(block_, "core.bwd"), block_,
                           4.0 * gemm_flops(sl, sall, hd) * d_.mbs * d_.heads_local);
        const int group = d_.heads_local / d_.kv_heads_local;
        const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
        Tensor dp(be, sl, sall);
        for (int b = 0; b < d_.mbs; ++b) {
            for (int h = 0; h < d_.heads_local; ++h) {
                const int g = h / group;
                const float* qbh = c.q.row(b * sl) + h * hd;
                const float* kbg = c.kseq.row(b * sall) + g * hd;
                const float* vbg = c.vseq.row(b * sall) + g * hd;
                const float* p = c.probs.row((b * d_.heads_local + h) * sl);
                const float* dcbh = dctx.row(b * sl) + h * hd;
                be.gemm(Transpose::No, Transpose::Yes, sl, sall, hd, 1.0f, dcbh, qc, vbg, kvc, 0.0f, dp.ptr(), sall, s);
                be.gemm(Transpose::Yes, Transpose::No, sall, hd, sl, 1.0f, p, sall, dcbh, qc, 1.0f,
                        dvseq.row(b * sall) + g * hd, kvc, s);
                be.softmax_backward(p, dp.ptr(), sl, sall, scale, s);
                be.gemm(Transpose::No, Transpose::No, sl, hd, sall, 1.0f, dp.ptr(), sall, kbg, kvc, 0.0f,
                        dq.row(b * sl) + h * hd, qc, s);
                be.gemm(Transpose::Yes, Transpose::No, sall, hd, sl, 1.0f, dp.ptr(), sall, qbh, qc, 1.0f,
                        dkseq.row(b * sall) + g * hd, kvc, s);
            }
        }
    }
    Tensor dk, dv;
    if (d_.cp == 1) {
        dk = std::move(dkseq);
        dv = std::move(dvseq);
    } else {
        // Back to rank-major blocks, then each cp rank receives the sum for its own rows.
        const std::size_t n = static_cast<std::size_t>(rows) * kvc;
        const std::size_t piece = static_cast<std::size_t>(sl) * kvc;
        Floats kb(be, n * d_.cp), vb(be, n * d_.cp);
        for (int b = 0; b < d_.mbs; ++b) {
            for (int r = 0; r < d_.cp; ++r) {
                const std::size_t to = r * n + static_cast<std::size_t>(b) * piece;
                const std::size_t from = (static_cast<std::size_t>(b) * d_.cp + r) * piece;
                be.copy(kb.data() + to, dkseq.ptr() + from, piece * sizeof(float), s);
                be.copy(vb.data() + to, dvseq.ptr() + from, piece * sizeof(float), s);
            }
        }
        dk = Tensor(be, rows, kvc);
        dv = Tensor(be, rows, kvc);
        ring_reduce_scatter(ctx, kb.data(), n, dk.ptr());
        ring_reduce_scatter(ctx, vb.data(), n, dv.ptr());
    }
    Tensor dh(be, rows, H);
    {
        RankContext::Op op(ctx, pname(block_, "qkv.bwd"), block_, 2 * gemm_flops(rows, qc + 2 * kvc, H));
        // The rotation is orthogonal: its backward is the inverse rotation.
        be.rope(dq.ptr(), mb.pos.data(), rows, d_.heads_local, hd, d_.rope_theta, true, s);
        be.rope(dk.ptr(), mb.pos.data(), rows, d_.kv_heads_local, hd, d_.rope_theta, true, s);
        matmul_nt(be, s, dq.ptr(), store.value(wq_), dh.ptr(), rows, H, qc);
        matmul_nt(be, s, dk.ptr(), store.value(wk_), dh.ptr(), rows, H, kvc, 1.0f);
        matmul_nt(be, s, dv.ptr(), store.value(wv_), dh.ptr(), rows, H, kvc, 1.0f);
        matmul_tn(be, s, c.h.ptr(), dq.ptr(), store.grad(wq_), H, qc, rows);
        matmul_tn(be, s, c.h.ptr(), dk.ptr(), store.grad(wk_), H, kvc, rows);
        matmul_tn(be, s, c.h.ptr(), dv.ptr(), store.grad(wv_), H, kvc, rows);
    }
    return pre_norm().backward(ctx, store, c.x, c.rstd, dh, dout);
}

}  // namespace meshwork::engine
