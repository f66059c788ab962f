// Model presets and Hugging Face config parsing: parameter counts against published totals.
#include <QtTest>

#include <cmath>

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/model/hf_config.h"
#include "core/model/layer_graph.h"

using namespace meshwork;

class TestModel : public QObject {
    Q_OBJECT
private slots:
    void published_totals_data();
    void published_totals();
    void mixtral_active_params();
    void deepseek_v3_active_params();
    void llama3_8b_layer_by_layer();
    void forward_flops_match_hand_computation();
    void hf_dropout();
    void hf_families_data();
    void hf_families();
    void hf_bad_configs_data();
    void hf_bad_configs();
    void hf_round_trip();
    void hf_round_trip_new_families();
    void hf_rope_norm_window_mtp();
    void unknown_preset_lists_known();
};

void TestModel::published_totals_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<double>("published");
    // Published totals: Meta model cards (Llama 3 8B 8.03B, 70B 70.6B; Llama 3.1 405B 405.9B
    // in "The Llama 3 Herd of Models", 2024), Mistral AI (Mixtral 8x7B 46.7B total),
    // Narayanan et al. 2021 / Brown et al. 2020 (GPT-3 174.6B), DeepSeek-V3 technical report
    // (671B total without the MTP module), EleutherAI (GPT-NeoX-20B 20.55B).
    QTest::newRow("llama3-8b") << "llama3-8b" << 8.03e9;
    QTest::newRow("llama3-70b") << "llama3-70b" << 70.6e9;
    QTest::newRow("llama3.1-405b") << "llama3.1-405b" << 405.9e9;
    QTest::newRow("mixtral-8x7b") << "mixtral-8x7b" << 46.7e9;
    QTest::newRow("gpt3-175b") << "gpt3-175b" << 174.6e9;
    QTest::newRow("deepseek-v3") << "deepseek-v3" << 671e9;
    QTest::newRow("gpt-neox-20b") << "gpt-neox-20b" << 20.55e9;
    QTest::newRow("mistral-7b") << "mistral-7b" << 7.24e9;
    QTest::newRow("qwen2-7b") << "qwen2-7b" << 7.62e9;
}

void TestModel::published_totals() {
    QFETCH(QString, preset);
    QFETCH(double, published);
    const ModelSpec m = load_model(preset.toStdString());
    const LayerGraph g = build_layer_graph(m);
    const double rel = std::fabs(static_cast<double>(g.params_total) - published) / published;
    QVERIFY2(rel < 0.005, qPrintable(QString("%1: %2 vs %3 (%4%)")
                                         .arg(preset).arg(g.params_total).arg(published)
                                         .arg(rel * 100)));
}

void TestModel::mixtral_active_params() {
    const LayerGraph g = build_layer_graph(load_model("mixtral-8x7b"));
    // Mistral AI: 12.9B active parameters per token (top-2 of 8 experts).
    QVERIFY(std::fabs(static_cast<double>(g.params_active) - 12.9e9) / 12.9e9 < 0.005);
}

void TestModel::deepseek_v3_active_params() {
    const ModelSpec m = load_model("deepseek-v3");
    const LayerGraph g = build_layer_graph(m);
    QCOMPARE(m.attention_kind(), std::string("MLA"));
    QCOMPARE(m.num_moe_blocks(), 58);  // 61 layers, the first 3 dense
    // DeepSeek-V3 report: 37B activated per token. The report rounds; allow 2%.
    QVERIFY2(std::fabs(static_cast<double>(g.params_active) - 37e9) / 37e9 < 0.02,
             qPrintable(QString::number(g.params_active)));
}

void TestModel::llama3_8b_layer_by_layer() {
    const ModelSpec m = load_model("llama3-8b");
    QCOMPARE(m.head_dim, 128);
    QCOMPARE(m.attention_kind(), std::string("GQA"));
    const LayerGraph g = build_layer_graph(m);
    // Hand computation: q,o 4096², k,v 4096×1024 each; MLP 3×4096×14336; norms 4096 each.
    const std::int64_t attn = 2 * 4096LL * 4096 + 2 * 4096LL * 1024;
    const std::int64_t mlp = 3 * 4096LL * 14336;
    for (const auto& l : g.layers) {
        if (l.block != 5) continue;
        if (l.kind == LayerKind::Attention) QCOMPARE(l.params, attn);
        if (l.kind == LayerKind::Mlp) QCOMPARE(l.params, mlp);
        if (l.kind == LayerKind::Norm) QCOMPARE(l.params, std::int64_t{4096});
    }
    const std::int64_t expected = 2 * 128256LL * 4096 + 32 * (attn + mlp + 2 * 4096) + 4096;
    QCOMPARE(g.params_total, expected);
}

void TestModel::forward_flops_match_hand_computation() {
    const ModelSpec m = load_model("gpt3-175b");
    const LayerGraph g = build_layer_graph(m);
    // Narayanan et al. 2021, eq. 3 counts 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) FLOPs per
    // iteration with full recomputation (4 passes over the blocks, 3 over the LM head), with
    // QK^T and AV over the full sequence. One forward pass per token is therefore
    // 24·l·h²·(1 + s/(6h)) for the blocks plus 2·V·h for the LM head.
    const double l = 96, h = 12288, s = 2048, V = 50257;
    const double published = 24 * l * h * h * (1 + s / (6 * h)) + 2 * V * h;
    const double ours = g.forward_flops_per_token(2048, /*causal=*/false);
    QVERIFY2(std::fabs(ours - published) / published < 0.005,
             qPrintable(QString("%1 vs %2").arg(ours).arg(published)));
    // Causal masking halves exactly the attention term.
    const double causal = g.forward_flops_per_token(2048, true);
    const double attention_full = 4 * l * s * h;  // 2·2·s·h per layer per token
    QVERIFY(std::fabs((ours - causal) - attention_full / 2) / attention_full < 1e-9);
}

// Dropout as each config names it: GPT-2's resid_pdrop / attn_pdrop (GPT2Config defaults
// 0.1 when absent), Llama's attention_dropout (0.0) with no hidden dropout field.
void TestModel::hf_dropout() {
    const ModelSpec llama = load_model("llama3.1-405b");
    QCOMPARE(llama.hidden_dropout, 0.0);
    QCOMPARE(llama.attention_dropout, 0.0);
    const ModelSpec gpt3 = load_model("gpt3-175b");  // resid_pdrop 0.1, attn_pdrop 0.1
    QCOMPARE(gpt3.hidden_dropout, 0.1);
    QCOMPARE(gpt3.attention_dropout, 0.1);
    const std::string g = R"({"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":2,"vocab_size":10,"n_positions":16)";
    const ModelSpec plain = model_from_hf_config(parse_json_text(g + "}", "g.json"), "g.json", "g");
    QCOMPARE(plain.hidden_dropout, 0.1);
    const ModelSpec off = model_from_hf_config(parse_json_text(g + R"(,"resid_pdrop":0,"attn_pdrop":0.05})", "g.json"),
                                               "g.json", "g");
    QCOMPARE(off.hidden_dropout, 0.0);
    QCOMPARE(off.attention_dropout, 0.05);
    QVERIFY_THROWS_EXCEPTION(InputError, model_from_hf_config(parse_json_text(g + R"(,"resid_pdrop":1.5})", "g.json"),
                                                              "g.json", "g"));
}

void TestModel::hf_families_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("family");
    QTest::addColumn<qint64>("params");
    // Small configs of each family, counted by hand in the fixture's "_expected_params".
    for (const char* f : {"qwen2-small", "qwen2moe-small", "gpt2-no-model-type", "neox-small",
                          "deepseek-small", "mistral-head-dim", "gemma2-small", "deepseek-moe-v1-small", "qwen3moe-small"}) {
        const std::string path = std::string(MESHWORK_TEST_FIXTURES) + "/hf/" + f + ".json";
        const Json j = load_json_file(path);
        QTest::newRow(f) << QString::fromStdString(path)
                         << QString::fromStdString(j.value("_expected_family", ""))
                         << static_cast<qint64>(j.value("_expected_params", 0LL));
    }
}

void TestModel::hf_families() {
    QFETCH(QString, file);
    QFETCH(QString, family);
    QFETCH(qint64, params);
    const ModelSpec m = load_model(file.toStdString());
    QCOMPARE(QString::fromStdString(m.family), family);
    QCOMPARE(static_cast<qint64>(build_layer_graph(m).params_total), params);
}

void TestModel::hf_bad_configs_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("field");
    QTest::newRow("string hidden") << R"({"model_type":"llama","hidden_size":"big","num_hidden_layers":2,"num_attention_heads":2,"intermediate_size":8,"vocab_size":10})" << "hidden_size";
    QTest::newRow("1e308 layers") << R"({"model_type":"llama","hidden_size":8,"num_hidden_layers":1e308,"num_attention_heads":2,"intermediate_size":8,"vocab_size":10})" << "num_hidden_layers";
    QTest::newRow("negative vocab") << R"({"model_type":"llama","hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"intermediate_size":8,"vocab_size":-1})" << "vocab_size";
    QTest::newRow("kv not dividing") << R"({"model_type":"llama","hidden_size":12,"num_hidden_layers":2,"num_attention_heads":6,"num_key_value_heads":4,"intermediate_size":8,"vocab_size":10})" << "num_key_value_heads";
    QTest::newRow("unknown family") << R"({"model_type":"rwkv","hidden_size":8})" << "model_type";
    QTest::newRow("missing layers") << R"({"model_type":"llama","hidden_size":8,"num_attention_heads":2,"intermediate_size":8,"vocab_size":10})" << "num_hidden_layers";
    QTest::newRow("top-k > experts") << R"({"model_type":"mixtral","hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"intermediate_size":8,"vocab_size":10,"num_local_experts":2,"num_experts_per_tok":4})" << "num_experts_per_tok";
    QTest::newRow("fractional heads") << R"({"model_type":"llama","hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2.5,"intermediate_size":8,"vocab_size":10})" << "num_attention_heads";
    QTest::newRow("not an object") << R"([1,2,3])" << "(top level)";
}

void TestModel::hf_bad_configs() {
    QFETCH(QString, json);
    QFETCH(QString, field);
    try {
        model_from_hf_config(parse_json_text(json.toStdString(), "cfg.json"), "cfg.json", "x");
        QFAIL("no error");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.issues().front().field), field);
        QCOMPARE(QString::fromStdString(e.issues().front().file), QString("cfg.json"));
    }
}

void TestModel::hf_round_trip() {
    for (const char* preset : {"llama3-8b", "mixtral-8x7b", "deepseek-v3", "gpt3-175b",
                               "qwen2-57b-a14b", "gpt-neox-20b", "tiny-moe"}) {
        const ModelSpec m = load_model(preset);
        ModelSpec back = model_from_hf_config(model_to_hf_config(m), "rt", m.name);
        QVERIFY2(back == m, preset);
    }
}

void TestModel::hf_round_trip_new_families() {
    for (const char* f : {"gemma2-small", "deepseek-moe-v1-small", "qwen3moe-small"}) {
        const ModelSpec m = load_model(std::string(MESHWORK_TEST_FIXTURES) + "/hf/" + f + ".json");
        QVERIFY2(model_from_hf_config(model_to_hf_config(m), "rt", m.name) == m, f);
    }
}

// The fields that change the model without changing its shapes, read from the presets'
// config.json (values as published in each model's config).
void TestModel::hf_rope_norm_window_mtp() {
    const ModelSpec l31 = load_model("llama3.1-405b");
    QCOMPARE(l31.rope.theta, 500000.0);
    QCOMPARE(QString::fromStdString(l31.rope.scaling), QString("llama3"));
    QCOMPARE(l31.rope.factor, 8.0);
    QCOMPARE(l31.norm_eps, 1e-5);
    const ModelSpec ds = load_model("deepseek-v3");
    QCOMPARE(QString::fromStdString(ds.rope.scaling), QString("yarn"));
    QCOMPARE(ds.rope.factor, 40.0);
    QCOMPARE(ds.mtp_layers, 1);
    QCOMPARE(QString::fromStdString(ds.moe.router_score), QString("sigmoid"));
    QCOMPARE(ds.norm_eps, 1e-6);
    QCOMPARE(load_model("gpt-neox-20b").rope.percent, 0.25);
    QCOMPARE(load_model("mistral-7b").sliding_window, std::int64_t{4096});
    QCOMPARE(load_model("qwen2-7b").sliding_window, std::int64_t{0});  // use_sliding_window false
    QCOMPARE(load_model("gpt3-175b").rope.theta, 10000.0);            // learned positions: default
    const std::string q3 = R"({"model_type":"qwen3","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,
                               "num_key_value_heads":1,"head_dim":4,"intermediate_size":16,"vocab_size":10)";
    const ModelSpec qwen3 = model_from_hf_config(parse_json_text(q3 + "}", "q3.json"), "q3.json", "q3");
    QVERIFY(qwen3.qk_norm);
    QCOMPARE(qwen3.norm_eps, 1e-6);  // transformers' default for RMSNorm families
    QVERIFY_THROWS_EXCEPTION(InputError,
                             model_from_hf_config(parse_json_text(q3 + R"(,"rope_scaling":{"rope_type":"dynamic","factor":2}})",
                                                                  "q3.json"),
                                                  "q3.json", "q3"));
}

void TestModel::unknown_preset_lists_known() {
    try {
        load_model("llama9");
        QFAIL("no error");
    } catch (const InputError& e) {
        const QString msg = QString::fromStdString(e.what());
        QVERIFY(msg.contains("unknown model preset 'llama9'"));
        QVERIFY(msg.contains("llama3-8b"));
    }
}

QTEST_GUILESS_MAIN(TestModel)
#include "tst_model.moc"
