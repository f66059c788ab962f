#include "core/search/search_space.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/mesh/device_mesh.h"

namespace meshwork::search {

namespace {

constexpr const char* kFile = "<flags>";

std::string str(long long v) { return std::to_string(v); }

// A pinned axis size must divide what is left of the world.
void require_divides(const std::optional<int>& fixed, const char* key, int world) {
    if (fixed && world % *fixed != 0) {
        throw InputError(kFile, "--fix",
                         std::string(key) + "=" + str(*fixed) + " does not divide the world of " +
                             str(world) + " GPUs");
    }
}

std::vector<int> pin(const std::optional<int>& fixed, std::vector<int> values) {
    if (!fixed) return values;
    return {*fixed};
}

void check_job(const SearchRequest& req) {
    const SearchOptions& o = req.options;
    const ClusterSpec& cl = req.cluster;
    if (o.gpus < 1) throw InputError(kFile, "--gpus", "the world size must be at least 1");
    if (o.global_batch_size < 1)
        throw InputError(kFile, "--gbs", "the global batch must be at least 1");
    if (o.seq_length < 1)
        throw InputError(kFile, "--seq", "the sequence length must be at least 1");
    if (o.top_k < 1) throw InputError(kFile, "--top", "must be at least 1");
    if (o.gpus > cl.max_gpus()) {
        throw InputError(kFile, "--gpus",
                         str(o.gpus) + " GPUs but cluster '" + cl.name + "' has at most " +
                             str(cl.max_gpus()) + " (" + str(cl.max_nodes) + " nodes × " +
                             str(cl.gpus_per_node) + ")");
    }
    // A job takes whole hosts: nodes, or the hosts of a node larger than one (a GB200 NVL72
    // domain's compute trays), as the published GB200 jobs of 64 and 256 GPUs do.
    const int unit = cl.allocation_gpus();
    if (o.gpus > unit && o.gpus % unit != 0) {
        const bool hosts = unit != cl.gpus_per_node;
        throw InputError(kFile, "--gpus",
                         str(o.gpus) + " GPUs do not fill whole " + (hosts ? "hosts" : "nodes") + " of " +
                             str(unit) + " GPUs ('" + cl.name + "'): use a multiple of " + str(unit));
    }
    if (!is_axis_order(o.order)) {
        throw InputError(kFile, "--order", axis_order_error(o.order));
    }
    if (cl.gpu.peak_flops(o.dtype) <= 0) {
        throw InputError(kFile, "--dtype",
                         "GPU kind '" + cl.gpu.kind + "' lists no peak for " + to_string(o.dtype));
    }
    const FixedSettings& f = o.fixed;
    if (!req.model.is_moe() && ((f.ep && *f.ep > 1) || (f.etp && *f.etp > 1))) {
        throw InputError(kFile, "--fix", req.model.name + " has no experts: ep and etp must be 1");
    }
    for (const auto& [v, key] : {std::pair{f.tp, "tp"}, {f.pp, "pp"}, {f.dp, "dp"}, {f.cp, "cp"}}) {
        require_divides(v, key, o.gpus);
    }
    if (f.tp && !o.allow_cross_node_tp && *f.tp > cl.gpus_per_node) {
        throw InputError(kFile, "--fix",
                         "tp=" + str(*f.tp) + " spans more than one node of " +
                             str(cl.gpus_per_node) + " GPUs: add --allow-cross-node-tp");
    }
    if (f.tp && o.max_tp > 0 && *f.tp > o.max_tp) {
        throw InputError(kFile, "--fix", "tp=" + str(*f.tp) + " exceeds --max-tp " + str(o.max_tp));
    }
    if (f.vpp && *f.vpp > 1 && f.schedule && *f.schedule != Schedule::Interleaved) {
        throw InputError(kFile, "--fix", "vpp=" + str(*f.vpp) + " needs schedule=interleaved");
    }
}

std::vector<int> tp_values(const SearchOptions& o, const ClusterSpec& cl) {
    std::vector<int> out;
    for (int d : divisors(o.gpus)) {
        // Inside a node a TP group must not straddle two nodes: tp divides the node.
        if (!o.allow_cross_node_tp && (d > cl.gpus_per_node || cl.gpus_per_node % d != 0)) continue;
        if (o.max_tp > 0 && d > o.max_tp) continue;
        out.push_back(d);
    }
    return pin(o.fixed.tp, out);
}

std::vector<PipelineOption> pipeline_values(const SearchOptions& o, int pp) {
    const FixedSettings& f = o.fixed;
    auto allowed = [&](Schedule s, int vpp) {
        if (f.schedule && *f.schedule != s) return false;
        if (f.vpp && *f.vpp != vpp) return false;
        return true;
    };
    std::vector<PipelineOption> out;
    if (pp == 1) {
        // With one stage GPipe only holds more activations than 1F1B: kept when pinned.
        if (f.schedule == Schedule::GPipe) {
            if (allowed(Schedule::GPipe, 1)) out.push_back({Schedule::GPipe, 1});
        } else if (allowed(Schedule::OneFOneB, 1)) {
            out.push_back({Schedule::OneFOneB, 1});
        }
        return out;
    }
    if (allowed(Schedule::OneFOneB, 1)) out.push_back({Schedule::OneFOneB, 1});
    const int top = f.vpp ? std::max(*f.vpp, o.max_vpp) : o.max_vpp;
    for (int v = 2; v <= top; ++v) {
        if (allowed(Schedule::Interleaved, v)) out.push_back({Schedule::Interleaved, v});
    }
    if (allowed(Schedule::GPipe, 1)) out.push_back({Schedule::GPipe, 1});
    return out;
}

}  // namespace

std::vector<int> divisors(int n) {
    std::vector<int> out;
    for (int d = 1; d <= n; ++d) {
        if (n % d == 0) out.push_back(d);
    }
    return out;
}

const std::vector<PipelineOption>& SearchSpace::pipelines(int pp) const {
    static const std::vector<PipelineOption> none;
    const auto it = pipelines_.find(pp);
    return it == pipelines_.end() ? none : it->second;
}

const std::vector<StageSplit>& SearchSpace::splits(int chunks) const {
    static const std::vector<StageSplit> none;
    const auto it = splits_.find(chunks);
    return it == splits_.end() ? none : it->second;
}

std::int64_t SearchSpace::sp_block(int pp) const {
    std::int64_t n = 0;
    for (const auto& p : pipelines(pp)) n += static_cast<std::int64_t>(splits(pp * p.vpp).size());
    return n * split_block();
}

SearchSpace::SearchSpace(const SearchRequest& req) {
    check_job(req);
    const SearchOptions& o = req.options;
    const FixedSettings& f = o.fixed;
    const ModelSpec& model = req.model;

    sp_without_tp_ =
        f.sequence_parallel ? std::vector<bool>{*f.sequence_parallel} : std::vector<bool>{false};
    sp_with_tp_ = f.sequence_parallel ? std::vector<bool>{*f.sequence_parallel}
                                      : std::vector<bool>{false, true};
    zero_ = pin(f.zero, {0, 1, 2, 3});
    recompute_ = f.recompute ? std::vector<Recompute>{*f.recompute}
                             : std::vector<Recompute>{Recompute::None, Recompute::Selective,
                                                      Recompute::Full};
    if (f.mbs) {
        mbs_ = {*f.mbs};
    } else {
        for (int d : divisors(o.global_batch_size)) {
            if (d <= std::max(1, o.max_micro_batch)) mbs_.push_back(d);
        }
    }

    std::vector<int> ep_values{1}, etp_values{1};
    if (model.is_moe()) {
        ep_values = pin(f.ep, divisors(model.moe.num_experts));
        etp_values = pin(f.etp, divisors(req.cluster.gpus_per_node));
    }

    for (int tp : tp_values(o, req.cluster)) {
        if (o.gpus % tp != 0) continue;
        for (int cp : pin(f.cp, divisors(o.gpus / tp))) {
            if ((o.gpus / tp) % cp != 0) continue;
            for (int pp : pin(f.pp, divisors(o.gpus / tp / cp))) {
                if ((o.gpus / tp / cp) % pp != 0) continue;
                const int dp = o.gpus / tp / cp / pp;
                if (f.dp && *f.dp != dp) continue;
                if (pipelines_.find(pp) == pipelines_.end()) {
                    pipelines_[pp] = pipeline_values(o, pp);
                    for (const auto& p : pipelines_[pp]) {
                        const int chunks = pp * p.vpp;
                        if (splits_.find(chunks) == splits_.end()) {
                            splits_[chunks] = stage_splits(model.num_layers, chunks,
                                                           std::max(0, o.max_end_lighter_layers));
                        }
                    }
                }
                const std::int64_t per_sp = sp_block(pp);
                const auto sp_count = static_cast<std::int64_t>(sequence_parallel(tp).size());
                for (int ep : ep_values) {
                    for (int etp : etp_values) {
                        MeshTask t{{tp, cp, dp, pp, ep, etp}, per_sp * sp_count};
                        if (t.layouts == 0) continue;
                        tasks_.push_back(t);
                        size_ += t.layouts;
                        max_pp_ = std::max(max_pp_, pp);
                        for (const auto& p : pipelines(pp))
                            max_chunks_ = std::max(max_chunks_, pp * p.vpp);
                    }
                }
            }
        }
    }
    if (size_ == 0) {
        throw InputError(
            kFile, "--fix",
            "the constraints leave no layout to consider for " + str(o.gpus) + " GPUs (tp " +
                (o.allow_cross_node_tp ? std::string("any divisor of the world")
                                       : "within nodes of " + str(req.cluster.gpus_per_node)) +
                (o.max_tp > 0 ? ", at most " + str(o.max_tp) : std::string()) + ")");
    }
}

}  // namespace meshwork::search
