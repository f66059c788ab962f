#include "core/layout/layout.h"

#include <algorithm>

namespace meshwork {

std::string to_string(Schedule s) {
    switch (s) {
        case Schedule::GPipe: return "gpipe";
        case Schedule::OneFOneB: return "1f1b";
        case Schedule::Interleaved: return "interleaved";
    }
    return "?";
}

std::string to_string(Recompute r) {
    switch (r) {
        case Recompute::None: return "none";
        case Recompute::Selective: return "selective";
        case Recompute::Full: return "full";
        case Recompute::SelectiveOp: return "selective-op";
    }
    return "?";
}

std::string to_string(CrossEntropy c) {
    switch (c) {
        case CrossEntropy::VocabParallel: return "vocab-parallel";
        case CrossEntropy::Upcast: return "upcast";
        case CrossEntropy::Te: return "te";
        case CrossEntropy::TeInPlace: return "te-inplace";
        case CrossEntropy::FlashAttn: return "flash-attn";
    }
    return "?";
}

std::string to_string(AttentionKernel k) { return k == AttentionKernel::Sdpa ? "sdpa" : "fused"; }

bool parse_attention_kernel(const std::string& text, AttentionKernel& out) {
    for (AttentionKernel k : {AttentionKernel::Fused, AttentionKernel::Sdpa}) {
        if (text == to_string(k)) {
            out = k;
            return true;
        }
    }
    return false;
}

bool parse_cross_entropy(const std::string& text, CrossEntropy& out) {
    for (CrossEntropy c : {CrossEntropy::VocabParallel, CrossEntropy::Upcast, CrossEntropy::Te, CrossEntropy::TeInPlace,
                           CrossEntropy::FlashAttn}) {
        if (text == to_string(c)) {
            out = c;
            return true;
        }
    }
    return false;
}

bool parse_schedule(const std::string& text, Schedule& out) {
    for (Schedule s : {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved}) {
        if (text == to_string(s)) {
            out = s;
            return true;
        }
    }
    if (text == "interleaved-1f1b" || text == "interleaved_1f1b") {
        out = Schedule::Interleaved;
        return true;
    }
    return false;
}

bool parse_recompute(const std::string& text, Recompute& out) {
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full, Recompute::SelectiveOp}) {
        if (text == to_string(r)) {
            out = r;
            return true;
        }
    }
    return false;
}

std::string to_string(Offload o) {
    switch (o) {
        case Offload::None: return "none";
        case Offload::Cpu: return "cpu";
        case Offload::Nvme: return "nvme";
    }
    return "?";
}

std::string to_string(TpOverlap o) {
    switch (o) {
        case TpOverlap::None: return "none";
        case TpOverlap::Pipe: return "pipe";
        case TpOverlap::Ring: return "ring";
    }
    return "?";
}

bool parse_grad_reduce_dtype(const std::string& text, bool& in_bf16) {
    if (text != "bf16" && text != "fp32") return false;
    in_bf16 = text == "bf16";
    return true;
}

std::string to_string(MoeDispatcher d) {
    switch (d) {
        case MoeDispatcher::AllGather: return "allgather";
        case MoeDispatcher::AllToAll: return "alltoall";
        case MoeDispatcher::Flex: return "flex";
    }
    return "?";
}

bool parse_moe_dispatcher(const std::string& text, MoeDispatcher& out) {
    for (MoeDispatcher d : {MoeDispatcher::AllGather, MoeDispatcher::AllToAll, MoeDispatcher::Flex}) {
        if (text == to_string(d)) {
            out = d;
            return true;
        }
    }
    return false;
}

std::string to_string(MoeFlexBackend b) {
    return b == MoeFlexBackend::HybridEP ? "hybridep" : "deepep";
}

bool parse_moe_flex_backend(const std::string& text, MoeFlexBackend& out) {
    if (text != "deepep" && text != "hybridep") return false;
    out = text == "hybridep" ? MoeFlexBackend::HybridEP : MoeFlexBackend::DeepEP;
    return true;
}

bool parse_tp_overlap(const std::string& text, TpOverlap& out) {
    for (TpOverlap o : {TpOverlap::None, TpOverlap::Pipe, TpOverlap::Ring}) {
        if (text == to_string(o)) {
            out = o;
            return true;
        }
    }
    return false;
}

bool parse_offload(const std::string& text, Offload& out) {
    for (Offload o : {Offload::None, Offload::Cpu, Offload::Nvme}) {
        if (text == to_string(o)) {
            out = o;
            return true;
        }
    }
    return false;
}

int Layout::num_micro_batches() const {
    const long long per_step = static_cast<long long>(parallel.mesh.dp) * training.micro_batch_size;
    if (per_step <= 0) return 0;
    return static_cast<int>(training.global_batch_size / per_step);
}

std::vector<int> Layout::stage_layers() const {
    if (!placement.layers_per_stage.empty()) return placement.layers_per_stage;
    return balanced_stage_split(model.num_layers, parallel.mesh.pp * parallel.vpp);
}

std::vector<int> balanced_stage_split(int layers, int chunks) {
    if (chunks <= 0 || layers < chunks) return {};
    std::vector<int> split(static_cast<std::size_t>(chunks), layers / chunks + 1);
    // Take the surplus layers off the ends first: the first chunk also holds the embedding
    // and the last the LM head and loss, so they are the heaviest at equal layer counts.
    int surplus = chunks - layers % chunks;
    if (layers % chunks == 0) {
        std::fill(split.begin(), split.end(), layers / chunks);
        surplus = 0;
    }
    for (int i = 0; surplus > 0; ++i) {
        const int end = (i % 2 == 0) ? i / 2 : chunks - 1 - i / 2;
        --split[static_cast<std::size_t>(end)];
        --surplus;
    }
    return split;
}

std::vector<int> Layout::stage_first_layer() const {
    std::vector<int> first;
    int at = 0;
    for (int n : stage_layers()) {
        first.push_back(at);
        at += n;
    }
    return first;
}

std::vector<std::vector<int>> Layout::ep_experts() const {
    if (!placement.experts_per_ep_rank.empty()) return placement.experts_per_ep_rank;
    const int ep = parallel.mesh.ep;
    const int experts = model.moe.num_experts;
    std::vector<std::vector<int>> out(static_cast<std::size_t>(ep));
    if (ep <= 0 || experts <= 0) return out;
    const int per = experts / ep;
    for (int r = 0; r < ep; ++r) {
        for (int e = r * per; e < (r + 1) * per; ++e) out[static_cast<std::size_t>(r)].push_back(e);
    }
    return out;
}

DeviceMesh Layout::mesh() const { return DeviceMesh(parallel.mesh, cluster.gpus_per_node); }

}  // namespace meshwork
