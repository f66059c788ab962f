// Layout search: the same best layouts as brute force over the cost model, constraints
// honoured, the GPT-3 175B reference case, determinism across thread counts, pruning that
// changes nothing but the work, cancellation, and impossible requests.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <stop_token>

#include <nlohmann/json.hpp>

#include "core/cluster/cluster_spec.h"
#include "core/common/error.h"
#include "core/cost/cost_model.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"
#include "core/model/layer_graph.h"
#include "core/search/search.h"
#include "core/search/simulator_rerank.h"
#include "core/sim/simulate.h"

using namespace meshwork;
using namespace meshwork::search;

namespace {

SearchRequest request(const std::string& model, const std::string& cluster, int gpus, int gbs,
                      int seq) {
    SearchRequest r;
    r.model = load_model(model);
    r.model_ref = model;
    r.cluster = load_cluster(cluster);
    r.cluster_ref = cluster;
    r.options.gpus = gpus;
    r.options.global_batch_size = gbs;
    r.options.seq_length = seq;
    r.options.dtype = r.cluster.gpu.peak_flops(DType::Bf16) > 0 ? DType::Bf16 : DType::Fp32;
    return r;
}

// ---- brute force: written from docs/search.md's description of the space, not from
// core/search; every layout goes through build_layout, validate_layout, estimate_layout.

std::vector<int> divisors_of(int n) {
    std::vector<int> d;
    for (int i = 1; i <= n; ++i) {
        if (n % i == 0) d.push_back(i);
    }
    return d;
}

// Explicit splits allowed by the space: the middle chunks equal (q layers), each end at
// most q and at least q − lighter layers, and not the balanced split; plus {} (balanced).
std::vector<std::vector<int>> splits_of(int layers, int chunks, int lighter) {
    std::vector<std::vector<int>> out{{}};
    if (chunks < 2) return out;
    const auto balanced = balanced_stage_split(layers, chunks);
    // End chunks may hold no layer (only the embedding, or only the head and loss).
    for (int q = 1; q <= layers; ++q) {
        for (int f = 0; f <= layers; ++f) {
            for (int l = 0; l <= layers; ++l) {
                std::vector<int> s(static_cast<std::size_t>(chunks), q);
                s.front() = f;
                s.back() = l;
                int sum = 0;
                for (int n : s) sum += n;
                if (sum != layers) continue;
                const int top = chunks > 2 ? q : std::max(f, l);
                if (chunks == 2 && q != top) continue;  // q means nothing with two chunks
                if (f > top || l > top || top - f > lighter || top - l > lighter) continue;
                if (s == balanced || std::find(out.begin(), out.end(), s) != out.end()) continue;
                out.push_back(s);
            }
        }
    }
    return out;
}

struct Scored {
    double tokens_per_s;
    std::int64_t peak_bytes;
};

struct BruteForce {
    std::vector<Scored> feasible;  // best first
    std::int64_t invalid = 0, zero_with_pp = 0, out_of_memory = 0;
    std::map<std::string, std::int64_t> invalid_by_field;  // under the first field, in docs order
};

// The order in which docs/search.md says a layout with several errors is counted.
const std::vector<std::string> kReasonOrder{"parallel.tp",
                                            "parallel.pp",
                                            "parallel.ep",
                                            "parallel.etp",
                                            "parallel.cp",
                                            "parallel.sequence_parallel",
                                            "training.schedule",
                                            "parallel.vpp",
                                            "placement.layers_per_stage",
                                            "training.global_batch_size"};

std::string first_field(const ValidationResult& v) {
    for (const auto& field : kReasonOrder) {
        for (const auto& e : v.errors) {
            if (e.field == field) return field;
        }
    }
    return v.errors.front().field;
}

BruteForce brute_force(const SearchRequest& req) {
    const SearchOptions& o = req.options;
    const ClusterSpec& cl = req.cluster;
    const bool moe = req.model.is_moe();
    BruteForce bf;
    for (int tp : divisors_of(o.gpus)) {
        if (tp > cl.gpus_per_node || cl.gpus_per_node % tp != 0) continue;
        for (int cp : divisors_of(o.gpus / tp))
            for (int pp : divisors_of(o.gpus / tp / cp))
                for (int ep : moe ? divisors_of(req.model.moe.num_experts) : std::vector<int>{1})
                    for (int etp : moe ? divisors_of(cl.gpus_per_node) : std::vector<int>{1})
                        for (bool sp :
                             tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
                            std::vector<std::pair<std::string, int>> pipelines{{"1f1b", 1}};
                            if (pp > 1) {
                                for (int v = 2; v <= o.max_vpp; ++v)
                                    pipelines.emplace_back("interleaved", v);
                                pipelines.emplace_back("gpipe", 1);
                            }
                            for (const auto& [schedule, vpp] : pipelines)
                                for (const auto& split : splits_of(req.model.num_layers, pp * vpp,
                                                                   o.max_end_lighter_layers))
                                    for (int zero : o.fixed.zero ? std::vector<int>{*o.fixed.zero}
                                                                 : std::vector<int>{0, 1, 2, 3})
                                        for (const char* rec : {"none", "selective", "full"}) {
                                            if (o.fixed.recompute &&
                                                to_string(*o.fixed.recompute) != rec)
                                                continue;
                                            for (int mbs : divisors_of(o.global_batch_size)) {
                                                if (mbs > o.max_micro_batch) continue;
                                                LayoutOverrides f;
                                                f.model = req.model_ref;
                                                f.cluster = req.cluster_ref;
                                                f.gpus = o.gpus;
                                                f.tp = tp;
                                                f.cp = cp;
                                                f.pp = pp;
                                                f.dp = o.gpus / tp / cp / pp;
                                                f.ep = ep;
                                                f.etp = etp;
                                                f.vpp = vpp;
                                                f.mbs = mbs;
                                                f.gbs = o.global_batch_size;
                                                f.seq = o.seq_length;
                                                f.schedule = schedule;
                                                f.recompute = rec;
                                                f.dtype = to_string(o.dtype);
                                                f.sequence_parallel = sp;
                                                f.zero = zero;
                                                if (!split.empty()) f.layers_per_stage = split;
                                                const Layout l = build_layout(std::nullopt, f);
                                                const ValidationResult v = validate_layout(l, "bf");
                                                if (!v.valid()) {
                                                    ++bf.invalid;
                                                    ++bf.invalid_by_field[first_field(v)];
                                                } else if (zero >= 2 && pp > 1) {
                                                    ++bf.zero_with_pp;
                                                } else {
                                                    const Estimate e = estimate_layout(l);
                                                    std::int64_t peak = 0;
                                                    for (const auto& st : e.stages)
                                                        peak = std::max(peak, st.peak_bytes);
                                                    if (!e.fits) {
                                                        ++bf.out_of_memory;
                                                    } else {
                                                        bf.feasible.push_back(
                                                            {e.tokens_per_s, peak});
                                                    }
                                                }
                                            }
                                        }
                        }
    }
    std::sort(bf.feasible.begin(), bf.feasible.end(), [](const Scored& a, const Scored& b) {
        return a.tokens_per_s != b.tokens_per_s ? a.tokens_per_s > b.tokens_per_s
                                                : a.peak_bytes < b.peak_bytes;
    });
    return bf;
}

std::int64_t count(const SearchResult& r, const std::string& reason) {
    const auto it = r.rejected.find(reason);
    return it == r.rejected.end() ? 0 : it->second;
}

std::int64_t total_rejected(const SearchResult& r) {
    std::int64_t n = 0;
    for (const auto& [reason, k] : r.rejected) n += k;
    return n;
}

// Pins every speed-only knob to the layout's default, which is what the brute force (and
// build_layout) costs: no TP overlap, both data-parallel overlaps, the all-to-all
// dispatcher without its overlap, Megatron's default recompute module.
void pin_layout_defaults(SearchRequest& req) {
    const ParallelConfig p;
    KnobPins& k = req.options.knobs;
    k.tp_comm_overlap = p.tp_comm_overlap;
    k.overlap_grad_reduce = p.overlap_grad_reduce;
    k.overlap_param_gather = p.overlap_param_gather;
    k.moe_dispatcher = p.moe_dispatcher;
    k.moe_flex_backend = p.moe_flex_backend;
    k.moe_a2a_overlap = p.moe_a2a_overlap;
    k.recompute_modules = std::vector<RecomputeModule>{};
    k.cuda_graphs = TrainingConfig{}.cuda_graphs;
}

void compare_with_brute_force(SearchRequest req) {
    req.options.top_k = 25;
    pin_layout_defaults(req);
    const BruteForce bf = brute_force(req);
    const SearchResult r = run_search(req);
    qInfo("brute force: %zu feasible, %lld invalid, %lld zero with pp, %lld out of memory",
          bf.feasible.size(), static_cast<long long>(bf.invalid),
          static_cast<long long>(bf.zero_with_pp), static_cast<long long>(bf.out_of_memory));
    QVERIFY(!bf.feasible.empty());
    QCOMPARE(r.evaluated, static_cast<std::int64_t>(bf.feasible.size()));
    QCOMPARE(total_rejected(r), bf.invalid + bf.zero_with_pp + bf.out_of_memory);
    QCOMPARE(count(r, "out_of_memory"), bf.out_of_memory);
    QCOMPARE(count(r, "training.zero_stage"), bf.zero_with_pp);
    for (const auto& [field, n] : bf.invalid_by_field) QCOMPARE(count(r, field), n);
    QCOMPARE(r.space_size, r.evaluated + total_rejected(r));
    const std::size_t n = std::min<std::size_t>(25, bf.feasible.size());
    QCOMPARE(r.results.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
        QCOMPARE(r.results[i].tokens_per_s, bf.feasible[i].tokens_per_s);
        QCOMPARE(r.results[i].peak_bytes, bf.feasible[i].peak_bytes);
    }
    // The best layout is a real one: valid, and the cost model agrees with the ranking.
    const Layout& best = r.results.front().layout;
    QVERIFY(validate_layout(best, "best").valid());
    QCOMPARE(estimate_layout(best).tokens_per_s, r.results.front().tokens_per_s);
}

// A Llama-style HF config with `layers` layers (more pipeline splits than the presets' 4).
std::string write_model(const QTemporaryDir& dir, int layers) {
    nlohmann::json c = {{"architectures", {"LlamaForCausalLM"}},
                        {"model_type", "llama"},
                        {"hidden_size", 64},
                        {"intermediate_size", 128},
                        {"num_attention_heads", 4},
                        {"num_key_value_heads", 2},
                        {"num_hidden_layers", layers},
                        {"max_position_embeddings", 128},
                        {"vocab_size", 256},
                        {"hidden_act", "silu"},
                        {"rms_norm_eps", 1e-5},
                        {"tie_word_embeddings", false}};
    const std::string path = dir.path().toStdString() + "/tiny10.json";
    std::ofstream(path) << c.dump();
    return path;
}

bool same_results(const SearchResult& a, const SearchResult& b) {
    if (a.results.size() != b.results.size() || a.rejected != b.rejected ||
        a.evaluated != b.evaluated) {
        return false;
    }
    for (std::size_t i = 0; i < a.results.size(); ++i) {
        if (!(a.results[i].candidate == b.results[i].candidate) ||
            a.results[i].tokens_per_s != b.results[i].tokens_per_s ||
            a.results[i].peak_bytes != b.results[i].peak_bytes) {
            return false;
        }
    }
    return true;
}

}  // namespace

class TestSearch : public QObject {
    Q_OBJECT
  private slots:
    void matches_brute_force_dense_pipeline();
    void matches_brute_force_with_memory_limits();
    void matches_brute_force_moe();
    void gpt3_175b_on_1024_a100();
    void same_results_on_1_and_2_threads();
    void memory_pruning_changes_only_the_work();
    void fixed_settings_are_honoured();
    void max_tp_and_cross_node_tp();
    void min_mfu_is_honoured();
    void progress_reaches_the_total();
    void cancellation_stops_early();
    void rerank_reorders_the_front_runners();
    void simulator_reranks_the_front_runners();
    void impossible_requests_throw();
    void nothing_feasible_lists_the_closest();
    void speed_only_knobs_are_searched_unless_pinned();
    void recompute_modules_are_the_fewest_that_fit();
    void cuda_graphs_are_searched_where_capture_is_allowed();
    void fsdp_fp32_shards_apply_to_zero3_candidates();
};

void TestSearch::matches_brute_force_dense_pipeline() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    SearchRequest req = request(write_model(dir, 10), "cpu-local", 8, 16, 64);
    req.options.max_micro_batch = 4;
    req.options.max_vpp = 3;
    compare_with_brute_force(req);
}

void TestSearch::matches_brute_force_with_memory_limits() {
    // Llama 3 8B on one DGX H100: many layouts overflow 80 GiB, so memory pruning acts.
    SearchRequest req = request("llama3-8b", "dgx-h100", 8, 24, 4096);
    req.options.max_micro_batch = 4;
    req.options.max_vpp = 2;
    compare_with_brute_force(req);
}

void TestSearch::matches_brute_force_moe() {
    SearchRequest req = request("tiny-moe", "cpu-local", 8, 16, 64);
    req.options.max_micro_batch = 4;
    req.options.max_vpp = 2;
    req.options.fixed.zero = 1;
    req.options.fixed.recompute = Recompute::Selective;
    compare_with_brute_force(req);
}

void TestSearch::gpt3_175b_on_1024_a100() {
    const SearchRequest req = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536, 2048);
    const SearchResult r = run_search(req);
    QVERIFY(!r.results.empty());
    const SearchHit& best = r.results.front();
    QVERIFY(best.candidate.tp <= 8);
    QVERIFY(best.estimate.fits);
    QVERIFY(best.peak_bytes <= req.cluster.gpu.hbm_bytes);
    QVERIFY(validate_layout(best.layout, "best").valid());
    // The order is the ranking: tokens/s never rises down the list.
    for (std::size_t i = 1; i < r.results.size(); ++i) {
        QVERIFY(r.results[i].tokens_per_s <= r.results[i - 1].tokens_per_s);
    }
    qInfo("GPT-3 175B / 1024 A100: %s, %.1f%% MFU, %.1f GiB, %lld layouts in %.2f s",
          candidate_label(best.candidate).c_str(), 100 * best.mfu, best.peak_bytes / 1073741824.0,
          static_cast<long long>(r.space_size), r.elapsed_s);
}

void TestSearch::same_results_on_1_and_2_threads() {
    for (const char* model : {"gpt3-175b", "mixtral-8x7b"}) {
        SearchRequest req = request(model, "dgx-a100-80gb", 256, 512, 2048);
        req.options.top_k = 30;
        req.options.threads = 1;
        const SearchResult one = run_search(req);
        req.options.threads = 2;
        const SearchResult two = run_search(req);
        QVERIFY(!one.results.empty());
        QVERIFY2(same_results(one, two), model);
        // The estimates may differ: the tuner stops early on candidates that cannot beat what
        // its worker has kept so far (tuning.h), which depends on how the tasks were shared.
        QVERIFY(one.cost_model_calls > 0 && two.cost_model_calls > 0);
    }
}

void TestSearch::memory_pruning_changes_only_the_work() {
    for (const char* model : {"llama3-70b", "mixtral-8x7b"}) {
        SearchRequest req = request(model, "dgx-h100", 64, 256, 4096);
        req.options.top_k = 30;
        const SearchResult pruned = run_search(req);
        req.options.memory_pruning = false;
        const SearchResult full = run_search(req);
        QVERIFY(!pruned.results.empty());
        QVERIFY2(same_results(pruned, full), model);
        QVERIFY(pruned.cost_model_calls < full.cost_model_calls);
    }
}

void TestSearch::fixed_settings_are_honoured() {
    SearchRequest req = request("llama3-70b", "dgx-h100", 128, 256, 4096);
    req.options.top_k = 40;
    req.options.fixed.tp = 4;
    req.options.fixed.pp = 4;
    req.options.fixed.schedule = Schedule::Interleaved;
    req.options.fixed.recompute = Recompute::Selective;
    req.options.fixed.sequence_parallel = true;
    req.options.fixed.zero = 1;
    const SearchResult r = run_search(req);
    QVERIFY(!r.results.empty());
    for (const auto& h : r.results) {
        const Candidate& c = h.candidate;
        QCOMPARE(c.tp, 4);
        QCOMPARE(c.pp, 4);
        QCOMPARE(c.dp * c.cp, 8);
        QVERIFY(c.schedule == Schedule::Interleaved && c.vpp >= 2);
        QVERIFY(c.recompute == Recompute::Selective);
        QVERIFY(c.sequence_parallel);
        QCOMPARE(c.zero_stage, 1);
        QCOMPARE(h.layout.parallel.mesh.tp, 4);
    }
    SearchRequest mbs = request("llama3-70b", "dgx-h100", 128, 256, 4096);
    mbs.options.fixed.mbs = 2;
    mbs.options.fixed.dp = 16;
    mbs.options.fixed.vpp = 1;
    for (const auto& h : run_search(mbs).results) {
        QCOMPARE(h.candidate.micro_batch_size, 2);
        QCOMPARE(h.candidate.dp, 16);
        QCOMPARE(h.candidate.vpp, 1);
    }
}

void TestSearch::max_tp_and_cross_node_tp() {
    SearchRequest req = request("llama3-70b", "dgx-h100", 256, 512, 4096);
    req.options.top_k = 50;
    for (const auto& h : run_search(req).results) QVERIFY(h.candidate.tp <= 8);
    req.options.max_tp = 2;
    for (const auto& h : run_search(req).results) QVERIFY(h.candidate.tp <= 2);
    // Across nodes the space grows: tp 16 and 32 come in.
    req.options.max_tp = 0;
    const std::int64_t within = run_search(req).space_size;
    req.options.allow_cross_node_tp = true;
    req.options.fixed.tp = 16;
    const SearchResult r = run_search(req);
    QVERIFY(r.space_size > 0 && r.space_size < within);
    for (const auto& h : r.results) QCOMPARE(h.candidate.tp, 16);
}

void TestSearch::min_mfu_is_honoured() {
    SearchRequest req = request("gpt3-175b", "dgx-a100-80gb", 256, 512, 2048);
    req.options.top_k = 1000;
    const SearchResult all = run_search(req);
    QVERIFY(all.results.size() > 100);
    const double cut = all.results[50].mfu;
    req.options.min_mfu = cut;
    const SearchResult r = run_search(req);
    QVERIFY(count(r, "min_mfu") > 0);
    for (const auto& h : r.results) QVERIFY(h.mfu >= cut);
    QCOMPARE(r.evaluated + count(r, "min_mfu"), all.evaluated);
}

void TestSearch::progress_reaches_the_total() {
    SearchRequest req = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536, 2048);
    SearchHooks hooks;
    std::int64_t last = -1, total = 0;
    bool monotonic = true;
    hooks.progress_interval = std::chrono::milliseconds(5);
    hooks.progress = [&](std::int64_t done, std::int64_t all) {
        monotonic = monotonic && done >= last;
        last = done;
        total = all;
    };
    const SearchResult r = run_search(req, hooks);
    QVERIFY(monotonic);
    QCOMPARE(last, r.space_size);
    QCOMPARE(total, r.space_size);
    QVERIFY(!r.cancelled);
}

void TestSearch::cancellation_stops_early() {
    // The largest space of the benchmark: cancelled at the first progress report.
    SearchRequest req = request("llama3.1-405b", "dgx-h100", 16384, 2048, 8192);
    std::stop_source source;
    SearchHooks hooks;
    hooks.stop = source.get_token();
    hooks.progress_interval = std::chrono::milliseconds(10);
    hooks.progress = [&](std::int64_t, std::int64_t) { source.request_stop(); };
    const SearchResult r = run_search(req, hooks);
    QVERIFY(r.cancelled);
    QVERIFY(r.processed < r.space_size);  // stopped early: counted work, not a clock (issue 31)
}

void TestSearch::rerank_reorders_the_front_runners() {
    SearchRequest req = request("gpt3-175b", "dgx-a100-80gb", 256, 512, 2048);
    req.options.top_k = 5;
    const SearchResult plain = run_search(req);
    // A reranker that prefers deeper pipelines: the order follows it, not the cost model.
    SearchHooks hooks;
    hooks.rerank_top = 40;
    int calls = 0;
    hooks.rerank = [&](const Layout& l, Estimate& e) {
        ++calls;
        const CostModel cm(l);
        cm.estimate(l, e);
        e.tokens_per_s = l.parallel.mesh.pp;
    };
    const SearchResult r = run_search(req, hooks);
    QCOMPARE(calls, 40);
    QCOMPARE(r.ranked_by, std::string("cost_model+rerank"));
    QCOMPARE(static_cast<int>(r.results.size()), 5);
    for (std::size_t i = 1; i < r.results.size(); ++i) {
        QVERIFY(r.results[i].candidate.pp <= r.results[i - 1].candidate.pp);
    }
    QCOMPARE(plain.ranked_by, std::string("cost_model"));
}

void TestSearch::simulator_reranks_the_front_runners() {
    SearchRequest req = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536, 2048);
    req.options.top_k = 5;
    SearchHooks hooks;
    hooks.rerank = simulator_rerank();
    hooks.rerank_name = kSimulatorRerankName;
    const SearchResult r = run_search(req, hooks);
    QCOMPARE(r.ranked_by, std::string("cost_model+simulator"));
    QCOMPARE(static_cast<int>(r.results.size()), 5);
    for (std::size_t i = 0; i < r.results.size(); ++i) {
        // Each figure is the simulator's own for that layout, and the order follows them.
        QCOMPARE(r.results[i].tokens_per_s,
                 simulate_layout(r.results[i].layout).estimate.tokens_per_s);
        if (i > 0) QVERIFY(r.results[i].tokens_per_s <= r.results[i - 1].tokens_per_s);
    }
    QVERIFY(r.results.front().candidate.tp <= 8);
    QVERIFY(r.results.front().estimate.fits);
}

void TestSearch::impossible_requests_throw() {
    auto throws = [](SearchRequest req, const char* field) {
        try {
            run_search(req);
        } catch (const InputError& e) {
            return e.issues().front().field == field;
        }
        return false;
    };
    QVERIFY(throws(request("gpt3-175b", "dgx-a100-80gb", 12, 64, 2048), "--gpus"));     // 1.5 nodes
    QVERIFY(throws(request("gpt3-175b", "dgx-a100-80gb", 40000, 64, 2048), "--gpus"));  // > cluster
    SearchRequest tp3 = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536, 2048);
    tp3.options.fixed.tp = 3;
    QVERIFY(throws(tp3, "--fix"));
    SearchRequest tp16 = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536, 2048);
    tp16.options.fixed.tp = 16;
    QVERIFY(throws(tp16, "--fix"));  // across nodes without the flag
    SearchRequest dense_ep = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536, 2048);
    dense_ep.options.fixed.ep = 8;
    QVERIFY(throws(dense_ep, "--fix"));
    SearchRequest fp8 = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536, 2048);
    fp8.options.dtype = DType::Fp8;
    QVERIFY(throws(fp8, "--dtype"));

    FixedSettings f;
    for (const char* bad :
         {"foo=1", "tp", "tp=x", "tp=0", "zero=4", "schedule=zigzag", "sp=maybe"}) {
        bool threw = false;
        try {
            apply_fix(bad, f);
        } catch (const InputError& e) {
            threw = e.issues().front().field == "--fix";
        }
        QVERIFY2(threw, bad);
    }
    apply_fix("sp=on", f);
    apply_fix("schedule=interleaved", f);
    QVERIFY(f.sequence_parallel == true && f.schedule == Schedule::Interleaved);
}

void TestSearch::nothing_feasible_lists_the_closest() {
    // 405B on one node: every layout overflows 80 GiB.
    const SearchRequest req = request("llama3.1-405b", "dgx-h100", 8, 64, 8192);
    const SearchResult r = run_search(req);
    QVERIFY(r.results.empty());
    QCOMPARE(r.evaluated, 0);
    QVERIFY(count(r, "out_of_memory") > 0);
    QVERIFY(!r.closest.empty());
    for (std::size_t i = 1; i < r.closest.size(); ++i) {
        QVERIFY(r.closest[i].overflow_bytes >= r.closest[i - 1].overflow_bytes);
    }
    QVERIFY(r.closest.front().overflow_bytes > 0);
    // A global batch no data-parallel size divides.
    const SearchResult odd = run_search(request("gpt3-175b", "dgx-a100-80gb", 8, 7, 2048));
    QVERIFY(odd.results.empty());
    QVERIFY(count(odd, "training.global_batch_size") > 0);
}

// Issue 28, pattern 4: a production recipe tunes the speed-only knobs, so the search must
// too. Unpinned, each result carries the knobs it chose (in its layout and its label); the
// TP overlap it chose is the fastest of the three for that layout; pinned, the pin holds.
void TestSearch::speed_only_knobs_are_searched_unless_pinned() {
    SearchRequest req = request("llama3-70b", "dgx-h100", 64, 256, 4096);
    req.options.fixed.tp = 8;
    req.options.fixed.sequence_parallel = true;
    req.options.top_k = 5;
    const SearchResult tuned = run_search(req);
    SearchRequest pinned_req = req;
    pin_layout_defaults(pinned_req);
    const SearchResult pinned = run_search(pinned_req);
    QVERIFY(!tuned.results.empty() && !pinned.results.empty());
    // The same space: the knobs are chosen per candidate, not enumerated.
    QCOMPARE(tuned.space_size, pinned.space_size);
    // Recompute modules searched: selective candidates that fit only with more modules count too.
    QVERIFY(tuned.evaluated >= pinned.evaluated);
    QVERIFY(tuned.cost_model_calls > pinned.cost_model_calls);
    // TP8 with SP: overlapping its collectives is faster in the model, so the tuned best is
    // faster than the untuned one and does not keep "none".
    QVERIFY(tuned.results.front().tokens_per_s > pinned.results.front().tokens_per_s);
    for (const SearchHit& h : tuned.results) {
        const std::string label = candidate_label(h.candidate);
        QVERIFY2(label.find("tp overlap " + to_string(h.layout.parallel.tp_comm_overlap)) != std::string::npos,
                 label.c_str());
        QVERIFY(h.layout.parallel.tp_comm_overlap != TpOverlap::None);
        QVERIFY(validate_layout(h.layout, "tuned").valid());
        QCOMPARE(estimate_layout(h.layout).tokens_per_s, h.tokens_per_s);
        for (const TpOverlap v : {TpOverlap::None, TpOverlap::Pipe, TpOverlap::Ring}) {
            Layout other = h.layout;
            other.parallel.tp_comm_overlap = v;
            QVERIFY(estimate_layout(other).tokens_per_s <= h.tokens_per_s);
        }
        if (h.candidate.dp > 1) {
            QVERIFY(label.find("dp overlap") != std::string::npos);
            Layout off = h.layout;
            off.parallel.overlap_grad_reduce = false;
            off.parallel.overlap_param_gather = false;
            QVERIFY(estimate_layout(off).tokens_per_s <= h.tokens_per_s);
        }
    }
    for (const SearchHit& h : pinned.results) {
        QVERIFY(h.layout.parallel.tp_comm_overlap == TpOverlap::None);
        QVERIFY(h.layout.parallel.overlap_grad_reduce && h.layout.parallel.overlap_param_gather);
    }
    // MoE: the dispatcher and the all-to-all overlap are chosen too, and a pin holds.
    SearchRequest moe = request("mixtral-8x7b", "dgx-h100", 16, 64, 4096);
    moe.options.top_k = 10;
    moe.options.fixed.ep = 8;
    for (const SearchHit& h : run_search(moe).results) {
        QVERIFY(candidate_label(h.candidate).find("dispatcher") != std::string::npos);
        QVERIFY(validate_layout(h.layout, "moe").valid());
        QCOMPARE(estimate_layout(h.layout).tokens_per_s, h.tokens_per_s);
    }
    moe.options.knobs.moe_dispatcher = MoeDispatcher::Flex;
    moe.options.knobs.moe_flex_backend = MoeFlexBackend::HybridEP;
    for (const SearchHit& h : run_search(moe).results) {
        QVERIFY(h.layout.parallel.moe_dispatcher == MoeDispatcher::Flex);
        QVERIFY(h.layout.parallel.moe_flex_backend == MoeFlexBackend::HybridEP);
    }
}

// Selective candidates recompute the fewest modules that fit: the tuner starts from every
// applicable module (the least memory) and drops each one whose absence still fits, so
// dropping any module left makes the layout overflow.
void TestSearch::recompute_modules_are_the_fewest_that_fit() {
    // DeepSeek-V3 (dense and MoE layers, MLA) on 256 H100: memory tight enough that some
    // candidates need two modules.
    SearchRequest req = request("deepseek-v3", "dgx-h100", 256, 256, 4096);
    req.options.fixed.recompute = Recompute::Selective;
    req.options.fixed.tp = 2;
    req.options.fixed.pp = 16;
    req.options.fixed.ep = 8;
    req.options.top_k = 20;
    const SearchResult r = run_search(req);
    QVERIFY(!r.results.empty());
    int several = 0;
    for (const SearchHit& h : r.results) {
        const auto& mods = h.layout.training.recompute_modules;
        QVERIFY(estimate_layout(h.layout).fits);
        QCOMPARE(estimate_layout(h.layout).tokens_per_s, h.tokens_per_s);
        if (mods.size() < 2) continue;
        ++several;
        for (std::size_t i = 0; i < mods.size(); ++i) {
            Layout fewer = h.layout;
            fewer.training.recompute_modules.erase(fewer.training.recompute_modules.begin() +
                                                   static_cast<std::ptrdiff_t>(i));
            QVERIFY2(!estimate_layout(fewer).fits, candidate_label(h.candidate).c_str());
        }
    }
    qInfo("%d of %zu results recompute several modules; best: %s", several, r.results.size(),
          candidate_label(r.results.front().candidate).c_str());
    QVERIFY(several > 0);  // the case above must exercise the rule
}

// CUDA graphs: Llama 3 8B on 8 H100 at 1,024 tokens a micro-batch leaves halves whose
// kernels take less time than the host needs to launch them, so capture is chosen where the
// rules allow it, the label says so, and a pin holds.
void TestSearch::cuda_graphs_are_searched_where_capture_is_allowed() {
    SearchRequest req = request("llama3-8b", "dgx-h100", 8, 8, 1024);
    req.options.top_k = 10;
    const SearchResult r = run_search(req);
    QVERIFY(!r.results.empty());
    for (const SearchHit& h : r.results) {
        const std::string label = candidate_label(h.candidate);
        const CudaGraphs g = h.layout.training.cuda_graphs;
        QVERIFY2(label.find(g == CudaGraphs::None ? std::string(", no cuda graphs")
                                                  : ", cuda graphs " + to_string(g)) != std::string::npos,
                 label.c_str());
        QVERIFY2(g != CudaGraphs::None, label.c_str());
        QVERIFY(validate_layout(h.layout, "graphs").valid());
        QCOMPARE(estimate_layout(h.layout).tokens_per_s, h.tokens_per_s);
        Layout eager = h.layout;
        eager.training.cuda_graphs = CudaGraphs::None;
        QVERIFY2(estimate_layout(eager).tokens_per_s < h.tokens_per_s, label.c_str());
    }
    // Full recomputation: Megatron-LM captures it only in a full-iteration graph.
    SearchRequest full = req;
    full.options.fixed.recompute = Recompute::Full;
    for (const SearchHit& h : run_search(full).results) {
        QVERIFY(h.layout.training.cuda_graphs == CudaGraphs::FullIteration);
        QVERIFY(validate_layout(h.layout, "full").valid());
    }
    // A pin holds.
    SearchRequest pinned = req;
    pinned.options.knobs.cuda_graphs = CudaGraphs::None;
    const SearchResult eager = run_search(pinned);
    QVERIFY(!eager.results.empty());
    for (const SearchHit& h : eager.results) QVERIFY(h.layout.training.cuda_graphs == CudaGraphs::None);
    QVERIFY(eager.results.front().tokens_per_s < r.results.front().tokens_per_s);
    // Dropless MoE: never a full-iteration graph (its layers cannot be captured).
    SearchRequest moe = request("mixtral-8x7b", "dgx-h100", 16, 64, 4096);
    moe.options.top_k = 10;
    moe.options.fixed.ep = 8;
    moe.options.fixed.recompute = Recompute::Full;
    for (const SearchHit& h : run_search(moe).results) {
        QVERIFY(h.layout.training.cuda_graphs == CudaGraphs::None);
        QVERIFY(candidate_label(h.candidate).find("cuda graphs") == std::string::npos);
    }
}

// The job's FSDP (search --fsdp-fp32-shards): ZeRO-3 candidates keep the fp32 master as their
// shard, 2 bytes a parameter less, and the layouts the search returns say so and cost as
// ranked; candidates of other stages are unaffected.
void TestSearch::fsdp_fp32_shards_apply_to_zero3_candidates() {
    SearchRequest req = request("llama3-8b", "dgx-h100", 8, 64, 4096);
    req.options.fixed.zero = 3;
    req.options.fixed.pp = 1;
    req.options.fixed.tp = 1;
    req.options.fixed.cp = 1;
    req.options.fixed.mbs = 1;
    req.options.fixed.recompute = Recompute::Full;
    const SearchResult megatron = run_search(req);
    req.options.fsdp_fp32_shards = true;
    const SearchResult torch = run_search(req);
    QVERIFY(!megatron.results.empty() && !torch.results.empty());
    const double params = static_cast<double>(build_layer_graph(req.model).params_total);
    QVERIFY(std::abs((megatron.results.front().peak_bytes - torch.results.front().peak_bytes) - params * 2 / 8) <
            1e-3 * params);
    for (const auto& h : torch.results) {
        QVERIFY(h.layout.training.fsdp_fp32_shards);
        QCOMPARE(estimate_layout(h.layout).tokens_per_s, h.tokens_per_s);
    }
    req.options.fixed.zero = 1;
    for (const auto& h : run_search(req).results) QVERIFY(!h.layout.training.fsdp_fp32_shards);
}

QTEST_APPLESS_MAIN(TestSearch)
#include "tst_search.moc"
