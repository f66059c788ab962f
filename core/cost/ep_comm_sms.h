// SMs the expert-parallel dispatcher's kernels hold while they run, and the share of the GPU
// that takes from compute running beside them (the MoE all-to-all overlap): a communication
// kernel's CTAs do not share an SM with a GEMM, so the GEMM runs on the rest
// (docs/cost-model.md, "Interference").
#pragma once

#include "core/layout/layout.h"

namespace meshwork::cost {

// CTAs (one per SM) that one dispatch or combine of `dispatcher` keeps resident, with the EP
// group inside one NVLink domain or across nodes.
int ep_comm_sms(MoeDispatcher dispatcher, MoeFlexBackend backend, bool crosses_nodes);

// Share of a GPU of `gpu_sms` SMs that the dispatcher's kernels take: ep_comm_sms / gpu_sms,
// at most 0.9; `fallback` (the cluster's interference of the EP tier) when the GPU states no
// SM count.
double ep_sm_interference(MoeDispatcher dispatcher, MoeFlexBackend backend, bool crosses_nodes,
                          int gpu_sms, double fallback);

}  // namespace meshwork::cost
