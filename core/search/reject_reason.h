// Why the search set a layout aside. Rules of validate_layout carry the name of the field
// validation reports for them, so a count reads like the error the user would get.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace meshwork::search {

enum class Reject : std::uint8_t {
    None,
    Tp,                // parallel.tp: heads, KV heads or MLP width not divisible
    Pp,                // parallel.pp: more stages than layers
    Vpp,               // parallel.vpp: vpp > 1 without the interleaved schedule
    Cp,                // parallel.cp: sequence not a multiple of 2·cp
    SequenceParallel,  // parallel.sequence_parallel: per-CP sequence not a multiple of tp
    Ep,                // parallel.ep: experts or the expert fold not divisible
    Etp,               // parallel.etp: expert width not divisible
    LayersPerStage,    // placement.layers_per_stage: fewer layers than model chunks
    Schedule,          // training.schedule: interleaved without vpp ≥ 2 and pp ≥ 2
    GlobalBatch,       // training.global_batch_size: dp·mbs (or interleaved m % pp)
    ZeroWithPipeline,  // training.zero_stage: ZeRO-2/3 with pp > 1 (frameworks refuse it)
    OutOfMemory,       // out_of_memory: the cost model's peak exceeds HBM on some stage
    BelowMinMfu,       // min_mfu: fits but below the requested MFU
    Count_
};

inline constexpr std::size_t kRejectCount = static_cast<std::size_t>(Reject::Count_);
using RejectCounts = std::array<std::int64_t, kRejectCount>;

// "parallel.tp", ..., "out_of_memory", "min_mfu"; "" for None.
const char* reject_name(Reject reason);
// Whether validate_layout reports the reason as an error (the others are search policy).
bool is_validation_rule(Reject reason);

}  // namespace meshwork::search
