#include "core/engine/model/moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/engine/model/linear.h"
#include "core/engine/model/tp_regions.h"

namespace meshwork::engine {

MoeLayer::MoeLayer(ParamStore& store, const ModelDims& d, int block, const RankCoords& coords,
                   const std::vector<std::vector<int>>& experts_per_ep_rank)
    : d_(d), block_(block), tp_rank_(coords.tp), cp_rank_(coords.cp), placement_(experts_per_ep_rank) {
    norm_ = store.add({.name = "block." + std::to_string(block) + ".post_attention_norm",
                       .full_rows = 1, .full_cols = d.hidden, .init = ParamInit::Ones,
                       .tp_partial_grad = d.sp, .weight_decay = false});
    // Each TP rank routes different tokens, so the router's gradient is partial over TP.
    router_ = store.add({.name = pname("router"), .full_rows = d.hidden, .full_cols = d.experts,
                         .tp_partial_grad = d.tp > 1});
    owner_.assign(static_cast<std::size_t>(d.experts), 0);
    owner_slot_.assign(static_cast<std::size_t>(d.experts), 0);
    for (std::size_t r = 0; r < placement_.size(); ++r) {
        for (std::size_t j = 0; j < placement_[r].size(); ++j) {
            owner_[static_cast<std::size_t>(placement_[r][j])] = static_cast<int>(r);
            owner_slot_[static_cast<std::size_t>(placement_[r][j])] = static_cast<int>(j);
        }
    }
    for (int e : placement_.at(static_cast<std::size_t>(coords.ep))) {
        const std::string base = "expert." + std::to_string(e) + ".";
        Expert x;
        x.id = e;
        const auto add = [&](const std::string& w, int r, int c) {
            return store.add({.name = pname(base + w), .full_rows = r, .full_cols = c,
                              .group = ReduceGroup::Expert});
        };
        x.w_gate = add("w_gate", d.hidden, d.expert_ffn);
        x.w_up = add("w_up", d.hidden, d.expert_ffn);
        x.w_down = add("w_down", d.expert_ffn, d.hidden);
        local_.push_back(x);
    }
}

std::string MoeLayer::pname(const std::string& what) const {
    return "block." + std::to_string(block_) + ".moe." + what;
}

double MoeLayer::take_aux_loss() { return std::exchange(aux_loss_, 0.0); }

Tensor MoeLayer::forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                         const Tensor& x) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int H = d_.hidden, E = d_.experts, K = d_.top_k, Fe = d_.expert_ffn;
    const bool split_tokens = !d_.sp && d_.tp > 1;
    const int n = d_.rows / d_.tp;  // tokens this rank routes (region rows under sp)
    Cache c;
    c.x = clone(ctx, x);
    c.rstd = Floats(be, static_cast<std::size_t>(x.rows));
    Tensor hr(be, x.rows, H);
    {
        RankContext::Op op(ctx, pname("norm.fwd"), block_, 0);
        be.rmsnorm_forward(x.ptr(), store.value(norm_), hr.ptr(), c.rstd.data(), x.rows, H, d_.rms_eps, s);
    }
    c.row0 = (d_.tp > 1) ? tp_rank_ * n : 0;
    c.htok = Tensor(be, n, H);
    be.copy(c.htok.ptr(), split_tokens ? hr.row(c.row0) : hr.ptr(),
            static_cast<std::size_t>(n) * H * sizeof(float), s);

    // Router: probabilities on the device, the top-k choice on the host (the dispatch needs
    // the counts there anyway).
    Tensor probs(be, n, E);
    {
        RankContext::Op op(ctx, pname("router.fwd"), block_, gemm_flops(n, E, H));
        matmul(be, s, c.htok.ptr(), store.value(router_), probs.ptr(), n, E, H);
        be.softmax_rows(probs.ptr(), n, E, s);
    }
    c.host_probs = download(be, probs.ptr(), probs.size(), s);
    c.topk.assign(static_cast<std::size_t>(n), {});
    c.host_weights.assign(static_cast<std::size_t>(n) * K, 0.0f);
    const int seqs = d_.mbs;
    std::vector<float> stats(static_cast<std::size_t>(seqs) * E * 2, 0.0f);  // counts | prob sums
    const int cap = d_.capacity_factor > 0
                        ? static_cast<int>(std::ceil(d_.capacity_factor * n * K / static_cast<double>(E)))
                        : n * K;
    std::vector<int> load(static_cast<std::size_t>(E), 0);
    std::vector<int> a_token, a_expert, a_slot;
    for (int i = 0; i < n; ++i) {
        const float* p = &c.host_probs[static_cast<std::size_t>(i) * E];
        std::vector<int> idx(static_cast<std::size_t>(E));
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + K, idx.end(),
                          [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
        idx.resize(static_cast<std::size_t>(K));
        float z = 0;
        for (int e : idx) z += p[e];
        const int b = (c.row0 + i) / d_.seq_local;
        for (int k = 0; k < K; ++k) {
            const int e = idx[static_cast<std::size_t>(k)];
            c.host_weights[static_cast<std::size_t>(i) * K + k] = p[e] / z;
            stats[(static_cast<std::size_t>(b) * E + e)] += 1.0f;
            if (load[static_cast<std::size_t>(e)] < cap) {  // over capacity: dropped
                ++load[static_cast<std::size_t>(e)];
                a_token.push_back(i);
                a_expert.push_back(e);
                a_slot.push_back(k);
            }
        }
        for (int e = 0; e < E; ++e) stats[static_cast<std::size_t>(seqs) * E + static_cast<std::size_t>(b) * E + e] += p[e];
        c.topk[static_cast<std::size_t>(i)] = std::move(idx);
    }
    // Per-sequence load and probability: summed over the ranks that hold parts of a sequence.
    {
        Floats dev(be, stats.size());
        be.copy_to_device(dev.data(), stats.data(), stats.size() * sizeof(float), s);
        if (d_.tp > 1) ctx.all_reduce(Group::Tp, dev.data(), dev.size());
        if (d_.cp > 1) ctx.all_reduce(Group::Cp, dev.data(), dev.size());
        stats = download(be, dev.data(), dev.size(), s);
    }
    // L_aux = coef·E/B · Σ_seq Σ_e f_e·P_e with f_e = load_e/(S·k), P_e = Σ p_e / S.
    const double S = d_.seq;
    const double scale = d_.aux_coef * E / d_.global_batch;
    c.aux_grad.assign(static_cast<std::size_t>(seqs) * E, 0.0f);
    double aux = 0;
    for (int b = 0; b < seqs; ++b) {
        for (int e = 0; e < E; ++e) {
            const double f = stats[static_cast<std::size_t>(b) * E + e] / (S * K);
            const double pm = stats[static_cast<std::size_t>(seqs) * E + static_cast<std::size_t>(b) * E + e] / S;
            aux += scale * f * pm;
            c.aux_grad[static_cast<std::size_t>(b) * E + e] = static_cast<float>(scale * f / S);
        }
    }
    if (tp_rank_ == 0 && cp_rank_ == 0) aux_loss_ += aux;

    // Dispatch order: by owner EP rank, then the owner's expert order, then token.
    std::vector<int> order(a_token.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const int ea = a_expert[static_cast<std::size_t>(a)], eb = a_expert[static_cast<std::size_t>(b)];
        const auto ka = std::make_pair(owner_[static_cast<std::size_t>(ea)], owner_slot_[static_cast<std::size_t>(ea)]);
        const auto kb = std::make_pair(owner_[static_cast<std::size_t>(eb)], owner_slot_[static_cast<std::size_t>(eb)]);
        return ka < kb;
    });
    const int A = static_cast<int>(order.size());
    const int ep = static_cast<int>(placement_.size());
    std::vector<std::int32_t> tok(static_cast<std::size_t>(A)), ident(static_cast<std::size_t>(A));
    std::vector<float> w(static_cast<std::size_t>(A));
    std::vector<std::vector<float>> per_expert(static_cast<std::size_t>(ep));
    for (int r = 0; r < ep; ++r) per_expert[static_cast<std::size_t>(r)].assign(placement_[static_cast<std::size_t>(r)].size(), 0.0f);
    c.send_counts.assign(static_cast<std::size_t>(ep), 0);
    for (int a = 0; a < A; ++a) {
        const int o = order[static_cast<std::size_t>(a)];
        const int e = a_expert[static_cast<std::size_t>(o)];
        tok[static_cast<std::size_t>(a)] = a_token[static_cast<std::size_t>(o)];
        ident[static_cast<std::size_t>(a)] = a;
        w[static_cast<std::size_t>(a)] = c.host_weights[static_cast<std::size_t>(a_token[static_cast<std::size_t>(o)]) * K + a_slot[static_cast<std::size_t>(o)]];
        per_expert[static_cast<std::size_t>(owner_[static_cast<std::size_t>(e)])][static_cast<std::size_t>(owner_slot_[static_cast<std::size_t>(e)])] += 1.0f;
        c.send_counts[static_cast<std::size_t>(owner_[static_cast<std::size_t>(e)])] += static_cast<std::size_t>(H);
        c.assign_token.push_back(tok[static_cast<std::size_t>(a)]);
        c.assign_expert.push_back(e);
    }
    c.token_index = upload_ints(be, tok, s);
    c.identity = upload_ints(be, ident, s);
    c.weights = Floats(be, w.size());
    be.copy_to_device(c.weights.data(), w.data(), w.size() * sizeof(float), s);

    // Exchange the per-expert row counts, then the rows.
    const std::size_t mine = local_.size();
    std::vector<float> count_send;
    std::vector<std::size_t> csend(static_cast<std::size_t>(ep)), crecv(static_cast<std::size_t>(ep), mine);
    for (int r = 0; r < ep; ++r) {
        const auto& v = per_expert[static_cast<std::size_t>(r)];
        count_send.insert(count_send.end(), v.begin(), v.end());
        csend[static_cast<std::size_t>(r)] = v.size();
    }
    std::vector<float> count_recv(mine * static_cast<std::size_t>(ep));
    {
        Floats ds(be, count_send.size()), dr(be, count_recv.size());
        be.copy_to_device(ds.data(), count_send.data(), count_send.size() * sizeof(float), s);
        ctx.all_to_all_v(Group::Ep, ds.data(), csend, dr.data(), crecv);
        count_recv = download(be, dr.data(), dr.size(), s);
    }
    c.recv_counts.assign(static_cast<std::size_t>(ep), 0);
    int received = 0;
    for (int q = 0; q < ep; ++q) {
        for (std::size_t j = 0; j < mine; ++j) {
            const int rows = static_cast<int>(count_recv[static_cast<std::size_t>(q) * mine + j]);
            c.recv_counts[static_cast<std::size_t>(q)] += static_cast<std::size_t>(rows) * H;
            received += rows;
        }
    }
    Tensor send_rows(be, A, H), recv_rows(be, received, H);
    be.gather_rows(c.htok.ptr(), c.token_index.data(), send_rows.ptr(), A, H, s);
    ctx.all_to_all_v(Group::Ep, send_rows.ptr(), c.send_counts, recv_rows.ptr(), c.recv_counts);

    // Received rows come by source then expert; experts want theirs contiguous.
    std::vector<std::int32_t> perm;
    c.expert_rows.assign(mine, 0);
    {
        std::vector<int> src_base(static_cast<std::size_t>(ep), 0);
        for (int q = 1; q < ep; ++q) src_base[static_cast<std::size_t>(q)] = src_base[static_cast<std::size_t>(q - 1)] + static_cast<int>(c.recv_counts[static_cast<std::size_t>(q - 1)] / static_cast<std::size_t>(H));
        for (std::size_t j = 0; j < mine; ++j) {
            for (int q = 0; q < ep; ++q) {
                int at = src_base[static_cast<std::size_t>(q)];
                for (std::size_t jj = 0; jj < j; ++jj) at += static_cast<int>(count_recv[static_cast<std::size_t>(q) * mine + jj]);
                const int rows = static_cast<int>(count_recv[static_cast<std::size_t>(q) * mine + j]);
                for (int i = 0; i < rows; ++i) perm.push_back(at + i);
                c.expert_rows[j] += rows;
            }
        }
    }
    c.perm = upload_ints(be, perm, s);
    c.x_exp = Tensor(be, received, H);
    be.gather_rows(recv_rows.ptr(), c.perm.data(), c.x_exp.ptr(), received, H, s);
    c.gate = Tensor(be, received, Fe);
    c.up = Tensor(be, received, Fe);
    c.act = Tensor(be, received, Fe);
    Tensor out_exp(be, received, H);
    {
        RankContext::Op op(ctx, pname("experts.fwd"), block_, gemm_flops(received, Fe, H) * 3);
        int r0 = 0;
        for (std::size_t j = 0; j < mine; ++j) {
            const int m = c.expert_rows[j];
            const Expert& ex = local_[j];
            matmul(be, s, c.x_exp.row(r0), store.value(ex.w_gate), c.gate.row(r0), m, Fe, H);
            matmul(be, s, c.x_exp.row(r0), store.value(ex.w_up), c.up.row(r0), m, Fe, H);
            be.swiglu_forward(c.gate.row(r0), c.up.row(r0), c.act.row(r0), static_cast<std::size_t>(m) * Fe, s);
            matmul(be, s, c.act.row(r0), store.value(ex.w_down), out_exp.row(r0), m, H, Fe);
            r0 += m;
        }
    }
    Tensor out_recv(be, received, H);
    be.fill(out_recv.ptr(), out_recv.size(), 0.0f, s);
    be.scatter_add_rows(out_exp.ptr(), c.perm.data(), nullptr, out_recv.ptr(), received, H, s);
    c.out_back = Tensor(be, A, H);
    ctx.all_to_all_v(Group::Ep, out_recv.ptr(), c.recv_counts, c.out_back.ptr(), c.send_counts);
    Tensor ytok(be, n, H);
    {
        RankContext::Op op(ctx, pname("combine.fwd"), block_, 0);
        be.fill(ytok.ptr(), ytok.size(), 0.0f, s);
        be.scatter_add_rows(c.out_back.ptr(), c.token_index.data(), c.weights.data(), ytok.ptr(), A, H, s);
    }
    Tensor out;
    if (split_tokens) {
        out = Tensor(be, d_.rows, H);
        ctx.all_gather(Group::Tp, ytok.ptr(), out.ptr(), ytok.size());
    } else {
        out = std::move(ytok);
    }
    be.axpy(out.ptr(), x.ptr(), out.size(), 1.0f, s);
    cache_[mb.index] = std::move(c);
    return out;
}

Tensor MoeLayer::backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                          const Tensor& dout) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    Cache c = std::move(cache_.at(mb.index));
    cache_.erase(mb.index);
    const int H = d_.hidden, E = d_.experts, K = d_.top_k, Fe = d_.expert_ffn;
    const bool split_tokens = !d_.sp && d_.tp > 1;
    const int n = d_.rows / d_.tp;
    const int A = static_cast<int>(c.assign_token.size());
    const int received = c.x_exp.rows;

    // Gradient of each token's output: the slice this rank routed.
    const float* dy = split_tokens ? dout.row(c.row0) : dout.ptr();
    Tensor dy_assign(be, A, H), dout_back(be, A, H);
    Floats dw(be, static_cast<std::size_t>(A));
    be.gather_rows(dy, c.token_index.data(), dy_assign.ptr(), A, H, s);
    be.row_dot(dy_assign.ptr(), c.out_back.ptr(), dw.data(), A, H, s);
    be.fill(dout_back.ptr(), dout_back.size(), 0.0f, s);
    be.scatter_add_rows(dy_assign.ptr(), c.identity.data(), c.weights.data(), dout_back.ptr(), A, H, s);
    Tensor dout_recv(be, received, H), dout_exp(be, received, H);
    ctx.all_to_all_v(Group::Ep, dout_back.ptr(), c.send_counts, dout_recv.ptr(), c.recv_counts);
    be.gather_rows(dout_recv.ptr(), c.perm.data(), dout_exp.ptr(), received, H, s);
    Tensor dx_exp(be, received, H);
    {
        RankContext::Op op(ctx, pname("experts.bwd"), block_, gemm_flops(received, Fe, H) * 6);
        Tensor dact(be, received, Fe), dgate(be, received, Fe), dup(be, received, Fe);
        int r0 = 0;
        for (std::size_t j = 0; j < local_.size(); ++j) {
            const int m = c.expert_rows[j];
            const Expert& ex = local_[j];
            matmul_nt(be, s, dout_exp.row(r0), store.value(ex.w_down), dact.row(r0), m, Fe, H);
            matmul_tn(be, s, c.act.row(r0), dout_exp.row(r0), store.grad(ex.w_down), Fe, H, m);
            be.swiglu_backward(dact.row(r0), c.gate.row(r0), c.up.row(r0), dgate.row(r0), dup.row(r0),
                               static_cast<std::size_t>(m) * Fe, s);
            matmul_nt(be, s, dgate.row(r0), store.value(ex.w_gate), dx_exp.row(r0), m, H, Fe);
            matmul_nt(be, s, dup.row(r0), store.value(ex.w_up), dx_exp.row(r0), m, H, Fe, 1.0f);
            matmul_tn(be, s, c.x_exp.row(r0), dgate.row(r0), store.grad(ex.w_gate), H, Fe, m);
            matmul_tn(be, s, c.x_exp.row(r0), dup.row(r0), store.grad(ex.w_up), H, Fe, m);
            r0 += m;
        }
    }
    Tensor dx_recv(be, received, H), dx_back(be, A, H);
    be.fill(dx_recv.ptr(), dx_recv.size(), 0.0f, s);
    be.scatter_add_rows(dx_exp.ptr(), c.perm.data(), nullptr, dx_recv.ptr(), received, H, s);
    ctx.all_to_all_v(Group::Ep, dx_recv.ptr(), c.recv_counts, dx_back.ptr(), c.send_counts);
    Tensor dhtok(be, n, H);
    be.fill(dhtok.ptr(), dhtok.size(), 0.0f, s);
    be.scatter_add_rows(dx_back.ptr(), c.token_index.data(), nullptr, dhtok.ptr(), A, H, s);

    // Router: through the renormalised top-k weights and the load-balancing loss, then the
    // softmax.
    const std::vector<float> hdw = download(be, dw.data(), dw.size(), s);
    std::vector<float> dwk(static_cast<std::size_t>(n) * K, 0.0f);
    for (int a = 0; a < A; ++a) {
        const int i = c.assign_token[static_cast<std::size_t>(a)];
        const auto& tk = c.topk[static_cast<std::size_t>(i)];
        const int k = static_cast<int>(std::find(tk.begin(), tk.end(), c.assign_expert[static_cast<std::size_t>(a)]) - tk.begin());
        dwk[static_cast<std::size_t>(i) * K + k] = hdw[static_cast<std::size_t>(a)];
    }
    std::vector<float> dlogits(static_cast<std::size_t>(n) * E);
    for (int i = 0; i < n; ++i) {
        const float* p = &c.host_probs[static_cast<std::size_t>(i) * E];
        const auto& tk = c.topk[static_cast<std::size_t>(i)];
        const int b = (c.row0 + i) / d_.seq_local;
        std::vector<double> dp(static_cast<std::size_t>(E));
        for (int e = 0; e < E; ++e) dp[static_cast<std::size_t>(e)] = c.aux_grad[static_cast<std::size_t>(b) * E + e];
        double z = 0, wdw = 0;
        for (int k = 0; k < K; ++k) {
            z += p[tk[static_cast<std::size_t>(k)]];
            wdw += static_cast<double>(c.host_weights[static_cast<std::size_t>(i) * K + k]) * dwk[static_cast<std::size_t>(i) * K + k];
        }
        // w_k = p_k / z  ⇒  ∂L/∂p_j = (∂L/∂w_j − Σ_k w_k ∂L/∂w_k) / z for j in the top k.
        for (int k = 0; k < K; ++k) {
            dp[static_cast<std::size_t>(tk[static_cast<std::size_t>(k)])] += (dwk[static_cast<std::size_t>(i) * K + k] - wdw) / z;
        }
        double pdp = 0;
        for (int e = 0; e < E; ++e) pdp += p[e] * dp[static_cast<std::size_t>(e)];
        for (int e = 0; e < E; ++e) {
            dlogits[static_cast<std::size_t>(i) * E + e] = static_cast<float>(p[e] * (dp[static_cast<std::size_t>(e)] - pdp));
        }
    }
    {
        RankContext::Op op(ctx, pname("router.bwd"), block_, 2 * gemm_flops(n, E, H));
        Floats dl(be, dlogits.size());
        be.copy_to_device(dl.data(), dlogits.data(), dlogits.size() * sizeof(float), s);
        matmul_nt(be, s, dl.data(), store.value(router_), dhtok.ptr(), n, H, E, 1.0f);
        matmul_tn(be, s, c.htok.ptr(), dl.data(), store.grad(router_), H, E, n);
    }
    Tensor dh;
    if (split_tokens) {
        dh = Tensor(be, d_.rows, H);
        ctx.all_gather(Group::Tp, dhtok.ptr(), dh.ptr(), dhtok.size());
    } else {
        dh = std::move(dhtok);
    }
    Tensor dx(be, c.x.rows, H);
    {
        RankContext::Op op(ctx, pname("norm.bwd"), block_, 0);
        be.rmsnorm_backward(dh.ptr(), c.x.ptr(), store.value(norm_), c.rstd.data(), dx.ptr(),
                            store.grad(norm_), c.x.rows, H, s);
        be.axpy(dx.ptr(), dout.ptr(), dx.size(), 1.0f, s);
    }
    return dx;
}

}  // namespace meshwork::engine
