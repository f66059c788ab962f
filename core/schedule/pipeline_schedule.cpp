#include "core/schedule/pipeline_schedule.h"

#include <algorithm>

#include "core/common/error.h"

namespace meshwork {

namespace {

// Interleaved 1F1B (Narayanan et al. 2021; Megatron-LM's
// forward_backward_pipelining_with_interleaving): the forward passes walk Megatron's schedule
// table (get_schedule_table, pipeline_parallel/schedules.py:989-1016 at d98e8a64): for each
// group of N micro-batches (interleaved_group_size), every chunk in turn over the group's
// micro-batches; the backward passes walk the same table with the chunks reversed.
std::vector<PipeOp> interleaved_table(int vpp, int m, int group) {
    std::vector<PipeOp> table;
    table.reserve(static_cast<std::size_t>(m) * static_cast<std::size_t>(vpp));
    for (int first = 0; first < m; first += group) {
        const int last = first + group >= m ? m : first + group;
        for (int chunk = 0; chunk < vpp; ++chunk) {
            for (int mb = first; mb < last; ++mb) table.push_back({PipeOpKind::Forward, mb, chunk});
        }
    }
    return table;
}

std::vector<PipeOp> interleaved_rank(int rank, int pp, int vpp, int m) {
    const int group = interleaved_group_size(pp, m);
    const std::vector<PipeOp> table = interleaved_table(vpp, m, group);
    const int total = m * vpp;
    auto forward = [&](int k) { return table[static_cast<std::size_t>(k)]; };
    auto backward = [&](int k) {
        PipeOp op = table[static_cast<std::size_t>(k)];
        op.kind = PipeOpKind::Backward;
        op.chunk = vpp - 1 - op.chunk;
        return op;
    };
    // Megatron's warm-up: (pp - rank - 1)·2 + (vpp - 1)·N forwards, capped at all of them
    // (schedules.py:964-965).
    const int warmup = std::min(total, (pp - rank - 1) * 2 + (vpp - 1) * group);
    std::vector<PipeOp> ops;
    ops.reserve(static_cast<std::size_t>(2 * total));
    int f = 0, b = 0;
    for (; f < warmup; ++f) ops.push_back(forward(f));
    while (f < total) {
        ops.push_back(forward(f++));
        ops.push_back(backward(b++));
    }
    while (b < total) ops.push_back(backward(b++));
    return ops;
}

std::vector<PipeOp> one_f_one_b_rank(int rank, int pp, int m) {
    // PipeDream-Flush / Megatron's non-interleaved 1F1B: pp - rank - 1 warm-up forwards,
    // then alternate one forward and one backward, then drain the backwards.
    const int warmup = std::min(m, pp - rank - 1);
    std::vector<PipeOp> ops;
    int f = 0, b = 0;
    for (; f < warmup; ++f) ops.push_back({PipeOpKind::Forward, f, 0});
    while (f < m) {
        ops.push_back({PipeOpKind::Forward, f++, 0});
        ops.push_back({PipeOpKind::Backward, b++, 0});
    }
    while (b < m) ops.push_back({PipeOpKind::Backward, b++, 0});
    return ops;
}

std::vector<PipeOp> gpipe_rank(int m, int vpp) {
    // GPipe (Huang et al. 2019): every forward, then every backward in reverse.
    std::vector<PipeOp> ops;
    for (int mb = 0; mb < m; ++mb) {
        for (int c = 0; c < vpp; ++c) ops.push_back({PipeOpKind::Forward, mb, c});
    }
    for (int mb = m - 1; mb >= 0; --mb) {
        for (int c = vpp - 1; c >= 0; --c) ops.push_back({PipeOpKind::Backward, mb, c});
    }
    return ops;
}

}  // namespace

int interleaved_group_size(int pp, int m) {
    if (pp < 1 || m < pp) return 0;
    for (int n = pp; n < m; ++n) {
        if (m % n == 0 || m % n >= pp) return n;
    }
    return m;
}

PipelineSchedule build_pipeline_schedule(Schedule kind, int pp, int vpp, int m) {
    if (pp < 1 || vpp < 1 || m < 1) {
        throw InputError("<schedule>", "training.schedule",
                         "pp, vpp and the micro-batch count must be at least 1");
    }
    PipelineSchedule s;
    s.kind = kind;
    s.pp = pp;
    s.vpp = vpp;
    s.num_micro_batches = m;
    s.ops.resize(static_cast<std::size_t>(pp));
    if (kind == Schedule::Interleaved) {
        if (vpp < 2) {
            throw InputError("<schedule>", "training.schedule", "interleaved needs vpp ≥ 2");
        }
        if (interleaved_group_size(pp, m) == 0) {
            throw InputError("<schedule>", "training.schedule",
                             "interleaved needs at least pp (" + std::to_string(pp) +
                                 ") micro-batches, found " + std::to_string(m));
        }
    } else if (kind == Schedule::OneFOneB && vpp != 1) {
        throw InputError("<schedule>", "parallel.vpp", "1f1b runs one model chunk per rank");
    }
    for (int r = 0; r < pp; ++r) {
        auto& ops = s.ops[static_cast<std::size_t>(r)];
        switch (kind) {
            case Schedule::Interleaved: ops = interleaved_rank(r, pp, vpp, m); break;
            case Schedule::OneFOneB: ops = one_f_one_b_rank(r, pp, m); break;
            case Schedule::GPipe: ops = gpipe_rank(m, vpp); break;
        }
    }
    return s;
}

int PipelineSchedule::warmup_forwards(int rank) const {
    int n = 0;
    for (const auto& op : ops.at(static_cast<std::size_t>(rank))) {
        if (op.kind == PipeOpKind::Backward) break;
        ++n;
    }
    return n;
}

int PipelineSchedule::max_in_flight(int rank) const {
    int live = 0, peak = 0;
    for (const auto& op : ops.at(static_cast<std::size_t>(rank))) {
        live += op.kind == PipeOpKind::Forward ? 1 : -1;
        peak = std::max(peak, live);
    }
    return peak;
}

std::string to_string(const PipeOp& op) {
    std::string s = op.kind == PipeOpKind::Forward ? "F" : "B";
    s += std::to_string(op.micro_batch);
    if (op.chunk != 0) s += "." + std::to_string(op.chunk);
    return s;
}

}  // namespace meshwork
