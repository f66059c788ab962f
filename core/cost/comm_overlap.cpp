#include "core/cost/comm_overlap.h"

#include <algorithm>

namespace meshwork::cost {

double overlapped_s(double compute_s, double comm_s, double interference) {
    const double u = std::clamp(interference, 0.0, 1.0);
    compute_s = std::max(0.0, compute_s);
    comm_s = std::max(0.0, comm_s);
    return std::max(comm_s, compute_s + u * comm_s);
}

double tiled_collective_extra_s(double gemm_s, double comm_s, int tiles, TpOverlap mode,
                                double interference) {
    comm_s = std::max(0.0, comm_s);
    if (mode == TpOverlap::None || tiles < 2) return comm_s;
    const double n = tiles;
    const double gemm_tile = std::max(0.0, gemm_s) / n;
    const double comm_tile = comm_s / n;
    const double overlapped = (n - 1) * (overlapped_s(gemm_tile, comm_tile, interference) - gemm_tile);
    return overlapped + (mode == TpOverlap::Pipe ? comm_tile : 0.0);
}

}  // namespace meshwork::cost
