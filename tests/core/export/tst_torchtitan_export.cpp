// torchtitan exports against the upstream facts recorded in docs/export.md: every key of the
// golden exports is a row of its target with that type and constraint, and the rule rows
// (DDP only as the sole axis on v0.2.x, the expert mesh, ETP, CUDA graphs, converter names)
// hold for the goldens and for a matrix of layouts; lossless ones round-trip.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <toml++/toml.h>

#include "core/common/error.h"
#include "core/common/resources.h"
#include "core/export/canonical_layout.h"
#include "core/export/exporter.h"
#include "core/export/importer.h"
#include "core/export/torchtitan_config.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_validate.h"

using namespace meshwork;

namespace {

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Fact {
    std::string type, constraint, source;
};
using Facts = std::map<std::string, Fact>;  // "v0.2 parallelism.x" -> fact

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(' ');
    const auto b = s.find_last_not_of(' ');
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

Facts load_facts() {
    const std::string doc = read(std::string(MESHWORK_RESOURCES_DIR) + "/../docs/export.md");
    const auto a = doc.find("<!-- torchtitan-facts:begin -->");
    const auto b = doc.find("<!-- torchtitan-facts:end -->");
    Facts facts;
    if (a == std::string::npos || b == std::string::npos) return facts;
    std::istringstream in(doc.substr(a, b - a));
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("| v0.2 |", 0) != 0 && line.rfind("| main |", 0) != 0) continue;
        std::vector<std::string> cells;
        std::string cell;
        std::istringstream row(line.substr(1));
        while (std::getline(row, cell, '|')) cells.push_back(trim(cell));
        if (cells.size() < 5) continue;
        facts[cells[0] + " " + cells[1]] = {cells[2], cells[3], cells[4]};
    }
    return facts;
}

// A value checked against a row: its type, then ">= N" or `one of "a" "b"`.
std::string check_value(const Facts& facts, const std::string& target, const std::string& key,
                        const std::string& type, long long i, const std::string& s) {
    const auto it = facts.find(target + " " + key);
    if (it == facts.end()) return key + ": not a " + target + " field of the facts table";
    const Fact& f = it->second;
    if (f.type != type) return key + ": " + type + ", the table says " + f.type;
    if (f.source.find(".py:") == std::string::npos && f.source.find(".sh:") == std::string::npos) {
        return key + ": no file:line source";
    }
    if (f.constraint.rfind(">= ", 0) == 0 && i < std::stoll(f.constraint.substr(3))) {
        return key + " = " + std::to_string(i) + " breaks " + f.constraint;
    }
    if (f.constraint.rfind("one of ", 0) == 0 && type == "str" &&
        f.constraint.find("\"" + s + "\"") == std::string::npos) {
        return key + " = \"" + s + "\" is not " + f.constraint;
    }
    return "";
}

struct Degrees {
    long long replicate = 1, shard = -1, tp = 1, pp = 1, cp = 1, ep = 1, etp = 1;
    std::vector<std::string> converters;
    bool cuda_graphs_off = false;
};

// The keys of a v0.2 TOML export, each checked against the table.
std::vector<std::string> check_toml(const Facts& facts, const std::string& text, Degrees& d) {
    std::vector<std::string> errors;
    const toml::table root = toml::parse(text);
    std::function<void(const toml::table&, const std::string&)> walk =
        [&](const toml::table& t, const std::string& prefix) {
            for (const auto& [k, v] : t) {
                const std::string key =
                    prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
                if (v.is_table()) {
                    walk(*v.as_table(), key);
                    continue;
                }
                std::string e;
                if (v.is_integer())
                    e = check_value(facts, "v0.2", key, "int", *v.value<std::int64_t>(), "");
                else if (v.is_string())
                    e = check_value(facts, "v0.2", key, "str", 0, *v.value<std::string>());
                else if (v.is_array()) {
                    e = check_value(facts, "v0.2", key, "list[str]", 0, "");
                    for (const auto& item : *v.as_array()) {
                        const std::string s = *item.value<std::string>();
                        const auto& f = facts.at("v0.2 " + key);
                        if (f.constraint.rfind("one of", 0) == 0 &&
                            f.constraint.find("\"" + s + "\"") == std::string::npos) {
                            e = key + ": \"" + s + "\" is not " + f.constraint;
                        }
                        if (key == "model.converters") d.converters.push_back(s);
                    }
                } else if (v.is_boolean()) {
                    e = check_value(facts, "v0.2", key, "bool", 0, "");
                } else
                    e = key + ": unexpected value type";
                if (!e.empty()) errors.push_back(e);
            }
        };
    walk(root, "");
    const auto get = [&](const char* k, long long& out) {
        if (auto v = root["parallelism"][k].value<std::int64_t>()) out = *v;
    };
    get("data_parallel_replicate_degree", d.replicate);
    get("data_parallel_shard_degree", d.shard);
    get("tensor_parallel_degree", d.tp);
    get("pipeline_parallel_degree", d.pp);
    get("context_parallel_degree", d.cp);
    get("expert_parallel_degree", d.ep);
    get("expert_tensor_parallel_degree", d.etp);
    return errors;
}

// The settings of a main module export, each checked against the table.
std::vector<std::string> check_module(const Facts& facts, const std::string& text, Degrees& d) {
    std::vector<std::string> errors;
    static const std::regex assign(R"(config\.(training|parallelism)\.(\w+) = ([^\n#]+))");
    static const std::regex kwarg(R"(^\s+(\w+)=([^,\n]+),$)");
    static const std::regex ac(R"(config\.activation_checkpoint = ([^\n]+))");
    static const std::regex conv(R"((\w+Converter)\.Config)");
    const auto check = [&](const std::string& key, std::string v) {
        v = trim(v);
        std::string e;
        if (v == "True" || v == "False") {
            e = check_value(facts, "main", key, "bool", 0, "");
            if (key == "training.disable_cuda_graphs") d.cuda_graphs_off = v == "True";
        } else if (v.front() == '"') {
            e = check_value(facts, "main", key, "str", 0, v.substr(1, v.size() - 2));
        } else {
            const long long i = std::stoll(v);
            e = check_value(facts, "main", key, "int", i, "");
            if (key == "parallelism.data_parallel_replicate_degree") d.replicate = i;
            if (key == "parallelism.data_parallel_shard_degree") d.shard = i;
            if (key == "parallelism.tensor_parallel_degree") d.tp = i;
            if (key == "parallelism.pipeline_parallel_degree") d.pp = i;
            if (key == "parallelism.context_parallel_degree") d.cp = i;
            if (key == "parallelism.expert_parallel_degree") d.ep = i;
        }
        if (!e.empty()) errors.push_back(e);
    };
    for (auto it = std::sregex_iterator(text.begin(), text.end(), assign);
         it != std::sregex_iterator(); ++it) {
        check(std::string((*it)[1]) + "." + std::string((*it)[2]), (*it)[3]);
    }
    std::istringstream in(text);
    std::string line;
    bool in_parallelism = false;
    while (std::getline(in, line)) {
        if (line.find("ParallelismConfig(") != std::string::npos)
            in_parallelism = true;
        else if (trim(line) == ")")
            in_parallelism = false;
        std::smatch m;
        if (in_parallelism && std::regex_match(line, m, kwarg))
            check("parallelism." + std::string(m[1]), m[2]);
    }
    std::smatch m;
    if (!std::regex_search(text, m, ac))
        errors.push_back("no activation_checkpoint");
    else if (facts.at("main activation_checkpoint").constraint.find(trim(m[1])) ==
             std::string::npos) {
        errors.push_back("activation_checkpoint = " + std::string(m[1]) + " is not " +
                         facts.at("main activation_checkpoint").constraint);
    }
    for (auto it = std::sregex_iterator(text.begin(), text.end(), conv);
         it != std::sregex_iterator(); ++it) {
        d.converters.push_back((*it)[1]);
        if (facts.at("main converters").constraint.find((*it)[1]) == std::string::npos) {
            errors.push_back(std::string((*it)[1]) + " is not a converter of the table");
        }
    }
    return errors;
}

// The rule rows, checked on the degrees an export wrote.
std::vector<std::string> check_rules(const Facts& facts, bool v02, const Degrees& d, int gpus) {
    std::vector<std::string> e;
    const std::string t = v02 ? "v0.2 " : "main ";
    for (const char* r : {"rule:expert-mesh", "rule:reshard-default"}) {
        if (facts.count(t + r) == 0) e.push_back(t + r + " missing from the table");
    }
    const long long shard = d.shard;
    if (d.replicate * shard * d.tp * d.pp * d.cp != gpus)
        e.push_back("degrees do not multiply to the world size");
    const long long region = shard * d.cp * d.tp;
    if (v02) {
        if (d.ep > 1 && d.etp != 1 && d.etp != d.tp) e.push_back("rule:etp broken");
        if (d.ep > 1 && region % (d.ep * d.etp) != 0)
            e.push_back("rule:expert-mesh broken (empty efsdp)");
        if (d.replicate > 1 && shard == 1 && d.cp == 1 && d.ep == 1 && (d.tp > 1 || d.pp > 1)) {
            e.push_back("rule:ddp-1d broken: DDP with tp/pp > 1");
        }
    } else {
        if (region % d.ep != 0)
            e.push_back("rule:expert-mesh broken: ep does not divide dp_shard·cp·tp");
        if ((d.pp > 1 || d.ep > 1) && !d.cuda_graphs_off) e.push_back("rule:cuda-graphs broken");
    }
    return e;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& i : v) s += "\n  " + i;
    return s;
}

}  // namespace

class TestTorchtitanExport : public QObject {
    Q_OBJECT
  private slots:
    void facts_table_is_there();
    void goldens_match_the_facts();
    void matrix_follows_torchtitan();
    void async_tp_follows_torchtitan();
    void lossy_exports_are_fixed_points();
};

void TestTorchtitanExport::facts_table_is_there() {
    const Facts f = load_facts();
    QVERIFY2(f.size() > 40, "docs/export.md has no torchtitan facts table");
    QVERIFY(f.count("v0.2 rule:ddp-1d") == 1);
    QVERIFY(f.at("v0.2 model.converters").constraint.find("\"quantize.linear.float8\"") !=
            std::string::npos);
    QVERIFY(f.at("v0.2 model.converters").constraint.find("\"float8\"") == std::string::npos);
}

void TestTorchtitanExport::goldens_match_the_facts() {
    const Facts facts = load_facts();
    const std::string dir = std::string(MESHWORK_TEST_FIXTURES) + "/export/golden/";
    int seen = 0;
    for (const auto& name : list_presets(PresetKind::Layout)) {
        const Layout l = load_layout(resource_dir() + "/layouts/" + name + ".json");
        Degrees toml_d, py_d;
        auto errors = check_toml(facts, read(dir + name + ".torchtitan.toml"), toml_d);
        for (auto& e : check_rules(facts, true, toml_d, l.gpus)) errors.push_back("toml: " + e);
        for (auto& e : check_module(facts, read(dir + name + ".torchtitan.py"), py_d))
            errors.push_back("py: " + e);
        for (auto& e : check_rules(facts, false, py_d, l.gpus)) errors.push_back("py: " + e);
        QVERIFY2(errors.empty(), qPrintable(QString::fromStdString(name + ":" + joined(errors))));
        ++seen;
    }
    QVERIFY(seen >= 6);
}

// TP communication overlap is written as async TP, with the model compiled (both targets
// refuse async TP otherwise): every key a row of the table.
void TestTorchtitanExport::async_tp_follows_torchtitan() {
    const Facts facts = load_facts();
    LayoutOverrides o;
    o.tp_comm_overlap = "ring";
    const Layout l = build_layout(resource_dir() + "/layouts/llama3-70b-h100-64.json", o);
    Degrees toml_d, py_d;
    const std::string toml_text = export_layout(l, ExportFormat::TorchtitanToml).text;
    const std::string py_text = export_layout(l, ExportFormat::Torchtitan).text;
    auto errors = check_toml(facts, toml_text, toml_d);
    for (auto& e : check_module(facts, py_text, py_d)) errors.push_back("py: " + e);
    QVERIFY2(errors.empty(), qPrintable(QString::fromStdString(joined(errors))));
    const toml::table root = toml::parse(toml_text);
    QCOMPARE(root["parallelism"]["enable_async_tensor_parallel"].value<bool>(), std::optional<bool>(true));
    QCOMPARE(root["compile"]["enable"].value<bool>(), std::optional<bool>(true));
    QVERIFY(py_text.find("config.compile.enable_async_tensor_parallel = True") != std::string::npos);
    // Without compiling the model torchtitan refuses async TP: so does import.
    std::string uncompiled = toml_text;
    const std::string compiled = "[compile]\nenable = true";
    const auto at = uncompiled.find(compiled);
    QVERIFY(at != std::string::npos);
    uncompiled.replace(at, compiled.size(), "[compile]\nenable = false");
    ImportOptions io;
    io.cluster = "dgx-h100";
    QVERIFY_THROWS_EXCEPTION(InputError, import_config(uncompiled, "x.toml", ImportFormat::Auto, io));
}

void TestTorchtitanExport::matrix_follows_torchtitan() {
    const Facts facts = load_facts();
    int round_trips = 0, cases = 0;
    struct Axes {
        const char* model;
        int gpus, tp, pp, cp, ep, etp;
    };
    const Axes axes[] = {
        {"llama3-8b", 16, 1, 1, 1, 1, 1},    {"llama3-8b", 16, 2, 1, 1, 1, 1},
        {"llama3-8b", 16, 1, 2, 1, 1, 1},    {"llama3-8b", 16, 2, 2, 1, 1, 1},
        {"llama3-8b", 16, 2, 1, 2, 1, 1},    {"llama3-70b", 64, 8, 4, 1, 1, 1},
        {"mixtral-8x7b", 32, 1, 1, 1, 8, 1}, {"mixtral-8x7b", 32, 2, 2, 1, 8, 1},
        {"mixtral-8x7b", 32, 2, 1, 1, 4, 2}, {"deepseek-v3", 256, 4, 4, 1, 16, 1},
        {"deepseek-v3", 256, 2, 2, 1, 8, 2},
    };
    for (const auto& a : axes) {
        for (int zero = 0; zero <= 3; ++zero) {
            for (const char* dtype : {"bf16", "fp8"}) {
                LayoutOverrides o;
                o.model = a.model;
                o.cluster = "dgx-h100";
                o.gpus = a.gpus;
                o.tp = a.tp;
                o.pp = a.pp;
                o.cp = a.cp;
                o.ep = a.ep;
                o.etp = a.etp;
                o.zero = zero;
                o.dtype = dtype;
                o.mbs = 1;
                o.gbs = 256;
                Layout l = build_layout(std::nullopt, o);
                l.training.cross_entropy = CrossEntropy::Upcast;  // torchtitan's loss (lost otherwise)
                l.training.attention_kernel = AttentionKernel::Sdpa;  // and its attention
                l.name = "matrix";
                l.description = "matrix case";
                if (!validate_layout(l, "matrix").valid()) continue;
                ++cases;
                for (const auto format : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) {
                    const bool v02 = format == ExportFormat::TorchtitanToml;
                    const ExportResult r = export_layout(l, format);
                    Degrees d;
                    auto errors =
                        v02 ? check_toml(facts, r.text, d) : check_module(facts, r.text, d);
                    for (auto& e : check_rules(facts, v02, d, l.gpus)) errors.push_back(e);
                    if (v02 && std::string(a.model) == "deepseek-v3" && a.tp > 1 &&
                        std::string(dtype) == "fp8" &&
                        r.text.find("recipe_name = \"rowwise\"") == std::string::npos) {
                        errors.push_back("rule:float8-tp-deepseek broken");
                    }
                    const std::string what = to_string(format) + " " + a.model + " tp" +
                                             std::to_string(a.tp) + " pp" + std::to_string(a.pp) +
                                             " cp" + std::to_string(a.cp) + " ep" +
                                             std::to_string(a.ep) + " etp" + std::to_string(a.etp) +
                                             " zero" + std::to_string(zero) + " " + dtype;
                    QVERIFY2(errors.empty(), qPrintable(QString::fromStdString(
                                                 what + ":" + joined(errors) + "\n" + r.text)));
                    if (!r.lossless()) continue;
                    ImportOptions io;
                    io.cluster = l.cluster_ref;
                    io.name = l.name;
                    io.description = l.description;
                    const ImportResult back =
                        import_config(r.text, "exported", ImportFormat::Auto, io);
                    QVERIFY2(back.layout == canonical_layout(l),
                             qPrintable(QString::fromStdString(
                                 what + ": round trip differs\n" + r.text + "\n" +
                                 layout_to_json(back.layout).dump())));
                    ++round_trips;
                }
            }
        }
    }
    QVERIFY(cases >= 40);
    QVERIFY(round_trips >= 20);
}

// Issue 34: where an export declares a loss, what it writes is what its import reads, so
// exporting the re-imported layout writes the same settings: ZeRO-0 where torchtitan refuses
// replication alone (written as FSDP over every data-parallel rank) and splits torchtitan
// cannot build (written as torchtitan's even split). Comment lines and the description name
// the layout and are left out.
void TestTorchtitanExport::lossy_exports_are_fixed_points() {
    const auto settings = [](const std::string& text) {
        std::istringstream in(text);
        std::string line, out;
        while (std::getline(in, line)) {
            const auto start = line.find_first_not_of(' ');
            if (start == std::string::npos || line[start] == '#' || line.compare(start, 11, "description") == 0) continue;
            out += line + "\n";
        }
        return out;
    };
    struct Case {
        const char* model;
        int gpus, tp, pp, ep, zero;
        std::vector<int> split;
    };
    const Case cases[] = {
        {"llama3-8b", 16, 2, 1, 1, 0, {}},            // v0.2.x: DDP refuses tp > 1
        {"llama3-8b", 16, 2, 2, 1, 0, {}},
        {"mixtral-8x7b", 32, 1, 1, 8, 0, {}},         // an empty expert mesh without sharding
        {"llama3-70b", 64, 1, 4, 1, 3, {21, 19, 19, 21}},  // heavier ends
        {"llama3-8b", 24, 1, 3, 1, 2, {12, 8, 12}},   // heavier ends over three stages
    };
    int lossy = 0;
    for (const auto& c : cases) {
        LayoutOverrides o;
        o.model = c.model;
        o.cluster = "dgx-h100";
        o.gpus = c.gpus;
        o.tp = c.tp;
        o.pp = c.pp;
        o.ep = c.ep;
        o.zero = c.zero;
        o.mbs = 1;
        o.gbs = 256;
        Layout l = build_layout(std::nullopt, o);
        l.placement.layers_per_stage = c.split;
        l.name = "fixed-point";
        l.description = "fixed-point case";
        QVERIFY2(validate_layout(l, "fixed-point").valid(), c.model);
        for (const auto format : {ExportFormat::Torchtitan, ExportFormat::TorchtitanToml}) {
            const ExportResult first = export_layout(l, format);
            lossy += !first.lossless();
            ImportOptions io;
            io.cluster = l.cluster_ref;
            io.name = l.name;
            const ImportResult back = import_config(first.text, "exported", ImportFormat::Auto, io);
            const ExportResult second = export_layout(back.layout, format);
            QCOMPARE(QString::fromStdString(settings(second.text)), QString::fromStdString(settings(first.text)));
        }
    }
    QVERIFY(lossy >= 6);  // the cases are lossy ones: the loss is declared, then kept
}

QTEST_GUILESS_MAIN(TestTorchtitanExport)
#include "tst_torchtitan_export.moc"
