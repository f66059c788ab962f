// The search's allocation-free rules against validate_layout, on thousands of sampled
// layouts of several models, so that the two can never drift apart; and the stage splits.
#include <QtTest>

#include <random>
#include <set>

#include "core/cluster/cluster_spec.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"
#include "core/search/candidate.h"
#include "core/search/feasibility.h"
#include "core/search/search_space.h"
#include "core/search/stage_splits.h"

using namespace meshwork;
using namespace meshwork::search;

class TestSearchFeasibility : public QObject {
    Q_OBJECT
  private slots:
    void rules_agree_with_validation_data();
    void rules_agree_with_validation();
    void stage_splits_cover_every_layer();
    void stage_splits_of_two_chunks_are_distinct();
    void divisors_in_order();
};

void TestSearchFeasibility::rules_agree_with_validation_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("cluster");
    for (const char* m : {"tiny", "tiny-moe", "llama3-8b", "llama3.1-405b", "gpt3-175b",
                          "mixtral-8x7b", "deepseek-v3", "qwen2-57b-a14b"}) {
        QTest::newRow(m) << m << (std::string(m).rfind("tiny", 0) == 0 ? "cpu-local" : "dgx-h100");
    }
}

void TestSearchFeasibility::rules_agree_with_validation() {
    QFETCH(QString, model);
    QFETCH(QString, cluster);
    SearchRequest req;
    req.model = load_model(model.toStdString());
    req.cluster = load_cluster(cluster.toStdString());
    std::mt19937 rng(20240611u);
    auto pick = [&](std::initializer_list<int> values) {
        std::vector<int> v(values);
        return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
    };
    int invalid = 0, valid = 0;
    std::set<Reject> seen;
    for (int i = 0; i < 4000; ++i) {
        Candidate c;
        // Sizes beyond what the model divides, so that every rule fires somewhere.
        c.tp = pick({1, 2, 3, 4, 5, 8, 16});
        c.cp = pick({1, 1, 2, 3, 4, 8});
        c.pp = pick({1, 2, 3, 4, 8, 16, 64, 128});
        c.dp = pick({1, 2, 4, 6, 8});
        c.ep = req.model.is_moe() ? pick({1, 2, 4, 8, 16, 5}) : pick({1, 1, 1, 2});
        c.etp = req.model.is_moe() ? pick({1, 2, 4, 3}) : pick({1, 1, 1, 2});
        c.schedule = static_cast<Schedule>(pick({0, 1, 2}));
        c.vpp = pick({1, 1, 2, 3});
        c.sequence_parallel = pick({0, 1}) == 1;
        c.micro_batch_size = pick({1, 2, 3, 4, 8});
        c.zero_stage = pick({0, 1, 2, 3});
        c.recompute = static_cast<Recompute>(pick({0, 1, 2}));
        const int chunks = c.pp * c.vpp;
        const auto splits = stage_splits(req.model.num_layers, chunks, 3);
        c.split = splits[std::uniform_int_distribution<std::size_t>(0, splits.size() - 1)(rng)];
        req.options.gpus = static_cast<int>(static_cast<long long>(c.tp) * c.cp * c.pp * c.dp);
        req.options.global_batch_size = pick({8, 16, 24, 64, 96, 1536});
        req.options.seq_length = pick({2048, 4096, 1000, 64, 96});
        req.options.dtype = req.cluster.gpu.peak_flops(DType::Bf16) > 0 ? DType::Bf16 : DType::Fp32;
        const Layout l = candidate_layout(c, req);
        const RuleContext rules = rule_context(req.model, req.options);
        const Reject fast = first_violation(rules, c);
        const ValidationResult full = validate_layout(l, "sample.json");
        std::set<std::string> fields;
        for (const auto& e : full.errors) {
            // The world and cluster size are fixed before the search's rules run.
            if (e.field == "parallel" || e.field == "gpus") continue;
            fields.insert(e.field);
        }
        const std::string label = candidate_label(c) + " gbs " +
                                  std::to_string(req.options.global_batch_size) + " seq " +
                                  std::to_string(req.options.seq_length);
        if (is_validation_rule(fast)) {
            ++invalid;
            seen.insert(fast);
            QVERIFY2(
                fields.count(reject_name(fast)) == 1,
                qPrintable(QString::fromStdString(label + ": search rule " + reject_name(fast) +
                                                  " but validation does not report it")));
        } else {
            ++valid;
            // (QVERIFY2 evaluates its message even when the check holds.)
            const std::string refused =
                fields.empty() ? std::string() : full.errors.front().to_string();
            QVERIFY2(fields.empty(),
                     qPrintable(QString::fromStdString(label + ": validation refuses (" + refused +
                                                       ") what the search accepts")));
            if (fast == Reject::ZeroWithPipeline) QVERIFY(c.zero_stage >= 2 && c.pp > 1);
        }
    }
    QVERIFY(invalid > 100);
    QVERIFY(valid > 20);
    QVERIFY(seen.count(Reject::Tp) && seen.count(Reject::GlobalBatch) && seen.count(Reject::Cp));
}

void TestSearchFeasibility::stage_splits_cover_every_layer() {
    for (int layers : {4, 10, 61, 96, 126}) {
        for (int chunks = 1; chunks <= 40; ++chunks) {
            const auto splits = stage_splits(layers, chunks, 2);
            QVERIFY(!splits.empty());
            QVERIFY(splits.front().balanced());
            std::vector<int> lps;
            for (std::size_t i = 1; i < splits.size(); ++i) {
                write_layers_per_stage(splits[i], chunks, lps);
                QCOMPARE(static_cast<int>(lps.size()), chunks);
                int sum = 0;
                for (std::size_t c = 0; c < lps.size(); ++c) {
                    // Only the end chunks may hold no layer (the embedding or the head alone).
                    QVERIFY(lps[c] >= (c == 0 || c + 1 == lps.size() ? 0 : 1));
                    sum += lps[c];
                }
                QCOMPARE(sum, layers);
                const int most = *std::max_element(lps.begin(), lps.end());
                QVERIFY(most - lps.front() <= 2 && most - lps.back() <= 2);
                QVERIFY(lps != balanced_stage_split(layers, chunks));
            }
        }
    }
    // Llama 3.1 405B over 16 stages: 8 layers in the middle, 7 or 6 at the ends.
    const auto s = stage_splits(126, 16, 2);
    QVERIFY(std::find(s.begin(), s.end(), StageSplit{6, 8, 8}) != s.end());
    QVERIFY(std::find(s.begin(), s.end(), StageSplit{8, 8, 6}) != s.end());
    // Over 16 × 8 chunks of one layer: the paper's split, an embedding-only first chunk and a
    // loss-only last one (Megatron-LM's accounted split), though 126 < 128 chunks.
    const auto paper = stage_splits(126, 128, 2);
    QVERIFY(std::find(paper.begin(), paper.end(), StageSplit{0, 1, 0}) != paper.end());
    // The feasibility rules accept it; a middle chunk of none they refuse.
    RuleContext r;
    r.layers = 126;
    QVERIFY(check_split(r, 128, StageSplit{0, 1, 0}) == Reject::None);
    r.layers = 2;
    QVERIFY(check_split(r, 4, StageSplit{1, 0, 1}) == Reject::LayersPerStage);
}

void TestSearchFeasibility::stage_splits_of_two_chunks_are_distinct() {
    const auto splits = stage_splits(10, 2, 4);
    std::set<std::vector<int>> seen;
    std::vector<int> lps;
    for (const auto& s : splits) {
        write_layers_per_stage(s, 2, lps);
        QVERIFY(seen.insert(lps).second);
    }
    // [5,5] (balanced), [4,6], [6,4], [3,7], [7,3]: |first − last| ≤ 4.
    QCOMPARE(static_cast<int>(splits.size()), 5);
}

void TestSearchFeasibility::divisors_in_order() {
    QCOMPARE(divisors(12), (std::vector<int>{1, 2, 3, 4, 6, 12}));
    QCOMPARE(divisors(1), (std::vector<int>{1}));
}

QTEST_APPLESS_MAIN(TestSearchFeasibility)
#include "tst_search_feasibility.moc"
