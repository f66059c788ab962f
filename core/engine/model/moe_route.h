// MoE routing on the host, after the router's softmax on the device: each token's top-k
// experts (ties to the lower id), their weights renormalised over the k (Mixtral), the
// capacity cut (assignments past an expert's capacity are dropped, in token order), and
// the per-sequence load and probability sums of the Switch-Transformer load-balancing loss.
// Also the router's backward to the logits. Pure functions of host data: no device, no
// communication.
#pragma once

#include <vector>

namespace meshwork::engine {

struct RouteShape {
    int tokens = 0;      // tokens this rank routes
    int experts = 0;
    int top_k = 0;
    int capacity = 0;    // assignments an expert keeps (tokens·k when dropless)
    int first_row = 0;   // row of the first routed token in the micro-batch
    int seq_local = 0;   // rows per sequence on this rank (to find a token's sequence)
    int sequences = 1;   // sequences of the micro-batch
    [[nodiscard]] int sequence_of(int token) const { return (first_row + token) / seq_local; }
};

// Capacity per expert: ceil(factor·tokens·k / experts), or tokens·k (dropless) for factor ≤ 0.
[[nodiscard]] int moe_capacity(float capacity_factor, int tokens, int top_k, int experts);

// One kept (token, expert) pair; `slot` is the expert's place in the token's top k.
struct Assignment {
    int token = 0;
    int expert = 0;
    int slot = 0;
};

struct Routing {
    std::vector<float> probs;              // tokens × experts, the softmax
    std::vector<std::vector<int>> topk;    // per token, its k experts by falling probability
    std::vector<float> weights;            // tokens × k, renormalised over the k
    std::vector<Assignment> kept;          // in token order, then slot order
    // Per (sequence, expert): the assignments routed (before the capacity cut), then the
    // probability sums; 2 · sequences × experts, summed over TP and CP by the caller.
    std::vector<float> sequence_stats;
};

[[nodiscard]] Routing route_tokens(std::vector<float> probs, const RouteShape& shape);

// L_aux = coef·E/B · Σ_seq Σ_e f_e·P_e with f_e = load_e/(S·k), P_e = Σ p_e / S, from the
// summed sequence_stats; `grad` is ∂L_aux/∂p per (sequence, expert).
struct AuxLoss {
    double loss = 0;
    std::vector<float> grad;
};
[[nodiscard]] AuxLoss load_balancing_loss(const std::vector<float>& sequence_stats, const RouteShape& shape,
                                          double seq_len, float coef, int global_batch);

// ∂L/∂logits (tokens × experts) from ∂L/∂weight of each assignment sent (`weight_grad[a]`
// belongs to `sent[a]`) and the load-balancing gradient: through the renormalisation of the
// top-k weights, then the softmax.
[[nodiscard]] std::vector<float> router_logit_grad(const Routing& routing, const RouteShape& shape,
                                                   const std::vector<Assignment>& sent,
                                                   const std::vector<float>& weight_grad,
                                                   const std::vector<float>& aux_grad);

}  // namespace meshwork::engine
