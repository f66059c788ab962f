// The Megatron-LM exports against the upstream facts of docs/upstream-megatron.md, flag by
// flag: every flag is one of Megatron-LM's current argparse (the generated table), and the
// rules validate_args and TransformerConfig enforce hold for a matrix of layouts (bundled
// ones and variants over TP, CP, PP/VPP, EP, ZeRO, uneven splits, MoE expert bias).
#include <QtTest>

#include <map>

#include "core/common/resources.h"
#include "core/export/megatron_export.h"
#include "core/export/megatron_flags.h"
#include "core/export/pipeline_layout.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"

using namespace meshwork;

namespace {

Layout bundled(const std::string& name) { return load_layout(resource_dir() + "/layouts/" + name + ".json"); }

struct Variant {
    std::string name;
    Layout layout;
};

std::vector<Variant> matrix() {
    std::vector<Variant> out;
    for (const auto& name : list_presets(PresetKind::Layout)) out.push_back({name, bundled(name)});
    const Layout base = bundled("llama3-70b-h100-64");  // tp 8, pp 4, dp 2
    auto add = [&](const std::string& name, auto&& edit) {
        Layout l = base;
        edit(l);
        out.push_back({name, l});
    };
    add("zero3-fsdp", [](Layout& l) { l.training.zero_stage = 3; });
    add("zero2-fsdp-tp1", [](Layout& l) {
        l.parallel.mesh.tp = 1;
        l.parallel.mesh.dp = 16;
        l.parallel.sequence_parallel = false;
        l.training.zero_stage = 2;
    });
    add("cp2-tp1", [](Layout& l) {
        l.parallel.mesh.tp = 1;
        l.parallel.mesh.cp = 2;
        l.parallel.mesh.dp = 8;
        l.parallel.sequence_parallel = false;
    });
    add("tp1-cp1", [](Layout& l) {
        l.parallel.mesh.tp = 1;
        l.parallel.mesh.dp = 16;
        l.parallel.sequence_parallel = false;
    });
    add("uneven", [](Layout& l) { l.placement.layers_per_stage = {19, 21, 19, 21}; });
    add("uneven-vpp2", [](Layout& l) {
        l.parallel.vpp = 2;
        l.training.schedule = Schedule::Interleaved;
        l.placement.layers_per_stage = {9, 10, 10, 11, 11, 10, 10, 9};
    });
    add("uneven-ranks-vpp2", [](Layout& l) {  // --decoder-first/last 16 with vpp 2
        l.parallel.vpp = 2;
        l.training.schedule = Schedule::Interleaved;
        l.placement.layers_per_stage = {8, 12, 12, 8, 8, 12, 12, 8};
    });
    add("accounted-pp3-vpp3", [](Layout& l) {  // 80 + the embedding over 3 × 3 chunks
        l.gpus = 48;
        l.parallel.mesh.pp = 3;
        l.parallel.vpp = 3;
        l.training.schedule = Schedule::Interleaved;
        l.placement.layers_per_stage = {8, 9, 9, 9, 9, 9, 9, 9, 9};
    });
    add("vpp2-even", [](Layout& l) {
        l.parallel.vpp = 2;
        l.training.schedule = Schedule::Interleaved;
        l.placement.layers_per_stage.clear();
    });
    add("full-recompute", [](Layout& l) { l.training.recompute = Recompute::Full; });
    Layout ds = bundled("mixtral-8x7b-h100-64");
    ds.model = load_model("deepseek-v3");
    ds.model_ref = "deepseek-v3";
    ds.placement = {};  // 61 layers: Meshwork's balanced split over the 4 stages
    out.push_back({"deepseek-v3-expert-bias", ds});
    // The flex dispatcher with HybridEP and the MoE all-to-all overlap, which needs virtual
    // stages with pp > 1 (TransformerConfig.__post_init__ checks both).
    Layout flex = bundled("mixtral-8x7b-h100-64");
    flex.parallel.vpp = 2;
    flex.training.schedule = Schedule::Interleaved;
    flex.placement = {};
    flex.parallel.moe_dispatcher = MoeDispatcher::Flex;
    flex.parallel.moe_flex_backend = MoeFlexBackend::HybridEP;
    flex.parallel.moe_a2a_overlap = true;
    out.push_back({"mixtral-flex-hybridep-a2a-overlap", flex});
    return out;
}

std::map<std::string, std::string> args_of(const MegatronCommand& c) {
    std::map<std::string, std::string> m;
    for (const auto& [flag, value] : c.args) m[flag] = value;
    return m;
}

bool env_has(const MegatronCommand& c, const std::string& name, const std::string& value) {
    for (const auto& e : c.env) {
        if (e[0] == name && e[1] == value) return true;
    }
    return false;
}

}  // namespace

class TestMegatronUpstream : public QObject {
    Q_OBJECT
private slots:
    void exports_follow_upstream_data();
    void exports_follow_upstream();
};

void TestMegatronUpstream::exports_follow_upstream_data() {
    QTest::addColumn<int>("row");
    const auto all = matrix();
    for (std::size_t i = 0; i < all.size(); ++i) QTest::newRow(all[i].name.c_str()) << static_cast<int>(i);
}

void TestMegatronUpstream::exports_follow_upstream() {
    QFETCH(int, row);
    const Variant v = matrix()[static_cast<std::size_t>(row)];
    const Layout& l = v.layout;
    QVERIFY(validate_layout(l, v.name).valid());
    const MegatronCommand c = megatron_command(l);
    const auto args = args_of(c);
    // Every flag is Megatron-LM's (arguments.py or a config dataclass at the pinned commit).
    for (const auto& [flag, value] : c.args) {
        QVERIFY2(megatron_upstream_flag_source(flag) != nullptr, qPrintable(QString::fromStdString(flag)));
    }
    const auto& m = l.parallel.mesh;
    const bool fsdp = l.training.zero_stage >= 2;
    // arguments.py:1476: TP or CP > 1 needs CUDA_DEVICE_MAX_CONNECTIONS=1 (before Blackwell),
    // except with FSDP; arguments.py:1166: Megatron-FSDP refuses 1.
    QCOMPARE(env_has(c, "CUDA_DEVICE_MAX_CONNECTIONS", "1"), (m.tp > 1 || m.cp > 1) && !fsdp);
    // arguments.py:1169: Megatron-FSDP needs the fsdp_dtensor checkpoint format.
    if (fsdp) {
        QCOMPARE(QString::fromStdString(args.at("--ckpt-format")), QString("fsdp_dtensor"));
        QVERIFY(args.count("--use-megatron-fsdp") == 1);
    } else {
        QVERIFY(args.count("--ckpt-format") == 0);
    }
    // transformer_config.py:2617: expert bias only with sigmoid (or sqrtsoftplus) scores.
    if (args.count("--moe-router-enable-expert-bias") != 0) {
        QCOMPARE(QString::fromStdString(args.at("--moe-router-score-function")), QString("sigmoid"));
    }
    // arguments.py:929: at most one of the virtual-stage and layout flags; arguments.py:941:
    // the layout's chunks divide by pp; without a split flag the layers divide by pp.
    const int vflags = static_cast<int>(args.count("--num-layers-per-virtual-pipeline-stage") +
                                        args.count("--num-virtual-stages-per-pipeline-rank") +
                                        args.count("--pipeline-model-parallel-layout"));
    QVERIFY(vflags <= 1);
    if (args.count("--pipeline-model-parallel-layout") != 0) {
        QVERIFY(args.count("--decoder-first-pipeline-num-layers") == 0);
        PipelineLayout p;
        std::string error;
        QVERIFY2(parse_pipeline_layout(args.at("--pipeline-model-parallel-layout"), m.pp, p, error), error.c_str());
        QCOMPARE(p.layers_per_chunk, l.stage_layers());
        QCOMPARE(p.vpp, l.parallel.vpp);
        // pipeline_parallel_layer_layout.py:109: as many m as --mtp-num-layers.
        QCOMPARE(p.mtp_layers, l.model.mtp_layers);
    } else if (args.count("--decoder-first-pipeline-num-layers") + args.count("--decoder-last-pipeline-num-layers") == 0 &&
               m.pp > 1) {
        // transformer_config.py:2382-2415: the layers, the accounted embedding and loss
        // counted, divide by pp and each rank's by vpp.
        const int counted = l.model.num_layers +
                            static_cast<int>(args.count("--account-for-embedding-in-pipeline-split") +
                                             args.count("--account-for-loss-in-pipeline-split"));
        QCOMPARE(counted % m.pp, 0);
        QCOMPARE((counted / m.pp) % l.parallel.vpp, 0);
    } else if (l.parallel.vpp > 1) {
        // arguments.py:954-956: uneven ranks with virtual stages need this form of vpp.
        QVERIFY(args.count("--num-virtual-stages-per-pipeline-rank") == 1);
    }
    // Nothing the layout holds is lost for these layouts.
    QVERIFY2(c.lost.empty(), qPrintable(QString::fromStdString(c.lost.empty() ? "" : c.lost.front())));
}

QTEST_GUILESS_MAIN(TestMegatronUpstream)
#include "tst_megatron_upstream.moc"
