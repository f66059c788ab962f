// The 2025-2026 families with per-layer kinds: real config.json files
// (tests/fixtures/hf/families-2026, SOURCES.txt) import with their blocks' kinds, and their
// parameter counts are within 0.5 % of the model cards.
#include <QtTest>

#include <cmath>

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/model/hf_config.h"
#include "core/model/hf_hybrid_config.h"
#include "core/model/layer_graph.h"
#include "core/cost/memory_model.h"
#include "core/cost/kernel_time.h"
#include "core/export/megatron_export.h"
#include "core/cost/layer_kind_cost.h"
#include "core/cost/model_profile.h"
#include "core/cost/cost_model.h"
#include "core/layout/layout_summary.h"
#include "core/layout/layout_validate.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using meshwork::test::make_layout;

namespace {

std::string fixture(const std::string& name) {
    return std::string(MESHWORK_TEST_FIXTURES) + "/hf/families-2026/" + name;
}

ModelSpec load_fixture(const std::string& name) { return load_model(fixture(name)); }

std::string pattern_of(const ModelSpec& m) {
    std::string s;
    for (int b = 0; b < m.num_layers; ++b) s += m.block_letters(b) + " ";
    return s;
}

}  // namespace

class TestHybridModels : public QObject {
    Q_OBJECT
private slots:
    void card_totals_data();
    void card_totals();
    void qwen3_next_layers();
    void nemotron_h_pattern();
    void sparse_attention();
    void minimax_m2();
    void gemma3_wrapper();
    void gemma4();
    void gemma4_per_layer_inputs();
    void gemma_four_norms();
    void round_trip_data();
    void round_trip();
    void pattern_errors();
    void sparse_attention_flops();
    void kind_costs();
};

void TestHybridModels::card_totals_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<double>("card");       // the model card's (or page's) total
    QTest::addColumn<bool>("with_mtp");     // whether that figure counts the MTP weights
    // SOURCES.txt gives each figure's source.
    QTest::newRow("Qwen3-Next-80B-A3B (safetensors total, no MTP)")
        << "qwen3-next-80b-a3b-instruct.config.json" << 79.674391296e9 << false;
    QTest::newRow("Qwen3-Next-80B-A3B (card 80B)") << "qwen3-next-80b-a3b-instruct.config.json" << 80e9 << false;
    QTest::newRow("Nemotron-3-Nano-30B-A3B (card 31.6B)") << "nemotron-3-nano-30b-a3b.config.json" << 31.6e9 << false;
    QTest::newRow("DeepSeek-V3.2-Exp (685B with MTP)") << "deepseek-v3.2-exp.config.json" << 685e9 << true;
    QTest::newRow("GLM-5 (card 744B, main model)") << "glm-5.config.json" << 744e9 << false;
    QTest::newRow("MiniMax-M2 (page 229B)") << "minimax-m2.config.json" << 229e9 << false;
}

void TestHybridModels::card_totals() {
    QFETCH(QString, file);
    QFETCH(double, card);
    QFETCH(bool, with_mtp);
    const ModelSpec m = load_fixture(file.toStdString());
    const LayerGraph g = build_layer_graph(m);
    double total = static_cast<double>(g.params_total);
    if (!with_mtp) {
        for (const auto& l : g.layers) {
            if (l.kind == LayerKind::Mtp) total -= static_cast<double>(l.params);
        }
    }
    const double err = std::abs(total - card) / card;
    if (err > 0.005) qWarning("%s: %.4fB against %.4fB", qPrintable(file), total / 1e9, card / 1e9);
    QVERIFY(err <= 0.005);
}

void TestHybridModels::qwen3_next_layers() {
    const ModelSpec m = load_fixture("qwen3-next-80b-a3b-instruct.config.json");
    QCOMPARE(m.num_layers, 48);
    QVERIFY(m.is_hybrid());
    // full_attention_interval 4: blocks 3, 7, ... attend; the others are Gated DeltaNet.
    for (int b = 0; b < m.num_layers; ++b) {
        QCOMPARE(m.mixer_kind(b), (b + 1) % 4 == 0 ? MixerKind::Attention : MixerKind::LinearAttention);
        QVERIFY(m.is_moe_block(b));
    }
    QCOMPARE(m.linear_attention.num_value_heads, 32);
    QVERIFY(m.attention_output_gate);
    QCOMPARE(m.rope.percent, 0.25);
    // The safetensors figures of these shapes (SOURCES.txt): exact, not only within 0.5 %.
    const LayerGraph g = build_layer_graph(m);
    QCOMPARE(g.params_total, std::int64_t{79674391296});
    QCOMPARE(g.params_active + m.vocab_size * m.hidden_size, std::int64_t{3874929408});
    // layer_types states the same as the interval.
    Json j = model_to_hf_config(m);
    QVERIFY(j.contains("layer_types"));
    j["layer_types"][0] = "sliding_attention";
    bool refused = false;
    try {
        (void)model_from_hf_config(j, "q.json", "q");
    } catch (const InputError& e) {
        refused = std::string(e.what()).find("layer_types[0]") != std::string::npos;
    }
    QVERIFY(refused);
}

void TestHybridModels::nemotron_h_pattern() {
    const ModelSpec m = load_fixture("nemotron-3-nano-30b-a3b.config.json");
    QCOMPARE(m.num_layers, 52);
    int mamba = 0, attention = 0, moe = 0;
    for (int b = 0; b < m.num_layers; ++b) {
        mamba += m.mixer_kind(b) == MixerKind::Mamba2 ? 1 : 0;
        attention += m.mixer_kind(b) == MixerKind::Attention ? 1 : 0;
        moe += m.is_moe_block(b) ? 1 : 0;
        // One sublayer per Nemotron-H layer.
        QCOMPARE(m.block_letters(b).size(), std::size_t{1});
    }
    QCOMPARE(mamba, 23);
    QCOMPARE(attention, 6);
    QCOMPARE(moe, 23);
    QCOMPARE(hybrid_pattern(m), std::string("MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"));
    QCOMPARE(m.mamba.conv_dim(), std::int64_t{4096 + 2 * 8 * 128});
    QCOMPARE(m.mlp_activation, std::string("relu2"));
    QVERIFY(m.mlp == MlpKind::Dense);
    // The dense 8B: no experts read though the config class defaults n_routed_experts.
    const ModelSpec h8 = load_fixture("nemotron-h-8b-base-8k.config.json");
    QVERIFY(!h8.is_moe());
    QCOMPARE(build_layer_graph(h8).params_total, std::int64_t{8100852736});
}

void TestHybridModels::sparse_attention() {
    const ModelSpec v32 = load_fixture("deepseek-v3.2-exp.config.json");
    QVERIFY(v32.uses_mla);
    QCOMPARE(v32.mixer_kind(0), MixerKind::SparseAttention);
    QCOMPARE(v32.sparse_attention.topk, std::int64_t{2048});
    QCOMPARE(v32.mtp_layers, 1);
    // The indexer: 1536·64·128 + 7168·128 + 2·128 + 7168·64 per block, beyond V3's MLA.
    ModelSpec v3 = v32;
    v3.block_kinds.clear();
    v3.family = "deepseek_v3";
    const auto per_block = build_layer_graph(v32).params_total - build_layer_graph(v3).params_total;
    QCOMPARE(per_block, std::int64_t{(61 + 1) * (1536LL * 64 * 128 + 7168LL * 128 + 2 * 128 + 7168LL * 64)});
    const ModelSpec glm = load_fixture("glm-5.config.json");
    QCOMPARE(glm.num_moe_blocks(), 75);
    QCOMPARE(glm.rope.theta, 8000000.0);  // from rope_parameters
}

void TestHybridModels::minimax_m2() {
    const ModelSpec m = load_fixture("minimax-m2.config.json");
    QCOMPARE(m.moe.num_experts, 256);
    QCOMPARE(m.moe.router_score, std::string("sigmoid"));
    QVERIFY(m.moe.router_bias && m.qk_norm && m.qk_norm_full_width);
    QCOMPARE(m.rope.percent, 0.5);
    QCOMPARE(m.mtp_layers, 0);
    Json j = model_to_hf_config(m);
    j["attn_type_list"] = Json::array({1, 0});
    bool refused = false;
    try {
        (void)model_from_hf_config(j, "mm.json", "mm");
    } catch (const InputError& e) {
        refused = std::string(e.what()).find("attn_type_list[1]") != std::string::npos;
    }
    QVERIFY(refused);
}

void TestHybridModels::gemma3_wrapper() {
    const ModelSpec g = load_fixture("gemma-3-27b-it.config.json");
    QCOMPARE(g.family, std::string("gemma3_text"));
    QCOMPARE(g.num_layers, 62);
    QCOMPARE(g.vocab_size, std::int64_t{262208});
    QCOMPARE(g.global_attention_every, 6);
    // Text model only; the card's 27B includes a ~0.4B SigLIP encoder.
    const double total = static_cast<double>(build_layer_graph(g).params_total);
    QVERIFY(total > 26.5e9 && total < 27.1e9);
}

void TestHybridModels::gemma4() {
    // Gemma 4 31B as shipped (Gemma4ForConditionalGeneration, text_config): every sixth block
    // full attention with 512-wide heads, 4 KV heads and keys reused as values (no v_proj).
    const ModelSpec d = load_fixture("gemma-4-31b-it.config.json");
    QCOMPARE(d.family, std::string("gemma4_text"));
    QCOMPARE(d.num_layers, 60);
    QCOMPARE(d.global_attention_every, 6);
    QCOMPARE(d.sliding_window, std::int64_t{1024});
    QCOMPARE(d.head_dim_of(0), std::int64_t{256});
    QCOMPARE(d.kv_heads_of(0), 16);
    QVERIFY(!d.values_are_keys(0));
    QCOMPARE(d.head_dim_of(5), std::int64_t{512});
    QCOMPARE(d.kv_heads_of(5), 4);
    QVERIFY(d.values_are_keys(5));
    QVERIFY(d.tie_embeddings && d.qk_norm && d.glu_activation == "gelu_tanh");
    QCOMPARE(d.final_logit_softcap, 30.0);
    // The text model's parameters from the checkpoint's own shapes (SOURCES.txt):
    // 30,697,345,280 (every weight of the text model, norms included; the vision tower's
    // ~0.57B, which the card's 31B includes, is not modelled). Within 0.5 %.
    const LayerGraph dg = build_layer_graph(d);
    QVERIFY2(std::fabs(static_cast<double>(dg.params_total) / 30697345280.0 - 1) < 0.005,
             std::to_string(dg.params_total).c_str());
    // describe's summary names the full-attention blocks' own geometry.
    const nlohmann::json summary = model_summary_json(d, 2048);
    QCOMPARE(summary["full_attention_blocks"]["layers"].get<int>(), 10);
    QCOMPARE(summary["full_attention_blocks"]["head_dim"].get<int>(), 512);
    QCOMPARE(summary["full_attention_blocks"]["num_kv_heads"].get<int>(), 4);
    QVERIFY(summary["full_attention_blocks"]["values_are_keys"].get<bool>());
    QVERIFY(!model_summary_json(load_fixture("gemma-3-27b-it.config.json"), 2048).contains("full_attention_blocks"));
    // Per block: a full-attention block's attention, 16384-wide Q and O, one 2048-wide K.
    for (const auto& l : dg.layers) {
        if (l.kind != LayerKind::Attention) continue;
        const std::int64_t h = 5376;
        if (l.block == 5) QCOMPARE(l.params, h * 16384 * 2 + h * 2048 + 2 * 512);
        if (l.block == 0) QCOMPARE(l.params, h * 8192 * 2 + 2 * h * 4096 + 2 * 256);
    }

    // 26B-A4B: the same attention, and in every block 128 experts (top 8, 704 wide) beside a
    // dense GeGLU MLP of 2112 (a shared expert, always on).
    const ModelSpec m = load_fixture("gemma-4-26b-a4b-it.config.json");
    QVERIFY(m.is_moe());
    QCOMPARE(m.num_moe_blocks(), 30);
    QCOMPARE(m.moe.num_experts, 128);
    QCOMPARE(m.moe.top_k, 8);
    QCOMPARE(m.moe.expert_ffn_hidden, std::int64_t{704});
    QCOMPARE(m.moe.num_shared_experts, 1);
    QCOMPARE(m.moe.shared_ffn_hidden, std::int64_t{2112});
    QCOMPARE(m.kv_heads_of(5), 2);
    // From the shapes: 25,233,141,760 total and 3,822,530,560 active (text model; the card
    // says 26B total, 4B active with the vision tower). Within 0.5 %.
    const LayerGraph mg = build_layer_graph(m);
    QVERIFY2(std::fabs(static_cast<double>(mg.params_total) / 25233141760.0 - 1) < 0.005,
             std::to_string(mg.params_total).c_str());
    QVERIFY2(std::fabs(static_cast<double>(mg.params_active) / 3822530560.0 - 1) < 0.005,
             std::to_string(mg.params_active).c_str());

    // The config Meshwork writes reads back to the same model.
    for (const ModelSpec& g : {d, m}) {
        const ModelSpec again = model_from_hf_config(model_to_hf_config(g), "again.json", g.name);
        QVERIFY(again == g);
    }

    // Refused by name: attention without a causal mask, a bare "gemma4" without text_config.
    Json bidirectional = load_json_file(fixture("gemma-4-31b-it.config.json"));
    bidirectional["text_config"]["use_bidirectional_attention"] = "all";
    const Json bare = {{"model_type", "gemma4"}, {"hidden_size", 2816}};
    const std::pair<Json, std::string> refusals[] = {
        {bidirectional, "text_config.use_bidirectional_attention"},
        {bare, "model_type"}};
    for (const auto& [j, field] : refusals) {
        bool named = false;
        try {
            (void)model_from_hf_config(j, "g4.json", "g4");
        } catch (const InputError& e) {
            named = e.issues().front().field == field;
        }
        QVERIFY2(named, field.c_str());
    }
    // Without hidden_size_per_layer_input the model has Gemma4TextConfig's 256-wide per-layer
    // inputs of a 262,144-token table.
    Json ple = load_json_file(fixture("gemma-4-31b-it.config.json"));
    ple["text_config"].erase("hidden_size_per_layer_input");
    const ModelSpec defaulted = model_from_hf_config(ple, "g4.json", "g4");
    QCOMPARE(defaulted.per_layer_input.width, std::int64_t{256});
    QCOMPARE(defaulted.per_layer_input.vocab, std::int64_t{262144});
    // TP must fit both KV head counts: 16 and 4 fit tp 8, and the 2 of 26B's full blocks too.
    Layout l = make_layout(d, "dgx-h100", 8, 1, 1, 1, 8, 4096);
    QVERIFY(validate_layout(l, "g4").valid());
    // The estimate prices the wider blocks (it does not refuse them).
    QVERIFY(estimate_layout(l).step_time_s > 0);
}

void TestHybridModels::gemma4_per_layer_inputs() {
    // Gemma 4 E2B and E4B (tests/fixtures/hf/families-2026/SOURCES.txt): per-layer inputs of
    // 256 per block from a 262,144-token table, and the last 20 (E2B) / 18 (E4B) blocks reusing
    // earlier blocks' keys and values; E2B doubles those blocks' MLP.
    const ModelSpec e2b = load_fixture("gemma-4-e2b-it.config.json");
    const ModelSpec e4b = load_fixture("gemma-4-e4b-it.config.json");
    QCOMPARE(e2b.per_layer_input.width, std::int64_t{256});
    QCOMPARE(e2b.per_layer_input.vocab, std::int64_t{262144});
    QCOMPARE(e2b.kv_shared_layers, 20);
    QVERIFY(e2b.double_wide_shared_mlp);
    QCOMPARE(e4b.kv_shared_layers, 18);
    QVERIFY(!e4b.double_wide_shared_mlp);
    QVERIFY(!e2b.shares_kv(14) && e2b.shares_kv(15) && e2b.shares_kv(34));
    QCOMPARE(e2b.ffn_of(14), std::int64_t{6144});
    QCOMPARE(e2b.ffn_of(15), std::int64_t{12288});
    QCOMPARE(e4b.ffn_of(41), std::int64_t{10240});

    // Parameters of the text model against a count from transformers' modules
    // (modeling_gemma4.py: tied embedding; per-layer table, model projection and its norm;
    // per block q_proj, o_proj, q_norm, and k_proj, v_proj, k_norm where it has its own K/V;
    // the GeGLU MLP at its width; four norms; the per-layer gate, projection and norm; the
    // final norm): E2B 4,628,569,344, E4B 7,463,013,376, exactly (the four norms a block
    // included: ModelSpec::sandwich_norms).
    QVERIFY(e2b.sandwich_norms && e4b.sandwich_norms);
    QCOMPARE(build_layer_graph(e2b).params_total, std::int64_t{4628569344});
    QCOMPARE(build_layer_graph(e4b).params_total, std::int64_t{7463013376});
    // A KV-sharing sliding block: queries and output only (and q_norm), plus its per-layer
    // input's gate, projection and norm.
    const LayerGraph g = build_layer_graph(e2b);
    const std::int64_t h = 1536, q = 8 * 256, ple = 256;
    bool seen = false;
    for (const Layer& l : g.layers) {
        if (l.block != 15 || l.kind != LayerKind::Attention) continue;
        seen = true;
        QCOMPARE(l.params, h * q + q * h + 256 + 2 * h * ple + h);
    }
    QVERIFY(seen);

    // Round trip through the config.json Meshwork writes.
    for (const ModelSpec& m : {e2b, e4b}) {
        QVERIFY(model_from_hf_config(model_to_hf_config(m), "again.json", m.name) == m);
    }
    // The profile: the dense block's MLP at the mean width, K/V at the mean over blocks that
    // project their own; the per-layer table is vocabulary-parallel with the embedding.
    const cost::ModelProfile p = cost::build_model_profile(e2b);
    QCOMPARE(p.ffn, (15.0 * 6144 + 20.0 * 12288) / 35);
    QCOMPARE(p.embedding_params, 262144.0 * 1536 + 262144.0 * 35 * 256);
    // Estimated and searched like any model; the CPU engine refuses them by name (not here).
    Layout l = make_layout(e2b, "dgx-h100", 1, 1, 1, 1, 8, 4096);
    QVERIFY(validate_layout(l, "e2b").valid());
    QVERIFY(estimate_layout(l).step_time_s > 0);
}

// Gemma 2, 3 and 4 norm the attention's and the MLP's outputs as well as their inputs: two
// more norm layers a block, their passes in each half's time, their inputs kept; the Megatron
// export says it cannot write them.
void TestHybridModels::gemma_four_norms() {
    const ModelSpec g = load_model(std::string(MESHWORK_TEST_FIXTURES) + "/hf/gemma2-small.json");
    QVERIFY(g.sandwich_norms);
    ModelSpec two = g;
    two.sandwich_norms = false;
    const LayerGraph four_norms = build_layer_graph(g);
    const LayerGraph two_norms = build_layer_graph(two);
    QCOMPARE(four_norms.params_total - two_norms.params_total, std::int64_t{2} * g.num_layers * g.hidden_size);
    int output_norms = 0;
    for (const Layer& l : four_norms.layers) {
        if (l.kind == LayerKind::Norm && (l.name.ends_with("attention_output_norm") || l.name.ends_with("mlp_output_norm"))) {
            ++output_norms;
            QCOMPARE(l.params, g.hidden_size);
        }
    }
    QCOMPARE(output_norms, 2 * g.num_layers);
    // Kept for the backward: two more norm inputs, e·h each per token.
    cost::ActivationShape a;
    a.tokens = 4096;
    a.hidden = static_cast<double>(g.hidden_size);
    const double base = cost::block_activations(a, false).norm_inputs;
    a.output_norms = true;
    QCOMPARE(cost::block_activations(a, false).norm_inputs, 2.0 * base);
    // Time: the block's norm passes double, nothing else moves.
    const Layout with = make_layout(g, "dgx-h100", 1, 1, 1, 1, 8, 4096);
    Layout without = with;
    without.model = two;
    const cost::LayoutCosts cw = test::costs_of(with), co = test::costs_of(without);
    QVERIFY(cw.dense.fwd.attention_s > co.dense.fwd.attention_s);
    QVERIFY(cw.dense.fwd.mlp_s > co.dense.fwd.mlp_s);
    const double one_norm = cost::memory_s(cw.kernel, 2.0 * 2.0 * static_cast<double>(g.hidden_size) * cw.tokens);
    QVERIFY(std::fabs(cw.dense.fwd.attention_s - co.dense.fwd.attention_s - one_norm) < 1e-12);
    // The export names what Megatron-LM's GPT layer cannot hold.
    bool named = false;
    for (const std::string& lost : megatron_command(with).lost) named = named || lost.find("Gemma's four norms") != std::string::npos;
    QVERIFY(named);
}

void TestHybridModels::round_trip_data() {
    QTest::addColumn<QString>("file");
    for (const char* f : {"qwen3-next-80b-a3b-instruct.config.json", "nemotron-3-nano-30b-a3b.config.json",
                          "nemotron-h-8b-base-8k.config.json", "deepseek-v3.2-exp.config.json", "glm-5.config.json",
                          "minimax-m2.config.json"}) {
        QTest::newRow(f) << QString(f);
    }
}

void TestHybridModels::round_trip() {
    QFETCH(QString, file);
    const ModelSpec m = load_fixture(file.toStdString());
    const ModelSpec again = model_from_hf_config(model_to_hf_config(m), "again.json", m.name);
    QCOMPARE(pattern_of(again), pattern_of(m));
    QCOMPARE(build_layer_graph(again).params_total, build_layer_graph(m).params_total);
    QVERIFY(again == m);
}

void TestHybridModels::pattern_errors() {
    bool named = false;
    try {
        (void)block_kinds_from_pattern("M*-X", "s.sh", "--hybrid-override-pattern");
    } catch (const InputError& e) {
        const std::string w = e.what();
        named = w.find("--hybrid-override-pattern") != std::string::npos && w.find("character 3 'X'") != std::string::npos;
    }
    QVERIFY(named);
    Json j = load_json_file(fixture("nemotron-3-nano-30b-a3b.config.json"));
    j.erase("hybrid_override_pattern");
    QVERIFY_EXCEPTION_THROWN((void)model_from_hf_config(j, "n.json", "n"), InputError);
    j["layers_block_type"] = Json::array({"mamba", "moe", "attention", "mlp"});
    const ModelSpec m = model_from_hf_config(j, "n.json", "n");
    QCOMPARE(hybrid_pattern(m), std::string("ME*-"));
}

void TestHybridModels::sparse_attention_flops() {
    // Sparse attention attends min(i + 1, k) keys; its indexer scores all i + 1.
    const ModelSpec m = load_fixture("deepseek-v3.2-exp.config.json");
    const LayerGraph g = build_layer_graph(m);
    const Layer* attn = nullptr;
    for (const auto& l : g.layers) {
        if (l.block == 10 && l.kind == LayerKind::Attention) attn = &l;
    }
    QVERIFY(attn != nullptr);
    QCOMPARE(attn->local_tokens, std::int64_t{2048});
    QCOMPARE(attn->full_context_flops_per_token_per_context, 2.0 * 64 * 129);
    const double short_seq = g.block_forward_flops_per_token(10, 1024, true);
    const double long_seq = g.block_forward_flops_per_token(10, 131072, true);
    // Beyond k the attention term stops growing; the indexer's keeps growing linearly.
    const double growth = long_seq - short_seq;
    const double indexer_growth = attn->full_context_flops_per_token_per_context * (131072 - 1024) / 2.0;
    QVERIFY(growth > indexer_growth);
    QVERIFY(growth < indexer_growth + attn->attention_flops_per_token_per_context * 2048);
}

void TestHybridModels::kind_costs() {
    const ModelSpec n = load_fixture("nemotron-3-nano-30b-a3b.config.json");
    // Block 0 is Mamba-2: H 64, P 64, N 128, G 8, Q 128, conv over 4096 + 2·8·128 channels.
    const cost::MixerKindCost mamba = cost::mixer_kind_cost(n, 0, 2.0);
    QCOMPARE(mamba.scan_flops, 262144.0 + 1048576.0 + 2097152.0 + 4096.0 + 49152.0);
    QCOMPARE(mamba.state_bytes, 4.0 * 64 * 64 * 128 + 2.0 * 3 * 6144);
    QCOMPARE(cost::mixer_kind_cost(n, 1, 2.0).scan_flops, 0.0);  // an MoE layer: no mixer
    const cost::ModelProfile p = cost::build_model_profile(n);
    QCOMPARE(p.moe.mixer_share, 0.0);       // E layers
    QCOMPARE(p.dense.mixer_share, 1.0);     // M and * layers
    QCOMPARE(p.ffn, 0.0);                   // none of which has an MLP
    QCOMPARE(p.params_total, static_cast<double>(build_layer_graph(n).params_total));
    // Six of the 29 dense-kind layers attend; the rest scan.
    QVERIFY(p.dense.scan_flops > 0 && p.dense.score_flops_per_context > 0);
    // Gated DeltaNet: the scan does not grow with the context; full attention's scores do.
    const ModelSpec q = load_fixture("qwen3-next-80b-a3b-instruct.config.json");
    const cost::MixerKindCost gdn = cost::mixer_kind_cost(q, 0, 2.0);
    QVERIFY(gdn.scan_flops > 0 && gdn.state_bytes == 4.0 * 32 * 128 * 128 + 2.0 * 3 * (2 * 2048 + 4096));
    const double f4k = cost::model_flops_per_token(cost::build_model_profile(q), 4096);
    const double f32k = cost::model_flops_per_token(cost::build_model_profile(q), 32768);
    // Only the 12 attention layers grow: 3 × 12 × 2·2·16·256 per token of context (causal /2).
    QCOMPARE(f32k - f4k, 3.0 * 12 * 4.0 * 16 * 256 * (32768 - 4096) / 2.0);
}

QTEST_GUILESS_MAIN(TestHybridModels)
#include "tst_hybrid_models.moc"
