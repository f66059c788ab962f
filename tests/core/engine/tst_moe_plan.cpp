// The MoE routing and dispatch plan as pure host functions (core/engine/model/moe_route.h,
// moe_dispatch_plan.h): hand-worked examples of the top-k choice, the capacity cut, the
// token → expert → EP rank order of the all-to-all with its counts, and the regrouping of
// the rows a rank receives. The layout matrix (tst_engine_layouts) checks the whole layer
// against the unsharded reference; these name the stage that breaks.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/engine/model/moe_dispatch_plan.h"
#include "core/engine/model/moe_route.h"

using namespace meshwork::engine;

namespace {
bool same(const Assignment& a, const Assignment& b) {
    return a.token == b.token && a.expert == b.expert && a.slot == b.slot;
}
}  // namespace

class TestMoePlan : public QObject {
    Q_OBJECT
private slots:
    void capacity();
    void route_picks_top_k_and_renormalises();
    void route_drops_over_capacity_in_token_order();
    void dispatch_orders_by_rank_then_expert_then_token();
    void dispatch_counts_every_rank_even_without_rows();
    void receive_regroups_rows_expert_major();
    void load_balancing_loss_of_uniform_routing();
};

void TestMoePlan::capacity() {
    QCOMPARE(moe_capacity(0.0f, 10, 2, 4), 20);  // dropless
    QCOMPARE(moe_capacity(1.0f, 10, 2, 4), 5);   // ceil(1·10·2/4)
    QCOMPARE(moe_capacity(1.25f, 10, 2, 4), 7);  // ceil(6.25)
}

void TestMoePlan::route_picks_top_k_and_renormalises() {
    // 2 tokens, 4 experts, k = 2; token 1 ties experts 0 and 3: the lower id wins.
    const std::vector<float> probs{0.1f, 0.5f, 0.1f, 0.3f,  //
                                   0.3f, 0.2f, 0.2f, 0.3f};
    const RouteShape shape{.tokens = 2, .experts = 4, .top_k = 2, .capacity = 4, .first_row = 0,
                           .seq_local = 2, .sequences = 1};
    const Routing r = route_tokens(probs, shape);
    QCOMPARE(r.topk[0], (std::vector<int>{1, 3}));
    QCOMPARE(r.topk[1], (std::vector<int>{0, 3}));
    QCOMPARE(r.weights[0], 0.5f / 0.8f);
    QCOMPARE(r.weights[1], 0.3f / 0.8f);
    QCOMPARE(r.weights[2], 0.5f);
    QCOMPARE(r.kept.size(), std::size_t{4});
    QVERIFY(same(r.kept[0], {0, 1, 0}));
    QVERIFY(same(r.kept[3], {1, 3, 1}));
    // Loads per expert, then probability sums (one sequence).
    QCOMPARE(r.sequence_stats, (std::vector<float>{1, 1, 0, 2, 0.1f + 0.3f, 0.5f + 0.2f, 0.1f + 0.2f, 0.3f + 0.3f}));
}

void TestMoePlan::route_drops_over_capacity_in_token_order() {
    // 3 tokens all prefer expert 2 (k = 1), capacity 2: the third is dropped but still
    // counts in the load of the balancing loss.
    const std::vector<float> probs{0.2f, 0.2f, 0.6f, 0.1f, 0.1f, 0.8f, 0.3f, 0.3f, 0.4f};
    const RouteShape shape{.tokens = 3, .experts = 3, .top_k = 1, .capacity = 2, .first_row = 0,
                           .seq_local = 3, .sequences = 1};
    const Routing r = route_tokens(probs, shape);
    QCOMPARE(r.kept.size(), std::size_t{2});
    QVERIFY(same(r.kept[0], {0, 2, 0}));
    QVERIFY(same(r.kept[1], {1, 2, 0}));
    QCOMPARE(r.sequence_stats[2], 3.0f);
}

void TestMoePlan::dispatch_orders_by_rank_then_expert_then_token() {
    // EP rank 0 holds experts 3 then 1, rank 1 holds 0 then 2 (a placement that is not the
    // identity, so that an order by expert id would fail).
    const ExpertPlacement placement({{3, 1}, {0, 2}}, 4);
    QCOMPARE(placement.owner, (std::vector<int>{1, 0, 1, 0}));
    QCOMPARE(placement.slot, (std::vector<int>{0, 1, 1, 0}));
    const std::vector<Assignment> kept{{0, 1, 0}, {0, 2, 1}, {1, 3, 0}, {1, 1, 1}, {2, 0, 0}, {2, 3, 1}};
    std::vector<float> weights(6);
    for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = 0.1f * static_cast<float>(i + 1);  // token·2 + slot
    const DispatchPlan plan = plan_dispatch(kept, weights, 2, placement);
    const std::vector<Assignment> want{{1, 3, 0}, {2, 3, 1}, {0, 1, 0}, {1, 1, 1}, {2, 0, 0}, {0, 2, 1}};
    QCOMPARE(plan.size(), 6);
    for (std::size_t a = 0; a < want.size(); ++a) {
        QVERIFY2(same(plan.rows[a], want[a]), qPrintable(QString("row %1").arg(a)));
        QCOMPARE(plan.weights[a], weights[static_cast<std::size_t>(want[a].token * 2 + want[a].slot)]);
    }
    QCOMPARE(plan.rows_to_rank, (std::vector<int>{4, 2}));
    QCOMPARE(plan.rows_to_expert, (std::vector<std::vector<int>>{{2, 2}, {1, 1}}));
}

void TestMoePlan::dispatch_counts_every_rank_even_without_rows() {
    const ExpertPlacement placement({{0}, {1}, {2}}, 3);
    const DispatchPlan plan = plan_dispatch({{0, 2, 0}}, {1.0f}, 1, placement);
    QCOMPARE(plan.rows_to_rank, (std::vector<int>{0, 0, 1}));
    QCOMPARE(plan.rows_to_expert, (std::vector<std::vector<int>>{{0}, {0}, {1}}));
}

void TestMoePlan::receive_regroups_rows_expert_major() {
    // 2 source ranks, 2 local experts. Source 0 sends 2 rows to expert 0 and 1 to expert 1;
    // source 1 sends 1 and 2. Received order: s0e0 s0e0 s0e1 | s1e0 s1e1 s1e1.
    const ReceivePlan plan = plan_receive({2, 1, 1, 2}, 2, 2);
    QCOMPARE(plan.rows, 6);
    QCOMPARE(plan.rows_from_rank, (std::vector<int>{3, 3}));
    QCOMPARE(plan.expert_rows, (std::vector<int>{3, 3}));
    QCOMPARE(plan.perm, (std::vector<std::int32_t>{0, 1, 3, 2, 4, 5}));
}

void TestMoePlan::load_balancing_loss_of_uniform_routing() {
    // Perfectly balanced routing: f_e = 1/E, P_e = 1/E, so L = coef·E/B · E · 1/E² = coef/B.
    const RouteShape shape{.tokens = 4, .experts = 2, .top_k = 1, .capacity = 4, .first_row = 0,
                           .seq_local = 4, .sequences = 1};
    const std::vector<float> stats{2, 2, 2, 2};  // loads, then probability sums
    const AuxLoss aux = load_balancing_loss(stats, shape, 4.0, 0.01f, 2);
    QVERIFY(std::abs(aux.loss - 0.01 / 2) < 1e-9);
    QCOMPARE(aux.grad.size(), std::size_t{2});
    QVERIFY(std::abs(aux.grad[0] - 0.01 * 2 / 2 * 0.5 / 4) < 1e-9);
}

QTEST_GUILESS_MAIN(TestMoePlan)
#include "tst_moe_plan.moc"
