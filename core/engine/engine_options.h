// Settings of an engine run that the layout does not carry: seed, optimizer, numerics,
// fault handling. Defaults are the ones documented in docs/engine.md.
#pragma once

#include <cstdint>
#include <string>

#include "core/engine/run_kinds.h"

namespace meshwork::engine {

struct EngineOptions {
    BackendKind backend = BackendKind::Cpu;
    int steps = 3;
    std::uint64_t seed = 1234;        // weights and the synthetic token stream
    std::string tokens_file;          // empty = synthetic stream
    // AdamW (decoupled weight decay; norms are not decayed).
    float lr = 1e-3f;
    float beta1 = 0.9f;
    float beta2 = 0.95f;
    float adam_eps = 1e-8f;
    float weight_decay = 0.1f;
    // Numerics the model spec does not carry (Llama/Mixtral defaults).
    float init_std = 0.02f;           // Hugging Face initializer_range
    float rms_eps = 1e-5f;
    float rope_theta = 10000.0f;
    float moe_aux_loss_coef = 0.01f;  // Switch-Transformer load-balancing loss weight
    // Data-parallel gradient buckets (one all-reduce or reduce-scatter each).
    std::size_t bucket_bytes = 4u << 20;
    // A collective or recv waiting longer than this fails the run on every rank.
    double comm_timeout_s = 60.0;
    // Fault injection for tests of fault handling: rank `fault_rank` fails at the start of
    // step `fault_step` by throwing or by stalling for 3 × comm_timeout_s.
    int fault_rank = -1;
    int fault_step = 0;
    FaultKind fault_kind = FaultKind::Throw;
    // Slowdown injection for tests and demos of the straggler report: every compute op of
    // rank `slow_rank` takes `slow_factor` times as long (RankContext::Op). -1: none.
    int slow_rank = -1;
    double slow_factor = 1.0;
};

// The largest slow_factor a run accepts (checked before the run, run_session.cpp): beyond
// it a tiny run becomes a long one, which no test or demo needs.
inline constexpr double kMaxSlowFactor = 100.0;

}  // namespace meshwork::engine
