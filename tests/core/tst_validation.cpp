// Validation: every rule names its field; the bad-file corpus in tests/fixtures/bad.
#include <QtTest>

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/common/resources.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"

using namespace meshwork;

namespace {
// Loads and validates; returns every problem as "field: message" lines.
std::vector<InputIssue> problems(const std::string& path) {
    try {
        const Layout l = load_layout(path);
        return validate_layout(l, path).errors;
    } catch (const InputError& e) {
        return e.issues();
    }
}
}  // namespace

class TestValidation : public QObject {
    Q_OBJECT
private slots:
    void bad_corpus_data();
    void bad_corpus();
    void every_rule_reports_all_errors();
    void warnings_do_not_invalidate();
    void kv_head_replication_is_allowed();
    void explicit_uneven_expert_placement();
};

void TestValidation::bad_corpus_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("expected");
    const std::string dir = MESHWORK_TEST_FIXTURES;
    const Json expected = load_json_file(dir + "/bad-expected.json");
    QVERIFY(expected.size() >= 30);
    for (const auto& [name, field] : expected.items()) {
        QTest::newRow(name.c_str()) << QString::fromStdString(dir + "/bad/" + name)
                                    << QString::fromStdString(field.get<std::string>());
    }
}

void TestValidation::bad_corpus() {
    QFETCH(QString, file);
    QFETCH(QString, expected);
    const auto issues = problems(file.toStdString());
    QVERIFY2(!issues.empty(), "accepted a bad file");
    bool named = false;
    for (const auto& i : issues) {
        QCOMPARE(QString::fromStdString(i.file), file);  // every issue names the file
        QVERIFY(!i.message.empty());
        // The expected text is either the exact field or a phrase of the message.
        if (QString::fromStdString(i.field) == expected ||
            QString::fromStdString(i.to_string()).contains(expected)) {
            named = true;
        }
    }
    QVERIFY2(named, qPrintable("no issue names '" + expected + "': " +
                               QString::fromStdString(issues.front().to_string())));
}

void TestValidation::every_rule_reports_all_errors() {
    // Two independent mistakes are both reported, not only the first.
    Layout l = load_layout(resource_dir() + "/layouts/tiny-cpu.json");
    l.parallel.mesh.tp = 3;              // heads 4
    l.training.global_batch_size = 7;    // not a multiple of dp·mbs
    const auto r = validate_layout(l, "x.json");
    std::set<std::string> fields;
    for (const auto& e : r.errors) fields.insert(e.field);
    QVERIFY(fields.count("parallel.tp"));
    QVERIFY(fields.count("training.global_batch_size"));
    QVERIFY(fields.count("parallel"));  // world size no longer matches gpus
}

void TestValidation::warnings_do_not_invalidate() {
    Layout l = load_layout(resource_dir() + "/layouts/llama3.1-405b-h100-16384.json");
    l.parallel.vpp = 1;
    l.training.schedule = Schedule::OneFOneB;
    l.placement.layers_per_stage.clear();  // 126 over 16: chosen automatically, warned
    auto r = validate_layout(l, "x.json");
    QVERIFY(r.valid());
    QVERIFY(!r.warnings.empty());
    QCOMPARE(r.warnings.front().field, std::string("placement.layers_per_stage"));
    // TP across nodes is allowed with a warning.
    l.parallel.mesh.tp = 16;
    l.parallel.mesh.dp = 64;
    r = validate_layout(l, "x.json");
    QVERIFY(r.valid());
    bool warned = false;
    for (const auto& w : r.warnings) warned |= w.field == "parallel.tp";
    QVERIFY(warned);
}

void TestValidation::kv_head_replication_is_allowed() {
    // Llama-3-70B has 8 KV heads: tp 16 replicates each on 2 ranks (allowed, warned);
    // the 64 query heads split over 16.
    Layout l = load_layout(resource_dir() + "/layouts/llama3-70b-h100-64.json");
    l.parallel.mesh.tp = 16;
    l.parallel.mesh.pp = 4;
    l.parallel.mesh.dp = 1;
    l.training.global_batch_size = 128;
    QVERIFY(validate_layout(l, "x").valid());
}

void TestValidation::explicit_uneven_expert_placement() {
    Layout l = load_layout(resource_dir() + "/layouts/tiny-moe-cpu.json");
    l.placement.experts_per_ep_rank = {{0, 1, 2, 3, 4}, {5, 6, 7}};
    QVERIFY(validate_layout(l, "x").valid());
    l.placement.experts_per_ep_rank = {{0, 1, 2, 3, 4}, {5, 6, 9}};
    const auto r = validate_layout(l, "x");
    QVERIFY(!r.valid());
    QCOMPARE(r.errors.front().field, std::string("placement.experts_per_ep_rank[1]"));
}

QTEST_GUILESS_MAIN(TestValidation)
#include "tst_validation.moc"
