// Every torchtitan config of ../shared/realworld/torchtitan (beside the checkout) imports with
// its authors' axes: the degrees read independently from the file with toml++ are the
// imported layout's, and the layout is valid. Skipped with the reason when the folder is
// absent. The world size is not in a torchtitan config (NGPU is the launcher's): each file is
// imported with the smallest world that fills its fixed degrees and an expert mesh.
#include <QtTest>

#include <filesystem>

#include <toml++/toml.h>

#include "core/export/importer.h"
#include "core/export/text_file.h"
#include "core/export/torchtitan_facts.h"
#include "core/layout/layout_validate.h"

using namespace meshwork;
namespace fs = std::filesystem;

namespace {

fs::path corpus() {
    return fs::path(MESHWORK_RESOURCES_DIR) / ".." / ".." / "shared" / "realworld" / "torchtitan";
}

long long degree(const toml::table& root, const char* table, const char* key, long long fallback) {
    return root[table][key].value<std::int64_t>().value_or(fallback);
}

}  // namespace

class TestTorchtitanRealworld : public QObject {
    Q_OBJECT
  private slots:
    void corpus_imports_with_the_authors_axes();
};

void TestTorchtitanRealworld::corpus_imports_with_the_authors_axes() {
    if (!fs::is_directory(corpus()))
        QSKIP(qPrintable("no corpus at " + QString::fromStdString(corpus().string())));
    int files = 0;
    for (const auto& entry : fs::directory_iterator(corpus())) {
        const fs::path path = entry.path();
        if (path.extension() != ".toml") continue;
        ++files;
        const std::string text = read_text_input(path.string());
        const toml::table root = toml::parse(text, path.string());
        // The authors' axes, in whichever release's keys the file uses.
        const bool pre02 =
            root["training"]["data_parallel_degree"] || root["training"]["batch_size"];
        long long replicate = degree(root, "parallelism", "data_parallel_replicate_degree", 1);
        long long shard = pre02 ? degree(root, "training", "data_parallel_degree", -1)
                                : degree(root, "parallelism", "data_parallel_shard_degree", -1);
        const long long tp = pre02 ? degree(root, "training", "tensor_parallel_degree", 1)
                                   : degree(root, "parallelism", "tensor_parallel_degree", 1);
        const long long pp = pre02 ? degree(root, "experimental", "pipeline_parallel_degree", 1)
                                   : degree(root, "parallelism", "pipeline_parallel_degree", 1);
        const long long cp = degree(root, "parallelism", "context_parallel_degree", 1);
        const long long ep = degree(root, "parallelism", "expert_parallel_degree", 1);
        const long long etp = degree(root, "parallelism", "expert_tensor_parallel_degree", 1);
        long long world = replicate * tp * pp * cp * (shard > 0 ? shard : 1);
        if (shard == -1) {
            long long k = 2;
            while ((k * cp * tp) % (ep * etp) != 0) ++k;
            world *= k;
            shard = k;
        }
        ImportOptions o;
        o.gpus = static_cast<int>(world);
        o.cluster = "dgx-h100";
        const std::string name = root["model"]["name"].value_or(std::string("llama3"));
        const std::string flavor = root["model"]["flavor"].value_or(std::string("debugmodel"));
        // Flavors without a Meshwork preset get a stand-in of the same kind (dense or MoE):
        // the axes are what is checked.
        if (preset_of_torchtitan_flavor(name, flavor).empty())
            o.model = ep > 1 ? "tiny-moe" : "tiny";
        const std::string what = path.filename().string();
        ImportResult r;
        try {
            r = import_config(text, path.string(), ImportFormat::Auto, o);
        } catch (const std::exception& e) {
            QFAIL(qPrintable(QString::fromStdString(what + ": " + e.what())));
        }
        const auto& m = r.layout.parallel.mesh;
        QVERIFY2(r.format == ImportFormat::Torchtitan, what.c_str());
        QVERIFY2(m.tp == tp && m.pp == pp && m.cp == cp && m.ep == ep, what.c_str());
        QVERIFY2(m.dp == replicate * shard, what.c_str());
        QVERIFY2(r.layout.gpus == world, what.c_str());
        QVERIFY2(r.layout.training.zero_stage == (shard > 1 ? 3 : 0), what.c_str());
        // How the file runs, as the cost model reads it: op-level selective checkpointing
        // for selective_ac_option "op", fused element-wise kernels only when the model is
        // compiled (v0.1 training.compile, v0.2 compile.enable), the loss on fp32 logits.
        const std::string ac_mode = root["activation_checkpoint"]["mode"].value_or(std::string("selective"));
        const std::string ac_option =
            root["activation_checkpoint"]["selective_ac_option"].value_or(std::string("2"));
        if (ac_mode == "selective" && ac_option == "op") {
            QVERIFY2(r.layout.training.recompute == Recompute::SelectiveOp, what.c_str());
        }
        bool compiled = root["compile"]["enable"].value_or(root["training"]["compile"].value_or(false));
        if (const toml::array* parts = root["compile"]["components"].as_array()) {
            bool model = false;
            for (const auto& p : *parts) model = model || p.value_or(std::string()) == "model";
            compiled = compiled && model;  // ["loss"] alone compiles the loss, not the blocks
        }
        QVERIFY2(r.layout.training.fused_elementwise == compiled, what.c_str());
        QVERIFY2(r.layout.training.cross_entropy == CrossEntropy::Upcast, what.c_str());
        QVERIFY2(r.layout.training.attention_kernel == AttentionKernel::Sdpa, what.c_str());
        const auto valid = validate_layout(r.layout, what);
        QVERIFY2(
            valid.valid(),
            qPrintable(QString::fromStdString(
                what + ": " + (valid.errors.empty() ? "" : valid.errors.front().to_string()))));
        qInfo("%s: tp %d pp %d cp %d ep %d dp %d on %d GPUs", what.c_str(), m.tp, m.pp, m.cp, m.ep,
              m.dp, r.layout.gpus);
    }
    QVERIFY2(files > 0, "no .toml file in the corpus folder");
}

QTEST_GUILESS_MAIN(TestTorchtitanRealworld)
#include "tst_torchtitan_realworld.moc"
