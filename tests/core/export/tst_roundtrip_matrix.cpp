// Issue 34 item 10: every format, over the bundled layouts and a matrix of variants (TP, PP,
// VPP, CP, EP, ZeRO, recompute, offload, precision): export, import, and the layout comes
// back equal, or every field that differs is one the export declared lost. An export that
// refuses (as the framework itself would) says why; a re-import must never be refused.
#include <QtTest>

#include <functional>
#include <map>

#include "core/common/error.h"
#include "core/common/resources.h"
#include "core/export/canonical_layout.h"
#include "core/export/exporter.h"
#include "core/export/importer.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_validate.h"

using namespace meshwork;
using Json = nlohmann::json;

namespace {

struct Case {
    std::string name;
    Layout layout;
};

Layout from_model(const std::string& model, const std::string& cluster, int gpus, LayoutOverrides o) {
    o.model = model;
    o.cluster = cluster;
    o.gpus = gpus;
    Layout l = build_layout(std::nullopt, o);
    l.name = "matrix";
    l.description = "round-trip matrix";
    return l;
}

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const auto& name : list_presets(PresetKind::Layout)) {
        out.push_back({name, build_layout(resource_dir() + "/layouts/" + name + ".json", {})});
    }
    struct Variant {
        const char* name;
        const char* model;
        int gpus;
        std::function<void(LayoutOverrides&)> set;
        std::function<void(Layout&)> after = nullptr;
    };
    const std::vector<Variant> variants = {
        {"tp2-sp", "llama3-8b", 8, [](LayoutOverrides& o) { o.tp = 2; o.sequence_parallel = true; o.gbs = 32; }},
        {"tp2-pp2", "llama3-8b", 16, [](LayoutOverrides& o) { o.tp = 2; o.pp = 2; o.gbs = 32; }},
        {"pp4-vpp2", "llama3-8b", 8, [](LayoutOverrides& o) { o.pp = 4; o.vpp = 2; o.gbs = 32; }},
        {"cp2-zero3", "llama3-8b", 8, [](LayoutOverrides& o) { o.cp = 2; o.zero = 3; o.gbs = 16; }},
        {"zero1", "llama3-8b", 8, [](LayoutOverrides& o) { o.zero = 1; o.gbs = 16; }},
        {"zero2", "llama3-8b", 8, [](LayoutOverrides& o) { o.zero = 2; o.gbs = 16; }},
        {"zero3-full", "llama3-8b", 8, [](LayoutOverrides& o) { o.zero = 3; o.recompute = "full"; o.gbs = 16; }},
        {"selective", "llama3-8b", 8, [](LayoutOverrides& o) { o.recompute = "selective"; o.gbs = 16; }},
        {"fp8-tp2", "llama3-8b", 8, [](LayoutOverrides& o) { o.tp = 2; o.dtype = "fp8"; o.gbs = 16; }},
        {"fp32", "llama3-8b", 8, [](LayoutOverrides& o) { o.dtype = "fp32"; o.gbs = 16; }},
        {"ep4", "mixtral-8x7b", 16, [](LayoutOverrides& o) { o.ep = 4; o.etp = 1; o.zero = 1; o.gbs = 32; }},
        {"ep2-tp2", "mixtral-8x7b", 16, [](LayoutOverrides& o) { o.tp = 2; o.ep = 2; o.etp = 1; o.gbs = 32; }},
        {"offload-zero3", "llama3-8b", 8, [](LayoutOverrides& o) { o.zero = 3; o.gbs = 16; },
         [](Layout& l) {
             l.training.offload_optimizer = Offload::Cpu;
             l.training.offload_params = Offload::Cpu;
         }},
        // Hybrid sharding (training.zero_replicas): Megatron's distributed-optimizer
        // instances, torchtitan's HSDP, DeepSpeed's MiCS (ZeRO-3, data parallel only).
        {"hsdp-zero3", "llama3-8b", 16, [](LayoutOverrides& o) { o.zero = 3; o.zero_replicas = 2; o.gbs = 32; }},
        {"hsdp-zero1-tp2", "llama3-8b", 16, [](LayoutOverrides& o) { o.tp = 2; o.zero = 1; o.zero_replicas = 4; o.gbs = 32; }},
        {"hsdp-ep4", "mixtral-8x7b", 16, [](LayoutOverrides& o) { o.ep = 4; o.etp = 1; o.zero = 1; o.zero_replicas = 2; o.gbs = 32; }},
        {"offload-opt-zero2", "llama3-8b", 8, [](LayoutOverrides& o) { o.zero = 2; o.gbs = 16; },
         [](Layout& l) { l.training.offload_optimizer = Offload::Cpu; }},
    };
    for (const auto& v : variants) {
        LayoutOverrides o;
        v.set(o);
        Layout l = from_model(v.model, "dgx-h100", v.gpus, o);
        if (v.after) v.after(l);
        out.push_back({v.name, l});
    }
    return out;
}

// Where a field of the layout JSON differs, by dotted path.
void differences(const Json& a, const Json& b, const std::string& path, std::vector<std::string>& out) {
    if (a.is_object() && b.is_object()) {
        for (const auto& [k, v] : a.items()) {
            differences(v, b.contains(k) ? b.at(k) : Json(), path.empty() ? k : path + "." + k, out);
        }
        for (const auto& [k, v] : b.items()) {
            if (!a.contains(k)) out.push_back(path.empty() ? k : path + "." + k);
        }
        return;
    }
    if (a != b) out.push_back(path);
}

// The words a lost sentence uses for each field (a field differs only where a sentence names it).
const std::map<std::string, std::vector<std::string>>& declared_words() {
    static const std::map<std::string, std::vector<std::string>> kWords = {
        {"training.cross_entropy", {"loss", "cross"}},
        {"training.attention_kernel", {"attention_kernel", "attention kernel"}},
        {"training.recompute", {"recompute", "checkpoint"}},
        {"training.recompute_num_layers", {"recompute"}},
        {"training.recompute_modules", {"recompute"}},
        {"training.zero_stage", {"ZeRO", "zero"}},
        {"training.zero_replicas", {"replica", "shard group", "HSDP"}},
        {"training.fsdp_fp32_shards", {"fsdp_fp32_shards"}},
        {"training.offload", {"offload"}},
        {"training.dtype", {"fp16", "tf32", "fp8", "precision"}},
        {"training.grad_reduce_in_bf16", {"bf16", "reduc"}},
        {"training.fused_elementwise", {"fused", "compile", "eager"}},
        {"training.flash_attention", {"attention"}},
        {"training.moe_capacity_factor", {"capacity"}},
        {"training.schedule", {"schedule", "GPipe", "interleav"}},
        {"parallel.overlap", {"overlap"}},
        {"parallel.tp_comm_overlap", {"overlap"}},
        {"parallel.sequence_parallel", {"sequence"}},
        {"parallel.moe", {"dispatcher", "overlap", "MoE"}},
        {"parallel.order", {"order"}},
        {"parallel.etp", {"ETP", "expert tensor", "etp"}},
        {"parallel.ep", {"EP", "expert"}},
        {"parallel.tp", {"tensor", "TP", "tp "}},
        {"parallel.cp", {"context", "cp", "CP", "Ulysses"}},
        {"parallel.pp", {"pipeline"}},
        {"parallel.dp", {"data-parallel", "ZeRO", "replicat", "shard"}},
        {"parallel.vpp", {"interleav", "virtual", "schedule"}},
        {"placement", {"split", "stage", "placement", "expert"}},
        {"model", {"model"}},
    };
    return kWords;
}

// The longest prefix of `path` in the table names the words.
bool declared(const std::string& path, const std::vector<std::string>& lost) {
    const std::vector<std::string>* words = nullptr;
    std::size_t best = 0;
    for (const auto& [prefix, w] : declared_words()) {
        if (path.rfind(prefix, 0) == 0 && prefix.size() > best) {
            best = prefix.size();
            words = &w;
        }
    }
    if (words == nullptr) return false;
    for (const auto& sentence : lost) {
        for (const auto& w : *words) {
            if (sentence.find(w) != std::string::npos) return true;
        }
    }
    return false;
}

ImportOptions import_options(const Layout& l, ExportFormat f) {
    ImportOptions o;
    o.cluster = l.cluster_ref;
    o.name = l.name;
    o.description = l.description;
    if (f == ExportFormat::DeepSpeed) {
        // A DeepSpeed config names neither the model nor the sequence, nor the stages of
        // the script's PipelineModule (docs/export.md).
        o.model = l.model_ref.empty() ? std::nullopt : std::optional<std::string>(l.model_ref);
        o.seq = l.training.seq_length;
        if (l.parallel.mesh.pp > 1) o.pipeline_stages = l.parallel.mesh.pp;
        o.gpus = l.gpus;  // the world the user launches it on
    }
    return o;
}

}  // namespace

class TestRoundTripMatrix : public QObject {
    Q_OBJECT
private slots:
    void every_format_data();
    void every_format();
};

void TestRoundTripMatrix::every_format_data() {
    QTest::addColumn<int>("format");
    QTest::addColumn<int>("index");
    const auto all = cases();
    for (ExportFormat f : {ExportFormat::Megatron, ExportFormat::DeepSpeed, ExportFormat::Torchtitan,
                           ExportFormat::TorchtitanToml}) {
        for (std::size_t i = 0; i < all.size(); ++i) {
            QTest::newRow((to_string(f) + "/" + all[i].name).c_str()) << static_cast<int>(f) << static_cast<int>(i);
        }
    }
}

void TestRoundTripMatrix::every_format() {
    QFETCH(int, format);
    QFETCH(int, index);
    const auto f = static_cast<ExportFormat>(format);
    const Case c = cases()[static_cast<std::size_t>(index)];
    if (!validate_layout(c.layout, c.name).valid()) QSKIP("not a valid layout on this cluster");
    ExportResult e;
    try {
        e = export_layout(c.layout, f);
    } catch (const InputError& refused) {
        // The framework itself refuses the layout (DeepSpeed's pipeline with ZeRO-2/3): the
        // export says why, and there is nothing to re-import.
        QVERIFY(!refused.issues().empty() && !refused.issues().front().message.empty());
        return;
    }
    ImportResult r;
    try {
        r = import_config(e.text, "exported", ImportFormat::Auto, import_options(c.layout, f));
    } catch (const InputError& refused) {
        std::string why;
        for (const auto& i : refused.issues()) why += "\n  " + i.to_string();
        QFAIL(qPrintable(QString::fromStdString("the export does not re-import:" + why + "\nexported:\n" + e.text)));
    }
    std::vector<std::string> diff;
    differences(layout_to_json(canonical_layout(c.layout)), layout_to_json(r.layout), "", diff);
    std::string undeclared;
    for (const auto& path : diff) {
        if (path == "name" || path == "description") continue;
        if (e.lossless() || !declared(path, e.lost)) undeclared += "\n  " + path;
    }
    std::string lost;
    for (const auto& l : e.lost) lost += "\n  " + l;
    QVERIFY2(undeclared.empty(), qPrintable(QString::fromStdString("fields changed without a declared loss:" +
                                                                   undeclared + "\nlost:" + lost)));
}

QTEST_GUILESS_MAIN(TestRoundTripMatrix)
#include "tst_roundtrip_matrix.moc"
