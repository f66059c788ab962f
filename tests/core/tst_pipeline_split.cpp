// Megatron-LM's pipeline split rules (core/layout/pipeline_split.h) against layer counts
// worked out by hand from get_num_layers_to_build (megatron/core/transformer/
// transformer_block.py:96-203 at d98e8a64), the refusals of TransformerConfig
// (transformer_config.py:2229-2415), the layout's validation of end chunks without layers,
// and the CLI flags that state the rules.
#include <QtTest>

#include "core/common/error.h"
#include "core/common/resources.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_validate.h"
#include "core/layout/pipeline_split.h"

using namespace meshwork;

namespace {

std::vector<int> repeat(std::initializer_list<int> per_rank, int vpp) {
    std::vector<int> out;
    for (int v = 0; v < vpp; ++v) out.insert(out.end(), per_rank);
    return out;
}

}  // namespace

class TestPipelineSplit : public QObject {
    Q_OBJECT
private slots:
    void accounted_matches_megatron();
    void accounted_refusals();
    void uneven_matches_megatron();
    void uneven_refusals();
    void forms_round_trip();
    void validation_allows_empty_end_chunks_only();
    void flags_state_the_rules();
    void json_round_trip_and_refusals();
};

void TestPipelineSplit::accounted_matches_megatron() {
    std::string error;
    // 14 layers + embedding + loss = 16 over pp 4: 4 per rank, the ends build 3.
    QCOMPARE(accounted_split(14, 4, 1, true, true, error), (std::vector<int>{3, 4, 4, 3}));
    // 30 + 2 = 32 over pp 4 = 8 per rank, vpp 2: 4 per chunk; chunk 0 (vp 0, pp 0) and chunk 7
    // (vp 1, pp 3) build 3.
    QCOMPARE(accounted_split(30, 4, 2, true, true, error), (std::vector<int>{3, 4, 4, 4, 4, 4, 4, 3}));
    // Embedding only: 80 + 1 = 81 over pp 3 = 27 per rank, vpp 3: 9 per chunk, chunk 0 builds 8.
    std::vector<int> e = accounted_split(80, 3, 3, true, false, error);
    QCOMPARE(e.size(), std::size_t{9});
    QCOMPARE(e.front(), 8);
    QCOMPARE(e.back(), 9);
    // Loss only, the same counts: the last chunk builds 8.
    std::vector<int> l = accounted_split(80, 3, 3, false, true, error);
    QCOMPARE(l.front(), 9);
    QCOMPARE(l.back(), 8);
    // Llama 3 405B as the paper describes it (Dubey et al. 2024, section 3.3.2): 126 + 2 = 128
    // over pp 16 = 8 per rank, 8 chunks of 1: the first chunk holds only the embedding, the
    // last only the head and loss.
    const auto llama = accounted_split(126, 16, 8, true, true, error);
    QCOMPARE(llama.size(), std::size_t{128});
    QCOMPARE(llama.front(), 0);
    QCOMPARE(llama.back(), 0);
    QCOMPARE(std::count(llama.begin(), llama.end(), 1), 126l);
}

void TestPipelineSplit::accounted_refusals() {
    std::string error;
    // 31 counted layers over pp 4 (transformer_config.py:2382-2401).
    QVERIFY(accounted_split(30, 4, 2, true, false, error).empty());
    QVERIFY(error.find("pp = 4") != std::string::npos);
    // 16 / 4 = 4 per rank over vpp 3 (transformer_config.py:2404-2415).
    QVERIFY(accounted_split(14, 4, 3, true, true, error).empty());
    QVERIFY(error.find("vpp = 3") != std::string::npos);
}

void TestPipelineSplit::uneven_matches_megatron() {
    std::string error;
    // 126 layers, pp 16, first and last rank 7: the 14 middle ranks hold 112 / 14 = 8.
    std::vector<int> expect(16, 8);
    expect.front() = expect.back() = 7;
    QCOMPARE(uneven_split(126, 16, 1, 7, 7, error), expect);
    // 80 layers, pp 4, vpp 2, first 4, last 6: middle 70 / 2 = 35 per rank is odd: refused.
    QVERIFY(uneven_split(80, 4, 2, 4, 6, error).empty());
    // first 16, last 16: middle 48 / 2 = 24 per rank; every rank's layers split over its two
    // chunks (chunk c on rank c % 4): 8, 12, 12, 8 twice.
    QCOMPARE(uneven_split(80, 4, 2, 16, 16, error), repeat({8, 12, 12, 8}, 2));
    // First only: 80 − 17 = 63 over 3 ranks.
    QCOMPARE(uneven_split(80, 4, 1, 17, std::nullopt, error), (std::vector<int>{17, 21, 21, 21}));
    // pp 2, last only: the first rank holds what is left as the (only) middle rank.
    QCOMPARE(uneven_split(10, 2, 1, std::nullopt, 4, error), (std::vector<int>{6, 4}));
}

void TestPipelineSplit::uneven_refusals() {
    std::string error;
    QVERIFY(uneven_split(80, 4, 1, 0, std::nullopt, error).empty());  // "must be larger than 0"
    QVERIFY(uneven_split(80, 4, 2, 5, std::nullopt, error).empty());  // 5 over vpp 2
    QVERIFY(error.find("vpp = 2") != std::string::npos);
    QVERIFY(uneven_split(10, 2, 1, 4, 4, error).empty());  // 2 layers left, no middle rank
    QVERIFY(uneven_split(80, 4, 1, 10, 11, error).empty());  // 59 over 2 middle ranks
    QVERIFY(error.find("59 middle layers") != std::string::npos);
    QCOMPARE(uneven_split(80, 4, 1, 10, 10, error), (std::vector<int>{10, 30, 30, 10}));
    QVERIFY(uneven_split(80, 1, 1, 10, std::nullopt, error).empty());  // needs pp ≥ 2
}

void TestPipelineSplit::forms_round_trip() {
    std::string error;
    struct Case {
        int layers, pp, vpp;
        std::vector<int> split;
        MegatronSplitForm::Kind kind;
    };
    const std::vector<Case> cases = {
        {126, 16, 8, accounted_split(126, 16, 8, true, true, error), MegatronSplitForm::Kind::Accounted},
        {80, 3, 3, accounted_split(80, 3, 3, false, true, error), MegatronSplitForm::Kind::Accounted},
        {80, 4, 2, uneven_split(80, 4, 2, 16, 16, error), MegatronSplitForm::Kind::Uneven},
        {80, 4, 1, uneven_split(80, 4, 1, 17, std::nullopt, error), MegatronSplitForm::Kind::Uneven},
        {80, 4, 1, {19, 21, 19, 21}, MegatronSplitForm::Kind::None},
        {80, 4, 2, {9, 10, 10, 11, 11, 10, 10, 9}, MegatronSplitForm::Kind::None},
    };
    for (const auto& c : cases) {
        const auto form = megatron_split_form(c.split, c.layers, c.pp, c.vpp);
        QVERIFY(form.kind == c.kind);
        if (form.kind == MegatronSplitForm::Kind::Accounted) {
            QCOMPARE(accounted_split(c.layers, c.pp, c.vpp, form.embedding, form.loss, error), c.split);
        } else if (form.kind == MegatronSplitForm::Kind::Uneven) {
            QCOMPARE(uneven_split(c.layers, c.pp, c.vpp, form.first, form.last, error), c.split);
        }
    }
    // The first-only form keeps the last rank unset.
    const auto first_only = megatron_split_form({17, 21, 21, 21}, 80, 4, 1);
    QVERIFY(first_only.first == 17 && !first_only.last);
}

void TestPipelineSplit::validation_allows_empty_end_chunks_only() {
    Layout l = load_layout(resource_dir() + "/layouts/llama3-70b-h100-64.json");  // pp 4, 80 layers
    l.placement.layers_per_stage = {0, 27, 27, 26};
    QVERIFY(validate_layout(l, "x.json").valid());
    l.placement.layers_per_stage = {27, 27, 26, 0};
    QVERIFY(validate_layout(l, "x.json").valid());
    l.placement.layers_per_stage = {27, 0, 27, 26};
    auto r = validate_layout(l, "x.json");
    QVERIFY(!r.valid());
    QCOMPARE(r.errors.front().field, std::string("placement.layers_per_stage[1]"));
    l.placement.layers_per_stage = {-1, 27, 27, 27};
    r = validate_layout(l, "x.json");
    QVERIFY(!r.valid());
    QCOMPARE(r.errors.front().field, std::string("placement.layers_per_stage[0]"));
}

void TestPipelineSplit::flags_state_the_rules() {
    const std::string file = resource_dir() + "/layouts/llama3-70b-h100-64.json";
    LayoutOverrides o;
    o.vpp = 2;
    o.first_stage_layers = 16;
    o.last_stage_layers = 16;
    QCOMPARE(build_layout(file, o).placement.layers_per_stage, repeat({8, 12, 12, 8}, 2));
    // Refusals name the flag: a split Megatron-LM refuses, two rules at once, a rule with an
    // explicit split.
    auto refused = [&](const LayoutOverrides& f, const std::string& field) {
        try {
            (void)build_layout(file, f);
        } catch (const InputError& e) {
            return e.issues().front().field == field;
        }
        return false;
    };
    LayoutOverrides bad;
    bad.account_for_embedding = true;  // 81 over pp 4
    QVERIFY(refused(bad, "--account-for-embedding"));
    bad.first_stage_layers = 20;
    QVERIFY(refused(bad, "--account-for-embedding"));
    LayoutOverrides both;
    both.first_stage_layers = 20;
    both.layers_per_stage = std::vector<int>{20, 20, 20, 20};
    QVERIFY(refused(both, "--first-stage-layers"));
    // The paper's Llama 3 405B split from flags.
    LayoutOverrides llama;
    llama.model = "llama3.1-405b";
    llama.gpus = 2048;
    llama.tp = 8;
    llama.pp = 16;
    llama.vpp = 8;
    llama.account_for_embedding = llama.account_for_loss = true;
    const Layout l = build_layout(std::nullopt, llama);
    QCOMPARE(l.placement.layers_per_stage.size(), std::size_t{128});
    QCOMPARE(l.placement.layers_per_stage.front(), 0);
    QCOMPARE(l.placement.layers_per_stage[1], 1);
}

void TestPipelineSplit::json_round_trip_and_refusals() {
    // The bundled Llama 3 405B layout states the paper's split: it reads back equal.
    const Layout l = load_layout(resource_dir() + "/layouts/llama3.1-405b-h100-16384.json");
    QCOMPARE(l.placement.layers_per_stage.front(), 0);
    QVERIFY(layout_from_json(layout_to_json(l), "x.json") == l);
    // A negative count: the reader names the file and the entry.
    auto j = layout_to_json(l);
    j["placement"]["layers_per_stage"][0] = -1;
    try {
        (void)layout_from_json(j, "x.json");
        QFAIL("a negative layer count was read");
    } catch (const InputError& e) {
        QCOMPARE(e.issues().front().file, std::string("x.json"));
        QCOMPARE(e.issues().front().field, std::string("placement.layers_per_stage[0]"));
    }
    // An empty middle chunk reads, and validation refuses it, naming the entry.
    j["placement"]["layers_per_stage"][0] = 1;
    j["placement"]["layers_per_stage"][1] = 0;
    const auto v = validate_layout(layout_from_json(j, "x.json"), "x.json");
    QVERIFY(!v.valid());
    QCOMPARE(v.errors.front().field, std::string("placement.layers_per_stage[1]"));
}

QTEST_GUILESS_MAIN(TestPipelineSplit)
#include "tst_pipeline_split.moc"
