#include "core/cost/moe_dispatch.h"

#include <algorithm>

#include "core/cost/flex_kernel_rate.h"

namespace meshwork::cost {

double expected_groups_hit(int experts, int top_k, int groups) {
    if (experts <= 0 || top_k <= 0 || groups <= 1) return groups == 1 && experts > 0 ? 1.0 : 0.0;
    const double e = experts;
    const double per_group = e / groups;
    const int k = std::min(top_k, experts);
    // C(E − E/g, k) / C(E, k) = Π_{i<k} (E − E/g − i) / (E − i): a group none of the k hits.
    double miss = 1.0;
    for (int i = 0; i < k; ++i) miss *= std::max(0.0, e - per_group - i) / (e - i);
    return groups * (1.0 - miss);
}

MoeDispatchCost moe_dispatch_cost(const LinkModel& link, const GroupSpan& ep, MoeDispatcher d,
                                  MoeFlexBackend backend, int experts, int top_k, double tokens,
                                  double token_bytes) {
    MoeDispatchCost out;
    if (ep.size <= 1 || tokens <= 0 || token_bytes <= 0) return out;
    const double n = ep.size;
    const double per_node = ep.per_node;
    const double nodes = ep.nodes;
    switch (d) {
        case MoeDispatcher::AllToAll: {
            // One copy per (token, expert), permuted before the exchange (token_dispatcher.py
            // :375 MoEAlltoAllTokenDispatcher); (k−1)/n of them stay inside the node.
            out.bytes = tokens * top_k * token_bytes;
            out.dispatch_s = out.combine_s = all_to_all_s(link, ep, out.bytes);
            out.inter_copies = top_k * (n - per_node) / n;
            out.intra_copies = top_k * (per_node - 1) / n;
            break;
        }
        case MoeDispatcher::AllGather: {
            // Every rank gathers the hidden states of the whole group and keeps its experts'
            // tokens; the combine reduce-scatters them back (token_dispatcher.py:233
            // MoEAllGatherTokenDispatcher).
            const double gathered = tokens * token_bytes * n;
            out.bytes = gathered;
            out.dispatch_s = all_gather_s(link, ep, gathered);
            out.combine_s = reduce_scatter_s(link, ep, gathered);
            out.inter_copies = (n - per_node);
            out.intra_copies = (per_node - 1);
            break;
        }
        case MoeDispatcher::Flex: {
            // DeepEP's normal kernels and HybridEP send a token once to each node holding
            // one of its experts over the inter-node link (DeepEP README, "Normal kernels with
            // NVLink and RDMA forwarding"; Megatron-LM fused_a2a.py:94 num_tokens_per_rdma_rank)
            // and forward it over NVLink to each GPU there that holds one; the two stages are
            // pipelined, so the slower tier sets the time. A copy a forwarding GPU keeps for
            // itself crosses no link.
            const double remote_nodes = expected_groups_hit(experts, top_k, ep.nodes) * (nodes - 1) / nodes;
            const double gpus_hit = expected_groups_hit(experts, top_k, ep.size);
            out.inter_copies = nodes > 1 ? remote_nodes : 0.0;
            out.intra_copies = gpus_hit * (per_node - 1) / per_node;
            const double inter = out.inter_copies > 0 ? link.inter_latency_s + tokens * token_bytes *
                                                            out.inter_copies / link.inter_bytes_per_s
                                                      : 0.0;
            const double intra = out.intra_copies > 0 ? link.intra_latency_s + tokens * token_bytes *
                                                            out.intra_copies / link.intra_bytes_per_s
                                                      : 0.0;
            out.bytes = tokens * token_bytes * (out.inter_copies + out.intra_copies);
            out.dispatch_s = out.combine_s = std::max(inter, intra);
            if (per_node > 1) {
                // The NVLink kernels run on a fixed SM budget: on NVLink5 they deliver well
                // under the link (flex_kernel_rate.h, DeepEP's published HybridEP/DeepEP
                // tables), counted as they are there: every copy the rank receives, its own
                // included (balanced routing: as many as it sends, gpus_hit per token).
                const FlexKernelRate r = flex_kernel_rate(backend, static_cast<int>(per_node));
                const double received = tokens * token_bytes * gpus_hit;
                out.dispatch_s = std::max(out.dispatch_s, link.intra_latency_s + received / r.dispatch_bytes_per_s);
                out.combine_s = std::max(out.combine_s, link.intra_latency_s + received / r.combine_bytes_per_s);
            }
            break;
        }
    }
    return out;
}

double a2a_overlap_paired_share(int pp, int vpp, int micro_batches, int group) {
    if (micro_batches <= 0) return 0;
    const double passes = static_cast<double>(micro_batches) * std::max(1, vpp);
    double alone = 1;  // no pipelining: the first forward
    if (pp > 1) alone = 2.0 * (pp - 1) + (std::max(1, vpp) - 1) * static_cast<double>(std::max(pp, group)) + 1;
    return std::clamp((passes - alone) / passes, 0.0, 1.0);
}

double a2a_overlap_exposed_s(double a2a_s, double fwd_attention_s, double fwd_mlp_s,
                             double bwd_attention_s, double bwd_mlp_s) {
    const double a = std::max(0.0, a2a_s);
    // Each pairing ends when both its all-to-all and its compute have: the next node of
    // either micro-batch waits for the previous one of its own chain, on either stream.
    return std::max(0.0, a - fwd_attention_s) + std::max(0.0, a - bwd_mlp_s) +
           std::max(0.0, a - fwd_mlp_s) + std::max(0.0, a - bwd_attention_s);
}

}  // namespace meshwork::cost
