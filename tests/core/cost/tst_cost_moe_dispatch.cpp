// The MoE dispatchers and the MoE all-to-all overlap (core/cost/moe_dispatch.h;
// docs/cost-model.md, "Expert dispatch"): hand-computed copies and times, the ordering they
// imply on a real layout, validation and the layout file's fields.
#include <QtTest>

#include <cmath>

#include "core/common/error.h"
#include "core/cost/cost_model.h"
#include "core/cost/ep_comm_sms.h"
#include "core/cost/flex_kernel_rate.h"
#include "core/cost/moe_dispatch.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"
#include "core/sim/simulate.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

namespace {

// DeepSeek-V3 (256 experts, top 8) on two DGX-B200 nodes, EP 16 across both.
Layout cross_node_moe() {
    Layout l = make_layout(load_model("deepseek-v3"), "dgx-b200", 1, 1, 16, 1, 64, 4096);
    l.parallel.mesh.ep = 16;
    l.parallel.mesh.etp = 1;
    l.training.dtype = DType::Bf16;
    return l;
}

bool has_error(const Layout& l, const std::string& field) {
    for (const auto& e : validate_layout(l, "test").errors) {
        if (e.to_string().find(field) != std::string::npos) return true;
    }
    return false;
}

}  // namespace

class TestCostMoeDispatch : public QObject {
    Q_OBJECT
  private slots:
    // Groups hit by k distinct experts of E drawn uniformly: g·(1 − C(E − E/g, k)/C(E, k)).
    void expected_groups_hit_closed_form() {
        // 8 experts in 2 groups, top 2: C(4,2)/C(8,2) = 6/28 misses a group: 2·22/28 = 11/7.
        QVERIFY(near(expected_groups_hit(8, 2, 2), 11.0 / 7.0));
        // One expert per group: exactly k groups; one group: always 1.
        QVERIFY(near(expected_groups_hit(16, 4, 16), 4.0));
        QVERIFY(near(expected_groups_hit(16, 4, 1), 1.0));
        // DeepSeek-V3 over 4 nodes: 4·(1 − C(192,8)/C(256,8)).
        double miss = 1;
        for (int i = 0; i < 8; ++i) miss *= (192.0 - i) / (256.0 - i);
        QVERIFY(near(expected_groups_hit(256, 8, 4), 4 * (1 - miss)));
    }
    // Hand case: 16 experts, top 4, EP 16 over 2 nodes of 8; 1,000 tokens of 1,000 bytes;
    // inter-node 1 GB/s, intra-node 100 GB/s, no latency.
    void hierarchical_dispatch_bytes() {
        LinkModel link;
        link.inter_bytes_per_s = 1e9;
        link.intra_bytes_per_s = 1e11;
        const GroupSpan ep{16, 8, 2};
        const MoeDispatchCost flex = moe_dispatch_cost(link, ep, MoeDispatcher::Flex, MoeFlexBackend::DeepEP, 16, 4, 1000, 1000);
        // Remote node hit: 1 − C(8,4)/C(16,4) = 1 − 70/1820; GPUs hit: 4 (one expert each),
        // 7/8 of them over NVLink.
        const double remote = 1.0 - 70.0 / 1820.0;
        QVERIFY(near(flex.inter_copies, remote));
        QVERIFY(near(flex.intra_copies, 4.0 * 7.0 / 8.0));
        QVERIFY(near(flex.dispatch_s, 1000.0 * 1000.0 * remote / 1e9));  // inter-node is the slower tier
        QVERIFY(near(flex.combine_s, flex.dispatch_s));
        // All-to-all: 4 copies per token, half of them to the other node: 2 ms.
        const MoeDispatchCost a2a = moe_dispatch_cost(link, ep, MoeDispatcher::AllToAll, MoeFlexBackend::DeepEP, 16, 4, 1000, 1000);
        QVERIFY(near(a2a.inter_copies, 2.0));
        QVERIFY(near(a2a.dispatch_s, 2e-3));
        // Allgather: every rank gathers the whole group's tokens and reduce-scatters them back.
        const MoeDispatchCost ag = moe_dispatch_cost(link, ep, MoeDispatcher::AllGather, MoeFlexBackend::DeepEP, 16, 4, 1000, 1000);
        QVERIFY(near(ag.bytes, 16.0 * 1000 * 1000));
        QVERIFY(near(ag.dispatch_s, all_gather_s(link, ep, 16e6)));
        QVERIFY(near(ag.combine_s, reduce_scatter_s(link, ep, 16e6)));
    }
    // The flex kernels' published rates (DeepEP hybrid-ep 94a9f8f6, docs/README_Hybrid-EP.md
    // GB200 tables, torch API, bf16 dispatch / combine): HybridEP at Bridge's 32 SMs, DeepEP at
    // Megatron's 20 (the mean of its 16- and 24-SM rows); linear between rank counts, the
    // nearest published row outside them.
    void flex_kernel_rates_as_published() {
        const FlexKernelRate h8 = flex_kernel_rate(MoeFlexBackend::HybridEP, 8);
        QVERIFY(near(h8.dispatch_bytes_per_s, 545.71e9) && near(h8.combine_bytes_per_s, 568.94e9));
        const FlexKernelRate h32 = flex_kernel_rate(MoeFlexBackend::HybridEP, 32);
        QVERIFY(near(h32.dispatch_bytes_per_s, 484.22e9) && near(h32.combine_bytes_per_s, 464.54e9));
        const FlexKernelRate h12 = flex_kernel_rate(MoeFlexBackend::HybridEP, 12);
        QVERIFY(near(h12.dispatch_bytes_per_s, (545.71e9 + 523.48e9) / 2));
        QVERIFY(near(flex_kernel_rate(MoeFlexBackend::HybridEP, 4).dispatch_bytes_per_s, 545.71e9));
        QVERIFY(near(flex_kernel_rate(MoeFlexBackend::HybridEP, 72).combine_bytes_per_s, 447.89e9));
        const FlexKernelRate d8 = flex_kernel_rate(MoeFlexBackend::DeepEP, 8);
        QVERIFY(near(d8.dispatch_bytes_per_s, (362.01e9 + 512.72e9) / 2));
        QVERIFY(near(d8.combine_bytes_per_s, (310.21e9 + 425.95e9) / 2));
        // DeepEP's combine beyond 8 ranks (126.53 and 163.62 GB/s at 24).
        QVERIFY(near(flex_kernel_rate(MoeFlexBackend::DeepEP, 64).combine_bytes_per_s, (126.53e9 + 163.62e9) / 2));
    }
    // Inside one NVLink5 domain (900 GB/s at the presets' 0.8) the kernels, not the link, set
    // the flex dispatch: every copy the rank receives, its own included, at the published
    // rate. On NVLink4 (450 GB/s) the link binds, as DeepEP's README found on H800.
    void flex_nvlink_stage_is_kernel_bound() {
        LinkModel link;
        link.intra_bytes_per_s = 0.8 * 9e11;
        link.intra_latency_s = 3e-6;
        link.inter_bytes_per_s = 1e9;
        const GroupSpan ep{8, 8, 1};
        const double tokens = 16384, token_bytes = 2 * 2048.0;  // Qwen3-30B-A3B, MBS 4
        const double hit = expected_groups_hit(128, 8, 8);
        const MoeDispatchCost hyb = moe_dispatch_cost(link, ep, MoeDispatcher::Flex, MoeFlexBackend::HybridEP, 128,
                                                      8, tokens, token_bytes);
        QVERIFY(near(hyb.dispatch_s, 3e-6 + tokens * token_bytes * hit / 545.71e9));
        QVERIFY(near(hyb.combine_s, 3e-6 + tokens * token_bytes * hit / 568.94e9));
        const double link_s = 3e-6 + tokens * token_bytes * hit * 7.0 / 8.0 / link.intra_bytes_per_s;
        QVERIFY(hyb.dispatch_s > 1.4 * link_s);  // 720 / (545.71 · 7/8) = 1.51
        const MoeDispatchCost deep = moe_dispatch_cost(link, ep, MoeDispatcher::Flex, MoeFlexBackend::DeepEP, 128, 8,
                                                       tokens, token_bytes);
        QVERIFY(deep.dispatch_s > hyb.dispatch_s && deep.combine_s > hyb.combine_s);
        link.intra_bytes_per_s = 0.8 * 4.5e11;
        const MoeDispatchCost hopper = moe_dispatch_cost(link, ep, MoeDispatcher::Flex, MoeFlexBackend::HybridEP, 128,
                                                         8, tokens, token_bytes);
        QVERIFY(near(hopper.dispatch_s, 3e-6 + tokens * token_bytes * hit * 7.0 / 8.0 / link.intra_bytes_per_s));
        QVERIFY(near(hopper.combine_s, hopper.dispatch_s));
        // A single GPU per node has no NVLink stage.
        const MoeDispatchCost spread = moe_dispatch_cost(link, GroupSpan{4, 1, 4}, MoeDispatcher::Flex,
                                                         MoeFlexBackend::HybridEP, 128, 8, tokens, token_bytes);
        QCOMPARE(spread.intra_copies, 0.0);
        QVERIFY(near(spread.dispatch_s, tokens * token_bytes * expected_groups_hit(128, 8, 4) * 3.0 / 4.0 / 1e9));
    }
    // Megatron's combined 1F1B: combine_bwd ‖ attention fwd, dispatch fwd ‖ MLP bwd, dispatch
    // bwd ‖ MLP fwd, combine fwd ‖ attention bwd; and which passes it pairs.
    void overlap_closed_forms() {
        QVERIFY(near(a2a_overlap_exposed_s(1.0, 0.5, 1.0, 1.0, 2.0), 0.5));
        QVERIFY(near(a2a_overlap_exposed_s(2.0, 0.5, 1.0, 1.0, 2.0), 1.5 + 1.0 + 1.0));
        QCOMPARE(a2a_overlap_exposed_s(0.1, 1, 1, 1, 1), 0.0);
        // dispatch_bwd waits for mlp_bwd and pairs with mlp_fwd alone: a short forward MLP
        // cannot borrow the backward MLP's slack (0.8 shows, not max(0, 2 − 1.8 − 0.2) = 0).
        QVERIFY(near(a2a_overlap_exposed_s(1.0, 1.0, 0.2, 1.0, 1.8), 0.8));
        QVERIFY(near(a2a_overlap_paired_share(1, 1, 4, 1), 0.75));  // the first forward alone
        // pp 4, vpp 2, 8 micro-batches (16 passes): 2·3 + 1·4 + 1 = 11 warm-up forwards.
        QVERIFY(near(a2a_overlap_paired_share(4, 2, 8, 4), 5.0 / 16.0));
        QCOMPARE(a2a_overlap_paired_share(4, 2, 2, 4), 0.0);
    }
    // On a layout with EP across nodes: per-node dispatch is cheaper than one copy per expert,
    // the overlap cheaper again, and the overlap only where Megatron runs it.
    void ordering_on_a_layout() {
        Layout l = cross_node_moe();
        QVERIFY(validate_layout(l, "test").valid());
        const Estimate a2a = estimate_layout(l);
        l.parallel.moe_dispatcher = MoeDispatcher::Flex;
        const Estimate flex = estimate_layout(l);
        l.parallel.moe_a2a_overlap = true;
        QVERIFY(validate_layout(l, "test").valid());
        const Estimate both = estimate_layout(l);
        qInfo("EP 16 across 2 nodes: alltoall %.3f s (EP %.3f), flex %.3f s (EP %.3f), flex + overlap %.3f s (EP %.3f)",
              a2a.step_time_s, a2a.time.ep_comm_s, flex.step_time_s, flex.time.ep_comm_s,
              both.step_time_s, both.time.ep_comm_s);
        QVERIFY(flex.time.ep_comm_s < 0.6 * a2a.time.ep_comm_s);
        QVERIFY(flex.step_time_s < a2a.step_time_s);
        QVERIFY(both.step_time_s < flex.step_time_s);
        QVERIFY(both.time.ep_comm_s > 0);  // the first forward and the last backward run alone
        // The simulator takes the same block costs.
        QVERIFY(simulate_layout(l).estimate.step_time_s < simulate_layout(cross_node_moe()).estimate.step_time_s);
        // Where Megatron refuses it (allgather; pp > 1 without virtual stages) the validation
        // refuses it and the cost model, which a search may reach first, leaves it out.
        const CostModel cm(l.model, l.cluster);
        LayoutCosts c;
        cm.prepare(l.parallel, l.training, c);
        QVERIFY(near(c.a2a_paired_share, 3.0 / 4.0));  // 64 / dp 16 = 4 micro-batches, the first alone
        ParallelConfig refused = l.parallel;
        refused.moe_dispatcher = MoeDispatcher::AllGather;
        cm.prepare(refused, l.training, c);
        QCOMPARE(c.a2a_paired_share, 0.0);
        refused = l.parallel;
        refused.mesh.pp = 2;
        refused.mesh.dp = 8;
        refused.mesh.ep = 8;
        cm.prepare(refused, l.training, c);
        QCOMPARE(c.a2a_paired_share, 0.0);
    }
    // The overlapped compute runs on the SMs the dispatcher's kernels leave: NCCL's all-to-all
    // 16 CTAs across nodes and 32 inside an NVLink domain, DeepEP Megatron's 20 SMs, HybridEP
    // Bridge's 32; the share of the GPU's SMs, the cluster's tier figure without an SM count.
    void dispatcher_sms_take_their_share() {
        QCOMPARE(ep_comm_sms(MoeDispatcher::AllToAll, MoeFlexBackend::DeepEP, true), 16);
        QCOMPARE(ep_comm_sms(MoeDispatcher::AllToAll, MoeFlexBackend::DeepEP, false), 32);
        QCOMPARE(ep_comm_sms(MoeDispatcher::Flex, MoeFlexBackend::DeepEP, true), 20);
        QCOMPARE(ep_comm_sms(MoeDispatcher::Flex, MoeFlexBackend::HybridEP, false), 32);
        const auto a2a = MoeDispatcher::AllToAll;
        const auto flex = MoeDispatcher::Flex;
        const auto deepep = MoeFlexBackend::DeepEP;
        QVERIFY(near(ep_sm_interference(a2a, deepep, true, 132, 0.02), 16.0 / 132));
        QVERIFY(near(ep_sm_interference(flex, deepep, true, 148, 0.02), 20.0 / 148));
        QCOMPARE(ep_sm_interference(a2a, deepep, true, 0, 0.02), 0.02);  // no SM count
        QCOMPARE(ep_sm_interference(flex, MoeFlexBackend::HybridEP, false, 20, 0.15), 0.9);
        // On a layout: dgx-b200 states 148 SMs, so DeepEP across nodes takes 20 of them, and
        // the overlapped step is slower than with the InfiniBand tier's 0.02.
        Layout l = cross_node_moe();
        l.parallel.moe_dispatcher = MoeDispatcher::Flex;
        l.parallel.moe_a2a_overlap = true;
        const CostModel cm(l.model, l.cluster);
        LayoutCosts c;
        cm.prepare(l.parallel, l.training, c);
        QCOMPARE(l.cluster.gpu.sm_count, 148);
        QVERIFY(near(c.ep_interference, 20.0 / 148));
        const Estimate sms = estimate_layout(l);
        Layout unknown = l;
        unknown.cluster.gpu.sm_count = 0;
        const CostModel cm0(unknown.model, unknown.cluster);
        cm0.prepare(unknown.parallel, unknown.training, c);
        QCOMPARE(c.ep_interference, unknown.cluster.efficiency.inter_node_interference);
        QVERIFY(sms.step_time_s > estimate_layout(unknown).step_time_s);
    }
    void validation_names_the_field() {
        Layout l = cross_node_moe();
        l.parallel.moe_a2a_overlap = true;
        l.parallel.moe_dispatcher = MoeDispatcher::AllGather;
        QVERIFY(has_error(l, "parallel.moe_a2a_overlap"));
        l.parallel.moe_dispatcher = MoeDispatcher::AllToAll;
        l.training.recompute = Recompute::Full;
        QVERIFY(has_error(l, "parallel.moe_a2a_overlap"));
        l.training.recompute = Recompute::None;
        l.parallel.mesh.pp = 2;
        l.parallel.mesh.dp = 8;
        l.parallel.mesh.ep = 8;
        QVERIFY(has_error(l, "parallel.moe_a2a_overlap"));  // pp > 1 without virtual stages
        l.parallel.vpp = 2;
        l.training.schedule = Schedule::Interleaved;
        QVERIFY(!has_error(l, "parallel.moe_a2a_overlap"));
        l.parallel.mesh.ep = 1;
        QVERIFY(has_error(l, "parallel.moe_a2a_overlap"));
    }
    void layout_file_round_trip_and_errors() {
        Layout l = cross_node_moe();
        l.parallel.moe_dispatcher = MoeDispatcher::Flex;
        l.parallel.moe_flex_backend = MoeFlexBackend::HybridEP;
        l.parallel.moe_a2a_overlap = true;
        nlohmann::json j = layout_to_json(l);
        QCOMPARE(QString::fromStdString(j["parallel"]["moe_dispatcher"].get<std::string>()), QString("flex"));
        const Layout back = layout_from_json(j, "x.json");
        QVERIFY(back.parallel == l.parallel);
        // Defaults are not written.
        QVERIFY(!layout_to_json(cross_node_moe())["parallel"].contains("moe_dispatcher"));
        j["parallel"]["moe_dispatcher"] = "alltoall";
        try {
            (void)layout_from_json(j, "x.json");
            QFAIL("a flex backend without the flex dispatcher must be refused");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("parallel.moe_flex_backend") != std::string::npos, e.what());
        }
        j["parallel"].erase("moe_flex_backend");
        j["parallel"]["moe_dispatcher"] = "deepep";
        try {
            (void)layout_from_json(j, "x.json");
            QFAIL("an unknown dispatcher must be refused");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("parallel.moe_dispatcher") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestCostMoeDispatch)
#include "tst_cost_moe_dispatch.moc"
