#include "core/cost/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/cost/dp_overlap.h"
#include "core/cost/activation_offload.h"
#include "core/cost/host_sharing.h"
#include "core/layout/layout_validate.h"

namespace meshwork {

using namespace cost;

namespace {

// First layer of chunk `g` under balanced_stage_split(layers, chunks): every chunk gets
// layers/chunks + 1, less one for the `surplus` chunks taken alternately from the front
// (ceil(surplus/2) of them) and the back (floor(surplus/2)).
int balanced_first_layer(int layers, int chunks, int g) {
    if (layers % chunks == 0) return g * (layers / chunks);
    const int base = layers / chunks + 1;
    const int surplus = chunks - layers % chunks;
    const int front = (surplus + 1) / 2;
    const int back_start = chunks - surplus / 2;
    return g * base - std::min(g, front) - std::max(0, g - back_start);
}

int chunk_first_layer(const Placement& pl, int layers, int chunks, int g) {
    if (pl.layers_per_stage.empty()) return balanced_first_layer(layers, chunks, g);
    int first = 0;
    const int n = std::min<int>(g, static_cast<int>(pl.layers_per_stage.size()));
    for (int j = 0; j < n; ++j) first += pl.layers_per_stage[static_cast<std::size_t>(j)];
    return first;
}

std::int64_t to_bytes(double v) {
    if (!(v > 0)) return 0;  // also maps NaN to 0
    return v >= 9.2e18 ? std::int64_t{9'200'000'000'000'000'000} : static_cast<std::int64_t>(std::llround(v));
}

double finite_nonneg(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

// Per pipeline rank, summed over its model chunks, for one micro-batch.
struct StageSums {
    PassParts fwd, bwd;
    double dense_params = 0, expert_params = 0;
    double activation_bytes = 0;  // all chunks, one micro-batch each
    double working_bytes = 0;     // transient: a fully recomputed block's activations
    double transient_bytes = 0;   // logits of the live micro-batch (last stage)
    double hardware_flops = 0;
    double edge_params = 0;       // embedding and head parameters on this stage
    int layers = 0, moe_layers = 0;
};

// Per pipeline rank, what its data-parallel collectives at the end of the step need.
struct StageDp {
    std::vector<double> reduce_s;        // per local chunk: its gradient reduction
    std::vector<double> bwd_s;           // per local chunk: one micro-batch's backward
    std::vector<ChunkGather> gathers;    // per local chunk: its parameter gather, forward
    double tied_s = 0;                   // tied-embedding all-reduce (first and last stage)
    double params = 0;                   // parameters the rank holds (bucket count)
};

}  // namespace

CostModel::CostModel(const ModelSpec& model, const ClusterSpec& cluster)
    : model_(model), cluster_(cluster), profile_(build_model_profile(model)) {}

int CostModel::chunk_layers(const Placement& pl, int layers, int chunks, int g) {
    if (!pl.layers_per_stage.empty()) {
        return g >= 0 && g < static_cast<int>(pl.layers_per_stage.size())
                   ? pl.layers_per_stage[static_cast<std::size_t>(g)]
                   : 0;
    }
    if (chunks <= 0 || layers < chunks || g < 0 || g >= chunks) return 0;
    return balanced_first_layer(layers, chunks, g + 1) - balanced_first_layer(layers, chunks, g);
}

int CostModel::moe_blocks(int first, int count) const {
    if (!model_.is_moe()) return 0;
    int n = 0;
    for (int b = first; b < first + count; ++b) n += model_.is_moe_block(b) ? 1 : 0;
    return n;
}

int CostModel::max_local_experts(const Placement& pl, int ep) const {
    if (!model_.is_moe()) return 0;
    if (pl.experts_per_ep_rank.empty()) return model_.moe.num_experts / std::max(1, ep);
    std::size_t most = 0;
    for (const auto& e : pl.experts_per_ep_rank) most = std::max(most, e.size());
    return static_cast<int>(most);
}

void CostModel::prepare(const ParallelConfig& parallel, const TrainingConfig& training,
                        LayoutCosts& out) const {
    prepare_layout_costs(profile_, cluster_, parallel, training, out);
}

ChunkCost CostModel::chunk_cost(const LayoutCosts& c, const Placement& pl, int g) const {
    return chunk_cost(c, pl, g, chunk_first_layer(pl, profile_.layers, c.pp * c.vpp, g));
}

ChunkCost CostModel::chunk_cost(const LayoutCosts& c, const Placement& pl, int g, int first) const {
    const int chunks = c.pp * c.vpp;
    const int layers = profile_.layers;
    ChunkCost cc;
    cc.chunk = g;
    const int n = chunk_layers(pl, layers, chunks, g);
    const int n_moe = moe_blocks(first, n);
    const int n_dense = n - n_moe;
    cc.first_layer = first;
    cc.layers = n;
    cc.moe_layers = n_moe;
    // Full recomputation of the first recompute_num_layers blocks of each chunk
    // (Megatron's "block" method; 0 = all).
    int n_rec = 0, rec_moe = 0;
    if (c.recompute == Recompute::Full) {
        n_rec = c.recompute_num_layers > 0 ? std::min(n, c.recompute_num_layers) : n;
        rec_moe = moe_blocks(first, n_rec);
    }
    const int rec_dense = n_rec - rec_moe;
    cc.recomputed_layers = n_rec;
    cc.fwd += c.dense.fwd * n_dense;
    cc.fwd += c.moe.fwd * n_moe;
    cc.bwd += c.dense.bwd * n_dense;
    cc.bwd += c.moe.bwd * n_moe;
    cc.bwd += c.dense.full_recompute * rec_dense;
    cc.bwd += c.moe.full_recompute * rec_moe;
    cc.hardware_flops = c.dense.hardware_flops * n_dense + c.moe.hardware_flops * n_moe +
                        c.dense.recompute_flops_full * rec_dense + c.moe.recompute_flops_full * rec_moe;
    if (c.recompute == Recompute::Selective || c.recompute == Recompute::SelectiveOp) {
        PassParts sel;
        sel.recompute_s = c.dense.selective_recompute_s * n_dense + c.moe.selective_recompute_s * n_moe;
        cc.bwd += sel;
        cc.hardware_flops += c.dense.recompute_flops_selective * n_dense +
                             c.moe.recompute_flops_selective * n_moe;
    }
    cc.activation_bytes = c.dense.activation_bytes * (n_dense - rec_dense) +
                          c.moe.activation_bytes * (n_moe - rec_moe) +
                          c.dense.checkpoint_bytes * rec_dense + c.moe.checkpoint_bytes * rec_moe;
    if (n_rec > 0) {
        cc.working_bytes = rec_moe > 0 ? c.moe.activation_bytes : c.dense.activation_bytes;
    }
    // Activation offload (activation_offload.h; validation allows it only without
    // recomputation): the offloaded layers' activations leave HBM but one layer's, the copy in
    // flight; each copy shows where the layer beside it does not hide it.
    if (const int n_off = offloaded_layers_in(first, n, c.offload_activation_layers); n_off > 0) {
        const int off_moe = moe_blocks(first, n_off);
        const int off_dense = n_off - off_moe;
        cc.activation_bytes -= c.dense.activation_bytes * off_dense + c.moe.activation_bytes * off_moe;
        cc.working_bytes = std::max(cc.working_bytes, off_moe > 0 ? c.moe.activation_bytes : c.dense.activation_bytes);
        auto exposed = [&](const BlockCost& b, const PassParts& beside) {
            return offload_exposed_s(b.activation_bytes, beside.total_s(), c.host_bytes_per_s, c.host_latency_s);
        };
        cc.fwd.offload_s += off_dense * exposed(c.dense, c.dense.fwd) + off_moe * exposed(c.moe, c.moe.fwd);
        cc.bwd.offload_s += off_dense * exposed(c.dense, c.dense.bwd) + off_moe * exposed(c.moe, c.moe.bwd);
    }
    if (c.recompute == Recompute::SelectiveOp) {
        cc.working_bytes = n_moe > 0 ? c.moe.recompute_working_bytes : c.dense.recompute_working_bytes;
    } else if (c.recompute == Recompute::Selective) {
        // Module-level recomputation: the discarded tensors of the block in its backward.
        cc.working_bytes = std::max(n_dense > 0 ? c.dense.recompute_working_bytes : 0.0,
                                    n_moe > 0 ? c.moe.recompute_working_bytes : 0.0);
    }
    // The worst EP rank holds the most experts (uneven placements).
    const double avg_local = model_.is_moe() ? static_cast<double>(model_.moe.num_experts) / c.ep : 0;
    const double expert_scale = avg_local > 0 ? max_local_experts(pl, c.ep) / avg_local : 1.0;
    cc.dense_params = c.dense.dense_params * n_dense + c.moe.dense_params * n_moe;
    cc.expert_params = c.moe.expert_params * n_moe * expert_scale;
    if (g == 0) {
        cc.fwd += c.embedding.fwd;
        cc.bwd += c.embedding.bwd;
        cc.activation_bytes += c.embedding.activation_bytes;
        cc.dense_params += c.embedding.dense_params;
        cc.edge_params += c.embedding.dense_params;
    }
    if (g == chunks - 1) {
        cc.fwd += c.head.fwd;
        cc.bwd += c.head.bwd;
        cc.activation_bytes += c.head.activation_bytes;
        cc.transient_bytes += c.head.transient_bytes;
        cc.dense_params += c.head.dense_params;
        cc.edge_params += c.head.dense_params;
        cc.hardware_flops += c.head.model_flops;
    }
    return cc;
}

void CostModel::estimate(const Layout& layout, Estimate& out) const {
    estimate(layout.parallel, layout.placement, layout.training, out);
}

namespace {

// First layers of the model chunks of one pipeline rank, carried from rank r to r + 1 (each
// chunk's first layer grows by the layers of the chunk before it) so that an estimate finds
// them in O(chunks) without allocating; ranks with more chunks than fit fall back to
// chunk_cost's own sum.
class ChunkFirsts {
public:
    ChunkFirsts(const Placement& pl, int layers, int pp, int vpp) : vpp_(vpp) {
        if (vpp_ > kMax) return;
        for (int k = 0; k < vpp_; ++k) first_[static_cast<std::size_t>(k)] = chunk_first_layer(pl, layers, pp * vpp, k * pp);
    }
    [[nodiscard]] bool carried() const { return vpp_ <= kMax; }
    [[nodiscard]] int first(int k) const { return first_[static_cast<std::size_t>(k)]; }
    // Chunk k of rank r holds `layers`: chunk k of rank r + 1 starts after them.
    void passed(int k, int layers) {
        if (carried()) first_[static_cast<std::size_t>(k)] += layers;
    }

private:
    static constexpr int kMax = 64;
    int vpp_;
    std::array<int, kMax> first_{};
};

// One pipeline stage summed over its model chunks, for one micro-batch; `dp` gets the
// per-chunk data-parallel figures. Moves `firsts` on to rank r + 1.
StageSums stage_sums(const CostModel& model, const LayoutCosts& c, const Placement& pl, int r,
                     ChunkFirsts& firsts, StageDp& dp) {
    StageSums s;
    dp.reduce_s.clear();
    dp.bwd_s.clear();
    dp.gathers.clear();
    dp.params = 0;
    for (int k = 0; k < c.vpp; ++k) {
        const int g = k * c.pp + r;
        const ChunkCost cc = firsts.carried() ? model.chunk_cost(c, pl, g, firsts.first(k)) : model.chunk_cost(c, pl, g);
        firsts.passed(k, cc.layers);
        const GradSyncCost sync = grad_sync_cost(c, cc.dense_params, cc.expert_params);
        dp.reduce_s.push_back(finite_nonneg(sync.reduce_s));
        dp.bwd_s.push_back(finite_nonneg(cc.bwd.total_s()));
        dp.gathers.push_back(ChunkGather{finite_nonneg(sync.gather_s), finite_nonneg(cc.fwd.total_s())});
        dp.params += cc.dense_params + cc.expert_params;
        s.layers += cc.layers;
        s.moe_layers += cc.moe_layers;
        s.fwd += cc.fwd;
        s.bwd += cc.bwd;
        s.dense_params += cc.dense_params;
        s.expert_params += cc.expert_params;
        s.activation_bytes += cc.activation_bytes;
        s.working_bytes = std::max(s.working_bytes, cc.working_bytes);
        s.transient_bytes += cc.transient_bytes;
        s.hardware_flops += cc.hardware_flops;
        s.edge_params += cc.edge_params;
    }
    return s;
}

// ZeRO-3's working set as FSDP2 holds it (torch.distributed fully_shard per block, as
// torchtitan applies it, parallelize_llama.py:309-339 at 9dec370): the gathered 16-bit
// weights of the running block and of the next one, prefetched; the unsharded gradient of
// one block in the gradient dtype waiting for its reduce-scatter; the root group (embedding,
// final norm, head), which FSDP2 does not reshard after forward (_fsdp_state.py,
// FSDPState._lazy_init, "for the root, do not reshard after forward"), held gathered from
// the first forward to the last backward. Under a pipeline torchtitan keeps every block
// gathered from its forward to its backward (reshard_after_forward False with PP,
// parallelize_llama.py:326-329), so the whole stage is held; and PyTorch's pipelining
// schedules turn FSDP's gradient reduce-scatter off but for the last micro-batch
// (torch/distributed/pipelining/stage.py, backward_maybe_with_nosync:
// set_requires_gradient_sync), so the stage's unsharded gradients accumulate through the
// step, in the gradient dtype (FSDP2's reduce dtype, fp32 in torchtitan).
double zero3_gathered_bytes(const LayoutCosts& c, const StageSums& s, double dense_shard) {
    if (c.zero_stage < 3) return 0;
    const double expert_shard = c.expert_shard_span.size;
    if (dense_shard <= 1 && expert_shard <= 1) return 0;
    const ParamStateBytes& b = c.state_bytes;
    if (c.pp > 1) return (s.dense_params + s.expert_params) * (b.weight + b.grad);
    double block = 0;
    if (s.layers > s.moe_layers) block = std::max(block, c.dense.dense_params);
    if (s.moe_layers > 0) block = std::max(block, c.moe.dense_params + c.moe.expert_params);
    return (2.0 * block + s.edge_params) * b.weight + block * b.grad;
}

// One pipeline stage's memory: parameters, gradients and optimizer state after ZeRO, the
// activations of the micro-batches in flight, buffers and the reserve.
void stage_memory(const LayoutCosts& c, const ModelProfile& profile, const StageSums& s, StageMemory& st) {
    const int pp = c.pp, v = c.vpp;
    // ZeRO shards over a shard group: all data-parallel ranks, or dp/replicas with hybrid sharding.
    const double dense_shard = c.dense_shard_span.size;
    const ParamMemory dense_mem =
        param_memory(s.dense_params, c.state_bytes, c.zero_stage, dense_shard, c.fsdp_fp32_shards);
    const ParamMemory expert_mem =
        param_memory(s.expert_params, c.state_bytes, c.zero_stage, c.expert_shard_span.size, c.fsdp_fp32_shards);
    const double activations = st.in_flight * s.activation_bytes / v;
    double buffers = s.working_bytes + s.transient_bytes;
    if (pp > 1) buffers += 4.0 * c.p2p_bytes;  // send and receive, forward and backward
    if (c.tp > 1) buffers += c.tokens * profile.hidden * c.element_bytes;  // gathered input
    if (s.moe_layers > 0) {
        buffers += 2.0 * c.tokens * profile.top_k / c.tp * profile.hidden * c.element_bytes;
    }
    buffers += zero3_gathered_bytes(c, s, dense_shard);
    const double reserved = c.reserved_fixed_bytes + c.fragmentation * (activations + buffers);
    // Offloaded state lives in host memory; the gathered working set of ZeRO-3 is in the
    // buffers either way.
    st.params_bytes = c.offload_params ? 0 : to_bytes(dense_mem.params_bytes + expert_mem.params_bytes);
    st.grads_bytes = to_bytes(dense_mem.grads_bytes + expert_mem.grads_bytes);
    st.optimizer_bytes = c.offload_optimizer ? 0 : to_bytes(dense_mem.optimizer_bytes + expert_mem.optimizer_bytes);
    st.activations_bytes = to_bytes(activations);
    st.buffers_bytes = to_bytes(buffers);
    st.reserved_bytes = to_bytes(reserved);
    st.peak_bytes = st.params_bytes + st.grads_bytes + st.optimizer_bytes +
                    st.activations_bytes + st.buffers_bytes + st.reserved_bytes;
    const auto hbm = static_cast<std::int64_t>(c.hbm_bytes);
    st.fits = st.peak_bytes <= hbm;
    st.overflow_bytes = st.fits ? 0 : st.peak_bytes - hbm;
}

// One pipeline stage's pass and end-of-step times; returns the exposed ZeRO-2/3 traffic of
// one micro-batch (forward plus backward, all chunks).
double stage_time(const LayoutCosts& c, const StageSums& s, int r, StageMemory& st) {
    const int pp = c.pp, v = c.vpp;
    const GradSyncCost sync = grad_sync_cost(c, s.dense_params, s.expert_params);
    // Per model chunk of the stage (v of them), then summed.
    const ZeroExposure z = zero_exposure(sync.per_pass_gather_s / v, sync.per_micro_batch_reduce_s / v,
                                         s.fwd.compute_s() / v, s.bwd.compute_s() / v, c.dp_overlap,
                                         forward_follows_backward(c));
    const double zero_fwd = z.fwd_s * v;
    const double zero_bwd = z.bwd_s * v;
    // ZeRO-Infinity fetches the weight shard from the host before each pass, not hidden.
    const double host_pass = offload_pass_s(c, s.dense_params, s.expert_params);
    st.forward_s = finite_nonneg(s.fwd.total_s() + zero_fwd + host_pass);
    st.backward_s = finite_nonneg(s.bwd.total_s() + zero_bwd + host_pass);
    st.dp_reduce_s = finite_nonneg(sync.reduce_s + ((r == 0 || r == pp - 1) ? c.tied_embedding_sync_s : 0.0));
    st.dp_gather_s = finite_nonneg(sync.gather_s);
    st.optimizer_s = finite_nonneg(optimizer_step_s(c, s.dense_params, s.expert_params * 1.0) +
                                   offload_step_s(c, s.dense_params, s.expert_params));
    return zero_fwd + zero_bwd;
}

// The busiest rank's time per step, by kind.
void busiest_breakdown(const LayoutCosts& c, const StageSums& s, const StageMemory& st, double zero_s,
                       double p2p_hidden, TimeBreakdown& t) {
    const int m = c.micro_batches, v = c.vpp;
    t = TimeBreakdown{};
    t.compute_s = m * (s.fwd.compute_s() + s.bwd.compute_s());
    t.recompute_s = m * s.bwd.recompute_s;
    t.host_launch_s = m * (s.fwd.host_s + s.bwd.host_s);
    t.activation_offload_s = m * (s.fwd.offload_s + s.bwd.offload_s);
    t.tp_comm_s = m * (s.fwd.tp_s + s.bwd.tp_s);
    t.cp_comm_s = m * (s.fwd.cp_s + s.bwd.cp_s);
    t.ep_comm_s = m * (s.fwd.ep_s + s.bwd.ep_s);
    t.pp_comm_s = m * (2.0 * v * c.p2p_s - p2p_hidden);
    t.dp_comm_total_s = st.dp_reduce_s + st.dp_gather_s + m * zero_s;
    t.dp_comm_s = m * zero_s;
}

// End of step: gradient reduction, optimizer, parameter all-gather (dp_overlap.h). Each rank's
// reductions queue from when Megatron launches them; rank r finishes its last backward before
// ranks r−1 … 0 finish theirs, a drain in which its reductions run unseen. The parameter
// gathers of the next step's first forwards are charged here too.
struct StepTail {
    double dp_s = 0, gather_s = 0, optimizer_s = 0;
};

// Time from the end of a rank's k-th last backward to its end: the interleaved cooldown runs
// the last group's backwards chunk by chunk (L of chunk 0 last, L of chunk 1 before them, …),
// each followed by its send.
double last_backwards_s(const LayoutCosts& c, const StageDp& dp, int last_group, int k) {
    double t = 0;
    for (int chunk = 0; chunk < c.vpp && k > 0; ++chunk) {
        const int n = chunk == c.vpp - 1 ? k : std::min(k, std::max(1, last_group));
        t += n * (dp.bwd_s[static_cast<std::size_t>(chunk)] + c.p2p_s);
        k -= n;
    }
    return t;
}

// Rank r's reductions into `out` (cleared), relative to the end of its last backward.
void rank_reductions(const LayoutCosts& c, const StageDp& dp, int r, std::vector<DpCollective>& out) {
    const int v = c.vpp, m = c.micro_batches;
    const int group = std::max(1, c.interleaved_group);
    const int last_group = m - ((m - 1) / group) * group;
    out.clear();
    switch (grad_launch(c, r)) {
        case GradLaunch::AfterBackward:
            for (int j = v - 1; j >= 0; --j) out.push_back({0.0, dp.reduce_s[static_cast<std::size_t>(j)]});
            break;
        case GradLaunch::PerChunk:
            // Chunk j's last backward is followed by j·L backwards; rank r launches its
            // reduction r backwards later.
            for (int j = v - 1; j >= 0; --j) {
                const int after = j * last_group - r;
                const double window = after > 0 ? last_backwards_s(c, dp, last_group, after) : 0.0;
                out.push_back({-c.dp_overlap * window, dp.reduce_s[static_cast<std::size_t>(j)]});
            }
            break;
        case GradLaunch::Buckets: {
            double reduce = 0;
            for (double x : dp.reduce_s) reduce += x;
            out.push_back(buckets_in_last_backward(reduce, c.dp_overlap * dp.bwd_s.front(),
                                                   ddp_bucket_count(dp.params, c.dp)));
            break;
        }
    }
    if (dp.tied_s > 0) out.push_back({0.0, dp.tied_s});
}

// Per-thread buffers of the end-of-step figures: an estimate allocates nothing once they
// have grown to the layout's size (search runs estimates on several threads).
struct DpScratch {
    std::vector<StageDp> stages;
    std::vector<DpCollective> reductions;
    std::vector<GatherExposure> gathers;
};
DpScratch& dp_scratch() {
    thread_local DpScratch scratch;
    return scratch;
}

StepTail step_tail(const LayoutCosts& c, const std::vector<StageMemory>& stages, const std::vector<StageDp>& dps) {
    const int v = c.vpp;
    StepTail t;
    double slack = 0, fill = 0, dp_tail = 0;
    DpScratch& scratch = dp_scratch();
    std::vector<GatherExposure>& gathers = scratch.gathers;
    gathers.clear();
    for (std::size_t r = 0; r < stages.size(); ++r) {
        const StageMemory& st = stages[r];
        const StageDp& dp = dps[r];
        rank_reductions(c, dp, static_cast<int>(r), scratch.reductions);
        dp_tail = std::max(dp_tail, run_dp_queue(scratch.reductions, c.dp_interference).tail_s - slack);
        gathers.push_back(rank_gather_exposure(c, dp.gathers, fill, dp.params, c.interleaved_group));
        t.optimizer_s = std::max(t.optimizer_s, st.optimizer_s);
        slack += st.backward_s / v + c.p2p_s;
        fill += dp.gathers.front().fwd_s + c.p2p_s;
    }
    t.dp_s = std::max(0.0, dp_tail);
    t.gather_s = step_gather_s(c, gathers, c.dp_interference);
    return t;
}

// Whether every stage fits, and the stage with the highest peak.
void worst_stage(Estimate& out) {
    out.fits = true;
    out.worst_stage = 0;
    out.max_overflow_bytes = 0;
    std::int64_t worst = -1;
    for (const auto& st : out.stages) {
        out.fits = out.fits && st.fits;
        if (st.peak_bytes > worst) {
            worst = st.peak_bytes;
            out.worst_stage = st.stage;
            out.max_overflow_bytes = st.overflow_bytes;
        }
    }
}

}  // namespace

void CostModel::estimate(const ParallelConfig& par, const Placement& pl, const TrainingConfig& tr,
                         Estimate& out) const {
    LayoutCosts c;
    prepare(par, tr, c);
    const int pp = c.pp, v = c.vpp, m = c.micro_batches;
    const double world = static_cast<double>(c.tp) * c.cp * c.dp * c.pp;

    out.stages.resize(static_cast<std::size_t>(pp));
    out.micro_batches = m;
    double max_w = -1, sum_w = 0, hw_flops_step = 0;
    double sum_rank_compute = 0;  // one rank of each stage: kernels and optimizer of a step
    // Megatron-LM overlaps the interleaved schedule's sends and receives with the next
    // chunk's compute by default (--no-overlap-p2p-communication turns it off;
    // megatron/training/arguments.py:3118 at d98e8a64; the 1F1B schedule has no overlap,
    // :1010-1012): in the steady state they cost nothing, fill and drain still wait.
    const double p2p_hidden = c.schedule == Schedule::Interleaved ? 2.0 * v * c.p2p_s : 0.0;
    int busiest = 0;
    std::vector<StageDp>& dps = dp_scratch().stages;
    if (dps.size() < static_cast<std::size_t>(pp)) dps.resize(static_cast<std::size_t>(pp));
    ChunkFirsts firsts(pl, profile_.layers, pp, v);
    for (int r = 0; r < pp; ++r) {
        StageDp& dp = dps[static_cast<std::size_t>(r)];
        const StageSums s = stage_sums(*this, c, pl, r, firsts, dp);
        dp.tied_s = (r == 0 || r == pp - 1) ? c.tied_embedding_sync_s : 0.0;
        StageMemory& st = out.stages[static_cast<std::size_t>(r)];
        st = StageMemory{};
        st.stage = r;
        st.layers = s.layers;
        st.in_flight = in_flight_passes(c.schedule, pp, v, m, r);
        stage_memory(c, profile_, s, st);
        const double zero_s = stage_time(c, s, r, st);

        const double w = st.forward_s + st.backward_s + 2.0 * v * c.p2p_s;
        sum_w += w;
        sum_rank_compute += m * (s.fwd.compute_s() + s.bwd.compute_s()) + st.optimizer_s;
        if (w > max_w) {
            max_w = w;
            busiest = r;
            busiest_breakdown(c, s, st, zero_s, p2p_hidden, out.time);
        }
        hw_flops_step += m * s.hardware_flops;
    }

    // --- pipeline -------------------------------------------------------------------------
    // Steady state runs at the busiest rank's pace; fill and drain add every other rank's
    // time once, divided by v when each rank's work is split into v interleaved chunks.
    const double steady_w = max_w - p2p_hidden;
    const double pipeline = m * steady_w + (sum_w - max_w) / v;
    const double bubble = pipeline - m * steady_w;
    const StepTail tail = step_tail(c, out.stages, dps);

    out.step_time_s = finite_nonneg(pipeline + tail.dp_s + tail.optimizer_s + tail.gather_s);
    // Ranks that share a host's cores wait for a core beyond their own timeline.
    const double host_bound = host_bound_step_s(cluster_, static_cast<int>(world), sum_rank_compute / pp);
    out.time.host_sharing_s = finite_nonneg(host_bound - out.step_time_s);
    out.step_time_s += out.time.host_sharing_s;
    const double step = out.step_time_s > 0 ? out.step_time_s : 1e-30;
    out.busiest_stage = busiest;
    out.time.pipeline_s = finite_nonneg(pipeline);
    out.time.bubble_s = finite_nonneg(bubble);
    out.time.dp_comm_s = finite_nonneg(out.time.dp_comm_s + tail.dp_s + tail.gather_s);
    out.time.optimizer_s = finite_nonneg(tail.optimizer_s);
    out.bubble_fraction = pipeline > 0 ? finite_nonneg(bubble / pipeline) : 0.0;
    out.exposed_comm_s = finite_nonneg(out.time.tp_comm_s + out.time.cp_comm_s + out.time.ep_comm_s +
                                       out.time.pp_comm_s + out.time.dp_comm_s);
    out.tokens_per_s = finite_nonneg(c.tokens_per_step / step);
    out.model_tflops_per_gpu = finite_nonneg(c.model_flops_per_step / world / step / 1e12);
    out.hardware_tflops_per_gpu = finite_nonneg(hw_flops_step / pp / step / 1e12);
    out.mfu = finite_nonneg(c.model_flops_per_step / world / step / c.peak_flops_per_s);
    // Per-layer parts, for audits (estimate --json "layers").
    auto parts = [](const PassParts& p, double recompute_s) {
        return LayerPassParts{p.attention_s, p.mlp_s, recompute_s, p.tp_s, p.ep_s, p.cp_s, p.host_s};
    };
    const bool dense_present = profile_.dense.present, moe_present = profile_.moe.present;
    out.dense_layer = {dense_present, parts(c.dense.fwd, 0), parts(c.dense.bwd, c.dense.selective_recompute_s)};
    out.moe_layer = {moe_present, parts(c.moe.fwd, 0), parts(c.moe.bwd, c.moe.selective_recompute_s)};
    worst_stage(out);
}

Estimate estimate_layout(const Layout& layout) {
    require_valid_layout(layout, layout.name.empty() ? std::string("<layout>") : layout.name);
    const CostModel model(layout);
    Estimate e;
    model.estimate(layout, e);
    return e;
}

double pipeline_bubble_fraction(Schedule schedule, int pp, int vpp, int m) {
    pp = std::max(1, pp);
    m = std::max(1, m);
    const int v = schedule == Schedule::Interleaved ? std::max(1, vpp) : 1;
    return static_cast<double>(pp - 1) / (static_cast<double>(v) * m + pp - 1);
}

}  // namespace meshwork
