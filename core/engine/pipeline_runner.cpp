#include "core/engine/pipeline_runner.h"

#include "core/engine/nvtx/scoped_range.h"

namespace meshwork::engine {

void run_pipeline(RankContext& ctx, ParamStore& store, const ModelDims& d,
                  std::vector<std::unique_ptr<ModelChunk>>& chunks,
                  const std::vector<PipeOp>& ops, std::vector<MicroBatch>& mbs) {
    const int pp = ctx.size(Axis::Pp), stage = ctx.rank(Axis::Pp);
    const int total = pp * static_cast<int>(chunks.size());
    const int next = (stage + 1) % pp, prev = (stage - 1 + pp) % pp;
    // One tag per (micro-batch, receiving chunk, direction): sends never wait, so any valid
    // schedule order runs without deadlock.
    const auto tag = [&](int mb, int global_chunk, bool backward) {
        return (mb * total + global_chunk) * 2 + (backward ? 1 : 0);
    };
    const std::size_t act = static_cast<std::size_t>(d.region_rows) * d.hidden;
    for (const PipeOp& op : ops) {
        MicroBatch& mb = mbs.at(static_cast<std::size_t>(op.micro_batch));
        ModelChunk& chunk = *chunks.at(static_cast<std::size_t>(op.chunk));
        const int gc = op.chunk * pp + stage;
        ctx.micro_batch = op.micro_batch;
        const ScopedRange range(ctx.be, range_name::micro_batch(op.micro_batch));
        if (op.kind == PipeOpKind::Forward) {
            // What a forward pass allocates is what it keeps for its backward (its transients
            // too, while they live); the backward's allocations stay buffers.
            const MemoryKindScope kind(ctx.be, MemoryKind::Activations);
            Tensor input;
            if (!chunk.first()) {
                input = Tensor(ctx.be, d.region_rows, d.hidden);
                ctx.recv(Axis::Pp, input.ptr(), act, prev, tag(op.micro_batch, gc, false));
            }
            Tensor out = chunk.forward(ctx, store, mb, std::move(input));
            if (!chunk.last()) ctx.send(Axis::Pp, out.ptr(), act, next, tag(op.micro_batch, gc + 1, false));
        } else {
            Tensor dout;
            if (!chunk.last()) {
                dout = Tensor(ctx.be, d.region_rows, d.hidden);
                ctx.recv(Axis::Pp, dout.ptr(), act, next, tag(op.micro_batch, gc, true));
            }
            Tensor din = chunk.backward(ctx, store, mb, std::move(dout));
            if (!chunk.first()) ctx.send(Axis::Pp, din.ptr(), act, prev, tag(op.micro_batch, gc - 1, true));
        }
    }
    ctx.micro_batch = -1;
}

}  // namespace meshwork::engine
