#include "core/engine/model/moe_route.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/engine/model/index.h"

namespace meshwork::engine {

int moe_capacity(float capacity_factor, int tokens, int top_k, int experts) {
    if (capacity_factor <= 0) return tokens * top_k;
    return static_cast<int>(std::ceil(capacity_factor * tokens * top_k / static_cast<double>(experts)));
}

Routing route_tokens(std::vector<float> probs, const RouteShape& shape) {
    const int E = shape.experts, K = shape.top_k;
    Routing r;
    r.probs = std::move(probs);
    r.topk.assign(ix(shape.tokens), {});
    r.weights.assign(ix(shape.tokens) * ix(K), 0.0f);
    r.sequence_stats.assign(ix(shape.sequences) * ix(E) * 2, 0.0f);
    float* load_counts = r.sequence_stats.data();
    float* prob_sums = load_counts + ix(shape.sequences) * ix(E);
    std::vector<int> load(ix(E), 0);
    for (int i = 0; i < shape.tokens; ++i) {
        const float* p = &r.probs[ix(i, E, 0)];
        std::vector<int> top(ix(E));
        std::iota(top.begin(), top.end(), 0);
        std::partial_sort(top.begin(), top.begin() + K, top.end(),
                          [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
        top.resize(ix(K));
        float z = 0;
        for (int e : top) z += p[e];
        const int b = shape.sequence_of(i);
        for (int k = 0; k < K; ++k) {
            const int e = top[ix(k)];
            r.weights[ix(i, K, k)] = p[e] / z;
            load_counts[ix(b, E, e)] += 1.0f;
            if (load[ix(e)] < shape.capacity) {  // over capacity: dropped
                ++load[ix(e)];
                r.kept.push_back({i, e, k});
            }
        }
        for (int e = 0; e < E; ++e) prob_sums[ix(b, E, e)] += p[e];
        r.topk[ix(i)] = std::move(top);
    }
    return r;
}

AuxLoss load_balancing_loss(const std::vector<float>& sequence_stats, const RouteShape& shape,
                            double seq_len, float coef, int global_batch) {
    const int E = shape.experts, K = shape.top_k;
    const float* load_counts = sequence_stats.data();
    const float* prob_sums = load_counts + ix(shape.sequences) * ix(E);
    const double scale = coef * E / global_batch;
    AuxLoss out;
    out.grad.assign(ix(shape.sequences) * ix(E), 0.0f);
    for (int b = 0; b < shape.sequences; ++b) {
        for (int e = 0; e < E; ++e) {
            const double f = load_counts[ix(b, E, e)] / (seq_len * K);
            const double pm = prob_sums[ix(b, E, e)] / seq_len;
            out.loss += scale * f * pm;
            out.grad[ix(b, E, e)] = static_cast<float>(scale * f / seq_len);
        }
    }
    return out;
}

std::vector<float> router_logit_grad(const Routing& routing, const RouteShape& shape,
                                     const std::vector<Assignment>& sent,
                                     const std::vector<float>& weight_grad,
                                     const std::vector<float>& aux_grad) {
    const int E = shape.experts, K = shape.top_k;
    std::vector<float> dwk(ix(shape.tokens) * ix(K), 0.0f);  // ∂L/∂w per (token, slot)
    for (std::size_t a = 0; a < sent.size(); ++a) dwk[ix(sent[a].token, K, sent[a].slot)] = weight_grad[a];
    std::vector<float> dlogits(ix(shape.tokens) * ix(E));
    std::vector<double> dp(ix(E));
    for (int i = 0; i < shape.tokens; ++i) {
        const float* p = &routing.probs[ix(i, E, 0)];
        const auto& tk = routing.topk[ix(i)];
        const int b = shape.sequence_of(i);
        for (int e = 0; e < E; ++e) dp[ix(e)] = aux_grad[ix(b, E, e)];
        double z = 0, wdw = 0;
        for (int k = 0; k < K; ++k) {
            z += p[tk[ix(k)]];
            wdw += static_cast<double>(routing.weights[ix(i, K, k)]) * dwk[ix(i, K, k)];
        }
        // w_k = p_k / z  ⇒  ∂L/∂p_j = (∂L/∂w_j − Σ_k w_k ∂L/∂w_k) / z for j in the top k.
        for (int k = 0; k < K; ++k) dp[ix(tk[ix(k)])] += (dwk[ix(i, K, k)] - wdw) / z;
        double pdp = 0;
        for (int e = 0; e < E; ++e) pdp += p[e] * dp[ix(e)];
        for (int e = 0; e < E; ++e) dlogits[ix(i, E, e)] = static_cast<float>(p[e] * (dp[ix(e)] - pdp));
    }
    return dlogits;
}

}  // namespace meshwork::engine
