// The device-side inputs of one micro-batch on one rank: the tokens of its rows, their
// targets (the next token) and global positions, and the position tables attention needs.
#pragma once

#include "core/engine/tensor.h"

namespace meshwork::engine {

struct MicroBatch {
    int index = 0;   // micro-batch number within the step
    Ints tokens;     // rows entries (only on the first pipeline stage)
    Ints targets;    // rows entries (only on the last pipeline stage)
    Ints pos;        // rows entries: the global position of each row in its sequence
    Ints q_pos;      // seq_local entries: positions of one sequence's local rows
    Ints k_pos;      // cp·seq_local entries: key positions after the cp ring, rank-major
};

}  // namespace meshwork::engine
