// Hybrid sharding (training.zero_replicas; HSDP, Megatron-LM's distributed-optimizer
// instances): the ZeRO state is sharded over dp / replicas ranks, gradients reduce-scattered
// inside a shard group and the shard all-reduced across the replicas, parameters gathered
// inside the group. Checked against the collectives of core/cost/collective_time.h and the
// per-parameter bytes of the memory model, not against a fitted figure.
#include <QtTest>

#include "core/cost/cost_model.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::test;

namespace {

// Llama 3 8B on 128 H100 (16 DGX nodes of 8), pure data parallelism with ZeRO-3.
Layout llama8b_zero3(int replicas) {
    Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 128, 1, 128, 8192);
    l.training.zero_stage = 3;
    l.training.zero_replicas = replicas;
    return l;
}

bool has_error(const Layout& l, const std::string& field) {
    for (const auto& issue : validate_layout(l, "t").errors) {
        if (issue.field == field) return true;
    }
    return false;
}

}  // namespace

class TestZeroReplicas : public QObject {
    Q_OBJECT
private slots:
    // Shard groups of 8 (one node each) replicated 16 times: weights, gradients and optimizer
    // states are sharded 8 ways, not 128, so they take exactly 16 times the bytes.
    void state_is_sharded_over_the_shard_group() {
        const Estimate all = estimate_layout(llama8b_zero3(1));
        const Estimate hybrid = estimate_layout(llama8b_zero3(16));
        QVERIFY(sane(all) && sane(hybrid));
        const auto& a = all.stages.front();
        const auto& h = hybrid.stages.front();
        QVERIFY2(near(static_cast<double>(h.optimizer_bytes), 16.0 * a.optimizer_bytes, 1e-6),
                 qPrintable(QString("optimizer %1 vs %2").arg(h.optimizer_bytes).arg(a.optimizer_bytes)));
        QVERIFY(near(static_cast<double>(h.grads_bytes), 16.0 * a.grads_bytes, 1e-6));
        QVERIFY(near(static_cast<double>(h.params_bytes), 16.0 * a.params_bytes, 1e-6));
        QVERIFY(h.peak_bytes > a.peak_bytes);
    }

    // The shard group is the inner part of the data-parallel axis: with dp stride 1 and 8 GPUs
    // a node, 8 ranks a group sit on one node; the replicas are one rank of each group.
    void groups_sit_where_the_ranks_are() {
        const auto c = costs_of(llama8b_zero3(16));
        QCOMPARE(c.dense_shard_span.size, 8);
        QCOMPARE(c.dense_shard_span.nodes, 1);
        QCOMPARE(c.dense_replica_span.size, 16);
        QCOMPARE(c.dense_replica_span.nodes, 16);
        const auto one = costs_of(llama8b_zero3(1));
        QCOMPARE(one.dense_shard_span.size, 128);
        QCOMPARE(one.dense_shard_span.nodes, 16);
        QCOMPARE(one.dense_replica_span.size, 1);
    }

    // The reduction is a reduce-scatter in the shard group plus an all-reduce of the 1/8
    // shard across the replicas (Megatron-LM param_and_grad_buffer.py:700-760); the gather
    // stays in the group.
    void gradients_reduce_in_two_levels() {
        const auto c = costs_of(llama8b_zero3(16));
        const double params = 8.0e9;
        const auto g = cost::grad_sync_cost(c, params, 0);
        const double grad = c.state_bytes.grad;
        const double expected = cost::reduce_scatter_s(c.link, c.dense_shard_span, params * grad) +
                                cost::all_reduce_s(c.link, c.dense_replica_span, params * grad / 8.0) +
                                cost::reduce_scatter_s(c.link, c.expert_shard_span, 0) +
                                cost::all_reduce_s(c.link, c.expert_replica_span, 0);
        QVERIFY2(near(g.per_micro_batch_reduce_s, expected), qPrintable(QString("%1 vs %2")
                                                                         .arg(g.per_micro_batch_reduce_s)
                                                                         .arg(expected)));
        QVERIFY(near(g.per_pass_gather_s, cost::all_gather_s(c.link, c.dense_shard_span, params * c.state_bytes.weight) +
                                              cost::all_gather_s(c.link, c.expert_shard_span, 0)));
        // Inside a node the reduce-scatter is faster than over all 16 nodes.
        const auto one = cost::grad_sync_cost(costs_of(llama8b_zero3(1)), params, 0);
        QVERIFY(one.per_pass_gather_s > g.per_pass_gather_s);
    }

    // ZeRO-0 shards nothing to replicate; replicas must divide dp (and edp) evenly.
    void validation_names_the_field() {
        Layout l = llama8b_zero3(16);
        QVERIFY(validate_layout(l, "t").valid());
        l.training.zero_stage = 0;
        QVERIFY(has_error(l, "training.zero_replicas"));
        l = llama8b_zero3(3);
        QVERIFY(has_error(l, "training.zero_replicas"));
        // Mixtral 8x7B with EP 8 on 16 GPUs: edp 2, so 4 replicas do not divide it.
        Layout moe = make_layout(load_model("mixtral-8x7b"), "dgx-h100", 1, 1, 16, 1, 32, 4096);
        moe.parallel.mesh.ep = 8;
        moe.training.zero_replicas = 4;
        QVERIFY(has_error(moe, "training.zero_replicas"));
        moe.training.zero_replicas = 2;
        QVERIFY(!has_error(moe, "training.zero_replicas"));
    }
};

QTEST_GUILESS_MAIN(TestZeroReplicas)
#include "tst_cost_zero_replicas.moc"
