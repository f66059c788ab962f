#include "core/search/reject_reason.h"

namespace meshwork::search {

const char* reject_name(Reject reason) {
    switch (reason) {
        case Reject::None:
            return "";
        case Reject::Tp:
            return "parallel.tp";
        case Reject::Pp:
            return "parallel.pp";
        case Reject::Vpp:
            return "parallel.vpp";
        case Reject::Cp:
            return "parallel.cp";
        case Reject::SequenceParallel:
            return "parallel.sequence_parallel";
        case Reject::Ep:
            return "parallel.ep";
        case Reject::Etp:
            return "parallel.etp";
        case Reject::LayersPerStage:
            return "placement.layers_per_stage";
        case Reject::Schedule:
            return "training.schedule";
        case Reject::GlobalBatch:
            return "training.global_batch_size";
        case Reject::ZeroWithPipeline:
            return "training.zero_stage";
        case Reject::OutOfMemory:
            return "out_of_memory";
        case Reject::BelowMinMfu:
            return "min_mfu";
        case Reject::Count_:
            break;
    }
    return "?";
}

bool is_validation_rule(Reject reason) {
    return reason != Reject::None && reason != Reject::ZeroWithPipeline &&
           reason != Reject::OutOfMemory && reason != Reject::BelowMinMfu &&
           reason != Reject::Count_;
}

}  // namespace meshwork::search
