#include "core/cost/ep_comm_sms.h"

#include <algorithm>

namespace meshwork::cost {

namespace {

// NCCL's all-to-all (grouped send/recv) runs one CTA per p2p channel in use, and an NCCL CTA
// holds its SM alone ("NCCL CTAs won't share an SM with compute kernels", NCCL's maintainer,
// NVIDIA/nccl issue 689). At NVIDIA/nccl v2.28.9-1: the p2p channels are the communicator's
// channels rounded up to a power of two (src/graph/paths.cc:860-883), which are the ring
// graph's searched channels, duplicated when one carries 50 GB/s or more on sm80+
// (src/graph/search.cc:961-972), then doubled (src/graph/connect.cc:451-452); a large
// all-to-all stripes its peers over all p2p channels (src/enqueue.cc:1053-1056).
//  - Across nodes of 8 GPUs with one 400 Gb/s NIC each (the DGX presets) the search finds one
//    channel per NIC at the NIC's rate (< 50 GB/s, kept): 8, doubled to 16, as NCCL's
//    maintainer gives for a DGX with 8 NICs ("it would use 16 SMs", issue 689).
//  - Inside one NVLink domain the channels run at 60 (sm90) or 90 GB/s (sm100) through the
//    NVSwitch (18 links of 20.6 or 40.1 GB/s, src/graph/topo.h:19-21; speed arrays
//    search.cc:981-987): 6 or 8, duplicated, doubled: 24 or 32, rounded up to 32 p2p channels.
constexpr int kNcclCtasAcrossNodes = 16;
constexpr int kNcclCtasNvlinkDomain = 32;

// DeepEP's normal kernels launch Buffer.num_sms CTAs (deepseek-ai/DeepEP 94a9f8f6
// csrc/kernels/internode.cu:378, deep_ep/buffer.py:152-161); Megatron sets it to
// moe_deepep_num_sms, 20 by default (Megatron-LM 44151194 transformer_config.py:843,
// token_dispatcher.py:1216), which Megatron-Bridge's performance scripts leave.
constexpr int kDeepEpSms = 20;

// HybridEP at the 32 SMs Megatron-Bridge's performance scripts give it
// (scripts/performance/utils/overrides.py:71-74 at 21d102f5e; flex_kernel_rate.h prices it
// at the same budget).
constexpr int kHybridEpSms = 32;

}  // namespace

int ep_comm_sms(MoeDispatcher dispatcher, MoeFlexBackend backend, bool crosses_nodes) {
    if (dispatcher == MoeDispatcher::Flex) {
        return backend == MoeFlexBackend::HybridEP ? kHybridEpSms : kDeepEpSms;
    }
    return crosses_nodes ? kNcclCtasAcrossNodes : kNcclCtasNvlinkDomain;
}

double ep_sm_interference(MoeDispatcher dispatcher, MoeFlexBackend backend, bool crosses_nodes,
                          int gpu_sms, double fallback) {
    if (gpu_sms <= 0) return fallback;
    const double comm_sms = ep_comm_sms(dispatcher, backend, crosses_nodes);
    const double share = comm_sms / gpu_sms;
    return std::clamp(share, 0.0, 0.9);
}

}  // namespace meshwork::cost
