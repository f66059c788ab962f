#include "core/engine/trainer.h"

#include "core/engine/nvtx/scoped_range.h"

#include <chrono>
#include <thread>

#include "core/common/error.h"

#include "core/engine/pipeline_runner.h"

namespace meshwork::engine {

namespace {
std::vector<std::unique_ptr<ModelChunk>> build_chunks(ParamStore& store, const Layout& layout,
                                                      const ModelDims& d, const RankCoords& c) {
    const int pp = layout.parallel.mesh.pp, vpp = layout.parallel.vpp;
    const auto layers = layout.stage_layers();
    const auto first = layout.stage_first_layer();
    std::vector<std::unique_ptr<ModelChunk>> chunks;
    for (int v = 0; v < vpp; ++v) {
        const int gc = v * pp + c.pp;
        chunks.push_back(std::make_unique<ModelChunk>(
            store, d, layout, c, first[static_cast<std::size_t>(gc)], layers[static_cast<std::size_t>(gc)],
            gc == 0, gc == pp * vpp - 1));
    }
    return chunks;
}
}  // namespace

ParamStore plan_params(const Layout& layout, const ModelDims& d, const RankCoords& coords) {
    ParamStore store;
    build_chunks(store, layout, d, coords);
    return store;
}

RankTrainer::RankTrainer(const Layout& layout, const EngineOptions& options, RankContext& ctx,
                         const TokenStream& tokens)
    : layout_(layout),
      options_(options),
      ctx_(ctx),
      tokens_(tokens),
      d_(make_dims(layout, options)),
      schedule_(build_pipeline_schedule(layout.training.schedule, layout.parallel.mesh.pp,
                                        layout.parallel.vpp, layout.num_micro_batches())) {
    chunks_ = build_chunks(store_, layout_, d_, ctx.coords);
    store_.finalize(ctx.be, ctx.compute, options.seed, options.init_std);
    optimizer_ = std::make_unique<Optimizer>(ctx, store_, options, layout.training.zero_stage);
}

std::vector<MicroBatch> RankTrainer::micro_batches(int step) {
    const int m = layout_.num_micro_batches();
    const int dp = layout_.parallel.mesh.dp;
    const auto local = cp_positions(d_.seq, d_.cp, ctx_.coords.cp);
    std::vector<std::int32_t> kpos;
    for (int r = 0; r < d_.cp; ++r) {
        for (int p : cp_positions(d_.seq, d_.cp, r)) kpos.push_back(p);
    }
    const std::vector<std::int32_t> qpos(local.begin(), local.end());
    std::vector<MicroBatch> out;
    for (int mb = 0; mb < m; ++mb) {
        std::vector<std::int32_t> tok, tgt, pos;
        for (int j = 0; j < d_.mbs; ++j) {
            // Global sequence number: the same sequences for every layout of this batch.
            const int g = (mb * dp + ctx_.coords.dp) * d_.mbs + j;
            const auto seq = tokens_.sequence(step, g, d_.seq + 1, d_.global_batch);
            for (int p : local) {
                tok.push_back(seq[static_cast<std::size_t>(p)]);
                tgt.push_back(seq[static_cast<std::size_t>(p) + 1]);
                pos.push_back(p);
            }
        }
        MicroBatch b;
        b.index = mb;
        b.tokens = upload_ints(ctx_.be, tok, ctx_.compute);
        b.targets = upload_ints(ctx_.be, tgt, ctx_.compute);
        b.pos = upload_ints(ctx_.be, pos, ctx_.compute);
        b.q_pos = upload_ints(ctx_.be, qpos, ctx_.compute);
        b.k_pos = upload_ints(ctx_.be, kpos, ctx_.compute);
        out.push_back(std::move(b));
    }
    return out;
}

StepResult RankTrainer::step(int step) {
    const auto t0 = std::chrono::steady_clock::now();
    if (ctx_.world_rank == options_.fault_rank && step == options_.fault_step) {
        if (options_.fault_kind == FaultKind::Hang) {
            std::this_thread::sleep_for(std::chrono::duration<double>(3 * options_.comm_timeout_s));
        } else {
            throw RuntimeError("injected fault at step " + std::to_string(step));
        }
    }
    ctx_.step = step;
    ctx_.begin_step_sched();
    const ScopedRange step_range(ctx_.be, range_name::step(step));
    store_.zero_grads(ctx_.be, ctx_.compute);
    auto mbs = micro_batches(step - 1);
    run_pipeline(ctx_, store_, d_, chunks_, schedule_.ops.at(static_cast<std::size_t>(ctx_.coords.pp)), mbs);
    // Loss: each rank's share (counted once per TP group and per MoE TP×CP group), summed.
    double loss = 0;
    for (auto& c : chunks_) loss += c->take_loss() + c->take_aux_loss();
    {
        const ScopedRange optimizer_range(ctx_.be, range_name::optimizer());
        optimizer_->step(ctx_, store_, step);
    }
    Floats total(ctx_.be, 1);
    const float local = static_cast<float>(loss);
    ctx_.be.copy_to_device(total.data(), &local, sizeof(float), ctx_.compute);
    ctx_.all_reduce(Axis::World, total.data(), 1);
    float sum = 0;
    ctx_.be.copy_to_host(&sum, total.data(), sizeof(float), ctx_.compute);
    ctx_.be.synchronize(ctx_.compute);
    ctx_.flush_trace();
    ctx_.end_step_sched();
    ctx_.step = -1;
    StepResult r;
    r.step = step;
    r.loss = sum;
    r.step_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.tokens_per_s = static_cast<double>(d_.global_batch) * d_.seq / r.step_time_s;
    return r;
}

}  // namespace meshwork::engine
