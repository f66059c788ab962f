// Mixture of experts with its RMSNorm and residual add: a replicated top-k softmax router
// (Mixtral: the k weights renormalised), experts spread over the EP ranks as the layout's
// placement says, dispatch and combine by all-to-all over the EP group, dropless or with a
// capacity factor, and the Switch-Transformer load-balancing loss computed per sequence so
// that it does not depend on how a layout cuts the batch.
//
// Without sequence parallelism the TP ranks hold the same tokens; each then routes only its
// 1/tp of them and the outputs are all-gathered, so that every token is dispatched once.
//
// The stages are separate files, as in Megatron-Core's moe/: routing and the load-balancing
// loss (moe_route), the dispatch plan (moe_dispatch_plan, pure host code), the all-to-all
// dispatch (moe_dispatch), the experts (moe_experts) and the combine (moe_combine); this
// class owns the parameters and the per-micro-batch state and runs the stages in order.
#pragma once

#include <map>
#include <vector>

#include "core/engine/model/dims.h"
#include "core/engine/model/micro_batch.h"
#include "core/engine/model/moe_combine.h"
#include "core/engine/model/moe_dispatch.h"
#include "core/engine/model/moe_dispatch_plan.h"
#include "core/engine/model/moe_experts.h"
#include "core/engine/model/moe_route.h"
#include "core/engine/params.h"
#include "core/engine/rank_context.h"

namespace meshwork::engine {

class MoeLayer {
public:
    // `experts_per_ep_rank`: the layout's placement (Layout::ep_experts()).
    MoeLayer(ParamStore& store, const ModelDims& d, int block, const RankCoords& coords,
             const std::vector<std::vector<int>>& experts_per_ep_rank);
    Tensor forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& x);
    Tensor backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& dout);
    // Load-balancing loss of the forwards since the last call, counted on one rank per
    // TP×CP group (the others return 0 so that a world sum counts it once).
    double take_aux_loss();

private:
    struct Cache {
        Tensor x;                      // the input, for the norm's backward
        Floats rstd;
        Tensor htok;                   // the normalised tokens this rank routes
        int row0 = 0;                  // their first row in the micro-batch
        Routing routing;
        std::vector<float> aux_grad;   // ∂L_aux/∂p per (sequence, expert)
        std::vector<Assignment> sent;  // the dispatch plan's rows, in send order
        MoeExchange exchange;
        ExpertActivations experts;
        Tensor returned;               // each sent row's expert output
    };
    [[nodiscard]] std::string pname(const std::string& what) const;
    [[nodiscard]] int routed_tokens() const { return d_.rows / d_.tp; }
    [[nodiscard]] bool split_tokens() const { return !d_.sp && d_.tp > 1; }
    [[nodiscard]] RouteShape route_shape(int row0) const;
    [[nodiscard]] ExpertBlock expert_block(const Cache& c, const std::string& op) const;
    Tensor normalise(RankContext& ctx, ParamStore& store, const Tensor& x, Cache& c);
    std::vector<float> router_forward(RankContext& ctx, ParamStore& store, const Tensor& htok);
    std::vector<float> balance_loss(RankContext& ctx, std::vector<float> sequence_stats, const RouteShape& shape);
    void router_backward(RankContext& ctx, ParamStore& store, const Cache& c, const Floats& d_weights,
                         Tensor& dhtok);
    Tensor gather_routed(RankContext& ctx, Tensor routed);

    ModelDims d_;
    int block_;
    int tp_rank_, cp_rank_;
    int norm_, router_;
    std::vector<MoeExpert> local_;
    ExpertPlacement placement_;
    double aux_loss_ = 0;
    std::map<int, Cache> cache_;
};

}  // namespace meshwork::engine
