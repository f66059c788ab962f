// Mixture of experts with its RMSNorm and residual add: a replicated top-k softmax router
// (Mixtral: the k weights renormalised), experts spread over the EP ranks as the layout's
// placement says, dispatch and combine by all-to-all over the EP group, dropless or with a
// capacity factor, and the Switch-Transformer load-balancing loss computed per sequence so
// that it does not depend on how a layout cuts the batch.
//
// Without sequence parallelism the TP ranks hold the same tokens; each then routes only its
// 1/tp of them and the outputs are all-gathered, so that every token is dispatched once.
#pragma once

#include <map>
#include <vector>

#include "core/engine/model/dims.h"
#include "core/engine/model/micro_batch.h"
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
    struct Expert {
        int id = 0;
        int w_gate = 0, w_up = 0, w_down = 0;
    };
    struct Cache {
        Tensor x, htok, x_exp, gate, up, act, out_back;
        Floats rstd;
        Ints token_index, perm, identity;
        Floats weights;
        std::vector<float> host_probs, host_weights;
        std::vector<std::vector<int>> topk;       // per token
        std::vector<int> assign_token, assign_expert;  // in send order
        std::vector<std::size_t> send_counts, recv_counts;  // floats per EP rank
        std::vector<int> expert_rows;             // rows per local expert, expert-major
        std::vector<float> aux_grad;              // d aux / d p, per (sequence, expert)
        int row0 = 0;
    };
    [[nodiscard]] std::string pname(const std::string& what) const;

    ModelDims d_;
    int block_;
    int tp_rank_, cp_rank_;
    int norm_, router_;
    std::vector<Expert> local_;
    std::vector<int> owner_;       // EP rank of each expert
    std::vector<int> owner_slot_;  // position of each expert among its owner's experts
    std::vector<std::vector<int>> placement_;
    double aux_loss_ = 0;
    std::map<int, Cache> cache_;
};

}  // namespace meshwork::engine
