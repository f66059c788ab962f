#include "core/search/search.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "core/cost/cost_model.h"
#include "core/search/search_space.h"
#include "core/search/search_worker.h"

namespace meshwork::search {

namespace {

int thread_count(const SearchOptions& o, std::size_t tasks) {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const int wanted = o.threads > 0 ? o.threads : static_cast<int>(hw);
    return std::max(1, std::min<int>(wanted, static_cast<int>(std::max<std::size_t>(1, tasks))));
}

SearchHit make_hit(const Scored& s, const SearchRequest& req, const CostModel& cost) {
    SearchHit h;
    h.candidate = s.candidate;
    h.layout = candidate_layout(s.candidate, req);
    cost.estimate(h.layout, h.estimate);
    h.step_time_s = h.estimate.step_time_s;
    h.tokens_per_s = h.estimate.tokens_per_s;
    h.mfu = h.estimate.mfu;
    h.peak_bytes = s.peak_bytes;
    return h;
}

// Re-costs the analytical front-runners with the reranker and orders them again.
void rerank(std::vector<SearchHit>& hits, const RerankFn& fn) {
    std::vector<Scored> order;
    for (std::size_t i = 0; i < hits.size(); ++i) {
        SearchHit& h = hits[i];
        fn(h.layout, h.estimate);
        h.step_time_s = h.estimate.step_time_s;
        h.tokens_per_s = h.estimate.tokens_per_s;
        h.mfu = h.estimate.mfu;
        std::int64_t peak = 0;
        for (const auto& st : h.estimate.stages) peak = std::max(peak, st.peak_bytes);
        h.peak_bytes = peak;
        Scored s;
        s.tokens_per_s = h.tokens_per_s;
        s.peak_bytes = h.peak_bytes;
        s.ordinal = i;  // the analytical rank breaks the remaining ties
        order.push_back(s);
    }
    std::vector<std::size_t> idx(hits.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(),
              [&](std::size_t a, std::size_t b) { return ranks_before(order[a], order[b]); });
    std::vector<SearchHit> sorted;
    for (std::size_t i : idx) sorted.push_back(std::move(hits[i]));
    hits = std::move(sorted);
}

}  // namespace

SearchResult run_search(const SearchRequest& req, const SearchHooks& hooks) {
    const auto started = std::chrono::steady_clock::now();
    const SearchSpace space(req);
    const CostModel cost(req.model, req.cluster);
    const SearchOptions& o = req.options;
    const auto top_k = static_cast<std::size_t>(std::max(1, o.top_k));
    const std::size_t keep =
        hooks.rerank ? std::max(top_k, static_cast<std::size_t>(
                                           hooks.rerank_top > 0 ? hooks.rerank_top : 4 * o.top_k))
                     : top_k;

    const int n_threads = thread_count(o, space.tasks().size());
    std::vector<SearchWorker> workers;
    workers.reserve(static_cast<std::size_t>(n_threads));
    for (int i = 0; i < n_threads; ++i) workers.emplace_back(req, space, cost, keep);

    std::atomic<std::size_t> next_task{0};
    std::atomic<std::int64_t> processed{0};
    std::atomic<bool> stop{false};
    std::atomic<int> running{n_threads};
    std::mutex mutex;
    std::condition_variable finished;
    std::exception_ptr failure;
    bool cancelled = false;

    {
        std::vector<std::jthread> threads;
        for (int i = 0; i < n_threads; ++i) {
            threads.emplace_back([&, i] {
                SearchWorker& w = workers[static_cast<std::size_t>(i)];
                try {
                    for (;;) {
                        const std::size_t t = next_task.fetch_add(1);
                        if (t >= space.tasks().size() || stop.load()) break;
                        if (!w.run_task(t, stop, processed)) break;
                    }
                } catch (...) {
                    const std::lock_guard lock(mutex);
                    if (!failure) failure = std::current_exception();
                    stop = true;
                }
                if (running.fetch_sub(1) == 1) {
                    const std::lock_guard lock(mutex);
                    finished.notify_all();
                }
            });
        }
        // The calling thread reports progress and relays a stop request.
        std::unique_lock lock(mutex);
        while (running.load() > 0) {
            finished.wait_for(lock, hooks.progress_interval, [&] { return running.load() == 0; });
            if (hooks.stop.stop_requested() && !stop.load()) {
                stop = true;
                cancelled = true;
            }
            if (hooks.progress && running.load() > 0) {
                lock.unlock();
                hooks.progress(processed.load(), space.size());
                lock.lock();
            }
        }
    }
    if (failure) std::rethrow_exception(failure);

    SearchResult r;
    r.space_size = space.size();
    r.threads = n_threads;
    TopK best(keep, &ranks_before);
    TopK closest(3, &closer_to_fitting);
    RejectCounts counts{};
    for (const SearchWorker& w : workers) {
        best.merge(w.best());
        closest.merge(w.closest());
        r.evaluated += w.evaluated();
        r.cost_model_calls += w.cost_model_calls();
        for (std::size_t i = 0; i < kRejectCount; ++i) counts[i] += w.rejected()[i];
    }
    r.processed = r.evaluated;
    for (std::size_t i = 0; i < kRejectCount; ++i) {
        if (counts[i] == 0) continue;
        r.rejected[reject_name(static_cast<Reject>(i))] = counts[i];
        r.processed += counts[i];
    }
    r.cancelled = cancelled || (hooks.stop.stop_requested() && r.processed < r.space_size);
    if (hooks.progress) hooks.progress(r.processed, r.space_size);

    for (const Scored& s : best.items()) r.results.push_back(make_hit(s, req, cost));
    if (hooks.rerank && !r.results.empty()) {
        rerank(r.results, hooks.rerank);
        r.ranked_by = "cost_model+" + hooks.rerank_name;
    }
    if (r.results.size() > top_k) r.results.resize(top_k);
    for (const Scored& s : closest.items()) {
        NearMiss m;
        m.candidate = s.candidate;
        m.layout = candidate_layout(s.candidate, req);
        m.peak_bytes = s.peak_bytes;
        m.overflow_bytes = s.overflow_bytes;
        m.tokens_per_s = s.tokens_per_s;
        r.closest.push_back(std::move(m));
    }
    r.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
}

}  // namespace meshwork::search
