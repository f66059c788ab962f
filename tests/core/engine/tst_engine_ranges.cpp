// The named ranges the engine opens around steps, micro-batches, layers and the optimizer
// (Backend::push_range; NVTX on the CUDA backend): the profiler maps GPU kernels to
// (step, micro-batch, layer) by these names, so their order and nesting are a contract.
#include <QtTest>

#include <string>
#include <thread>
#include <vector>

#include "core/engine/comm/inproc_world.h"
#include "core/engine/cpu/cpu_backend.h"
#include "profiler/analysis/range_context.h"
#include "core/engine/engine_run.h"
#include "core/engine/nvtx/scoped_range.h"
#include "core/engine/rank_context.h"
#include "core/engine/trainer.h"
#include "core/layout/layout_json.h"

using namespace meshwork;
using namespace meshwork::engine;

namespace {
// The CPU backend, recording every range it is asked to open and close.
class RangeRecordingBackend : public CpuBackend {
public:
    using CpuBackend::CpuBackend;
    void push_range(const std::string& name) override {
        log.push_back("+" + name);
        open.push_back(name);
        max_depth = std::max(max_depth, open.size());
    }
    void pop_range() override {
        QVERIFY2(!open.empty(), "pop_range without a matching push_range");
        log.push_back("-" + open.back());
        open.pop_back();
    }
    std::vector<std::string> log;
    std::vector<std::string> open;
    std::size_t max_depth = 0;
};
}  // namespace

class TstEngineRanges : public QObject {
    Q_OBJECT
private slots:
    void ranges_nest_step_micro_batch_layer_and_balance() {
        Layout layout = load_layout(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json");
        layout.gpus = 1;
        layout.parallel.mesh.tp = 1;
        layout.parallel.mesh.pp = 1;
        layout.placement.layers_per_stage.clear();
        const int layers = layout.model.num_layers;
        const int micro_batches = layout.num_micro_batches();
        QVERIFY(layers >= 2 && micro_batches >= 2);

        EngineOptions options;
        options.steps = 1;
        InProcessWorld world(1, 30);
        auto comm = world.communicator(0);
        RangeRecordingBackend be(0);
        const TokenStream tokens = make_token_stream(layout, options);
        {
            RankContext ctx(layout, be, *comm, nullptr);
            RankTrainer trainer(layout, options, ctx, tokens);
            trainer.step(1);
        }
        QVERIFY(be.open.empty());
        QCOMPARE(be.log.front(), std::string("+step 1"));
        QCOMPARE(be.log.back(), std::string("-step 1"));
        QCOMPARE(be.max_depth, std::size_t{3});  // step > mb > layer

        int fwd = 0, bwd = 0, optimizer = 0, mbs = 0;
        std::vector<std::string> stack;
        for (const auto& entry : be.log) {
            const std::string name = entry.substr(1);
            if (entry[0] == '-') {
                QCOMPARE(stack.back(), name);
                stack.pop_back();
                continue;
            }
            if (name.starts_with("layer ")) {
                QVERIFY2(stack.size() == 2 && stack[1].starts_with("mb "), name.c_str());
                (name.ends_with(" fwd") ? fwd : bwd) += 1;
            } else if (name.starts_with("mb ")) {
                QVERIFY(stack.size() == 1);
                ++mbs;
            } else if (name == "optimizer") {
                QVERIFY(stack.size() == 1);
                ++optimizer;
            }
            stack.push_back(name);
        }
        // One forward and one backward op per micro-batch, every layer in each.
        QCOMPARE(mbs, 2 * micro_batches);
        QCOMPARE(fwd, layers * micro_batches);
        QCOMPARE(bwd, layers * micro_batches);
        QCOMPARE(optimizer, 1);
        // Backward walks the layers last to first.
        const auto first_bwd = std::find_if(be.log.begin(), be.log.end(),
                                            [](const std::string& e) { return e.ends_with(" bwd") && e[0] == '+'; });
        QVERIFY(first_bwd != be.log.end());
        QCOMPARE(*first_bwd, "+layer " + std::to_string(layers - 1) + " bwd");
    }

    // Every collective is inside a range naming its payload and group, which the CUPTI
    // collector gives to the NCCL kernels launched in it (profiler/collect/gpu_activity.h).
    void collectives_open_a_range_with_bytes_and_group() {
        Layout layout = load_layout(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json");
        layout.gpus = 2;
        layout.parallel.mesh.tp = 2;
        layout.parallel.mesh.pp = 1;
        layout.placement.layers_per_stage.clear();
        EngineOptions options;
        options.steps = 1;
        InProcessWorld world(2, 30);
        const TokenStream tokens = make_token_stream(layout, options);
        std::vector<std::vector<std::string>> logs(2);
        std::vector<std::thread> ranks;
        for (int r = 0; r < 2; ++r) {
            ranks.emplace_back([&, r] {
                auto comm = world.communicator(r);
                RangeRecordingBackend be(r);
                {
                    RankContext ctx(layout, be, *comm, nullptr);
                    RankTrainer trainer(layout, options, ctx, tokens);
                    trainer.step(1);
                }
                logs[static_cast<std::size_t>(r)] = be.log;
            });
        }
        for (auto& t : ranks) t.join();
        for (const auto& log : logs) {
            int collectives = 0;
            for (const auto& entry : log) {
                if (entry[0] != '+' || !entry.starts_with("+all_reduce(tp)")) continue;
                const auto c = profiler::parse_range_context(entry.substr(1));
                QVERIFY2(c.bytes > 0, entry.c_str());
                QCOMPARE(c.group_size, 2);
                QVERIFY2(c.step < 0 && c.layer < 0, entry.c_str());  // the enclosing ranges say those
                ++collectives;
            }
            QVERIFY(collectives > 0);
        }
        QCOMPARE(logs[0].size(), logs[1].size());  // same ranges on both ranks of the group
    }

    // The profiler reads these names back (CUPTI collector, Nsight Systems import).
    void profiler_parses_every_range_name() {
        using profiler::parse_range_context;
        QCOMPARE(parse_range_context(range_name::step(7)).step, 7);
        QCOMPARE(parse_range_context(range_name::micro_batch(3)).micro_batch, 3);
        const auto fwd = parse_range_context(range_name::layer(12, "fwd"));
        QCOMPARE(fwd.layer, 12);
        QCOMPARE(fwd.step, -1);
        QCOMPARE(fwd.micro_batch, -1);
        QCOMPARE(parse_range_context(range_name::layer(0, "bwd")).layer, 0);
        const auto opt = parse_range_context(range_name::optimizer());
        QVERIFY(opt.step < 0 && opt.micro_batch < 0 && opt.layer < 0);
        const auto coll = parse_range_context(range_name::collective("all_gather(dp)", 1u << 20, 8));
        QCOMPARE(coll.bytes, std::int64_t{1} << 20);
        QCOMPARE(coll.group_size, 8);
        QVERIFY(coll.step < 0 && coll.micro_batch < 0 && coll.layer < 0);
    }
};

QTEST_MAIN(TstEngineRanges)
#include "tst_engine_ranges.moc"
