// Golden files: every bundled example layout in every export format. A change of an exporter
// shows up as a diff of tests/fixtures/export/golden; MESHWORK_UPDATE_GOLDEN=1 rewrites them.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/common/resources.h"
#include "core/export/exporter.h"
#include "core/layout/layout_json.h"

using namespace meshwork;

namespace {

std::string golden_dir() { return std::string(MESHWORK_TEST_FIXTURES) + "/export/golden/"; }

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool updating() { return qEnvironmentVariableIsSet("MESHWORK_UPDATE_GOLDEN"); }

void check(const std::string& name, const std::string& actual) {
    const std::string path = golden_dir() + name;
    if (updating()) {
        std::ofstream(path, std::ios::binary) << actual;
        return;
    }
    const std::string expected = read(path);
    QVERIFY2(!expected.empty(), qPrintable(QString::fromStdString("missing golden file " + path +
                                                                  " (MESHWORK_UPDATE_GOLDEN=1 writes it)")));
    QVERIFY2(actual == expected,
             qPrintable(QString::fromStdString(name + " differs from the golden file:\n" + actual)));
}

struct Case {
    ExportFormat format;
    SlurmTrainer trainer;
    const char* suffix;
};

constexpr Case kCases[] = {
    {ExportFormat::Megatron, SlurmTrainer::Megatron, "megatron.sh"},
    {ExportFormat::DeepSpeed, SlurmTrainer::Megatron, "deepspeed.json"},
    {ExportFormat::Torchtitan, SlurmTrainer::Megatron, "torchtitan.py"},
    {ExportFormat::TorchtitanToml, SlurmTrainer::Megatron, "torchtitan.toml"},
    {ExportFormat::Slurm, SlurmTrainer::Megatron, "slurm-megatron.sbatch"},
    {ExportFormat::Slurm, SlurmTrainer::Torchtitan, "slurm-torchtitan.sbatch"},
    {ExportFormat::Slurm, SlurmTrainer::Meshwork, "slurm-meshwork.sbatch"},
    {ExportFormat::Layout, SlurmTrainer::Megatron, "layout.json"},
};

}  // namespace

class TestExportGolden : public QObject {
    Q_OBJECT
private slots:
    void bundled_layouts_data();
    void bundled_layouts();
};

void TestExportGolden::bundled_layouts_data() {
    QTest::addColumn<QString>("layout");
    for (const auto& name : list_presets(PresetKind::Layout)) {
        QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
}

void TestExportGolden::bundled_layouts() {
    QFETCH(QString, layout);
    const std::string name = layout.toStdString();
    const Layout l = load_layout(resource_dir() + "/layouts/" + name + ".json");
    // What each format loses is part of the golden record: a new loss is a visible change.
    std::string lost;
    for (const auto& c : kCases) {
        ExportOptions options;
        options.slurm_trainer = c.trainer;
        // A format that refuses the layout (DeepSpeed and ZeRO-2 with pipeline parallelism)
        // records its reason with the losses instead of a file.
        ExportResult r;
        try {
            r = export_layout(l, c.format, options);
        } catch (const InputError& e) {
            lost += std::string(c.suffix) + ": refused: " + e.what() + "\n";
            continue;
        }
        check(name + "." + c.suffix, r.text);
        for (const auto& item : r.lost) lost += std::string(c.suffix) + ": " + item + "\n";
    }
    check(name + ".lost.txt", lost.empty() ? "(nothing lost)\n" : lost);
}

QTEST_GUILESS_MAIN(TestExportGolden)
#include "tst_export_golden.moc"
