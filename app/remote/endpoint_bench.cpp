#include "app/remote/endpoint_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "engine/serving/bench_workload.h"

namespace llmwb::remote {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0, Clock::time_point t) {
    return std::chrono::duration<double>(t - t0).count();
}

} // namespace

void put_server_figures(BenchResult& res, const std::optional<ServerFigures>& server) {
    res.available = {};
    res.available.engine = false; // the block pool, steps and batches are the server's own
    res.available.kv_usage = server && server->mean_kv_usage && server->peak_kv_usage;
    res.available.preemptions = server && server->preemptions;
    res.available.prefix_cache =
        server && server->prefix_cache_queries && server->prefix_cache_hits;
    res.num_blocks = res.block_size = 0;
    res.kv_waste_vs_contiguous = res.kv_waste_vs_allocated = res.contiguous_waste = 0;
    res.steps = 0;
    res.mean_batch_size = 0;
    res.mean_kv_usage = res.available.kv_usage ? *server->mean_kv_usage : 0;
    res.peak_kv_usage = res.available.kv_usage ? *server->peak_kv_usage : 0;
    res.preemptions = res.available.preemptions ? *server->preemptions : 0;
    res.prefix_cache_queries = res.available.prefix_cache ? *server->prefix_cache_queries : 0;
    res.prefix_cache_hits = res.available.prefix_cache ? *server->prefix_cache_hits : 0;
    res.prefix_cache_hit_rate = res.prefix_cache_queries > 0
                                    ? static_cast<double>(res.prefix_cache_hits) /
                                          static_cast<double>(res.prefix_cache_queries)
                                    : 0;
}

Result<EndpointBenchRun> run_endpoint_bench(const std::vector<EndpointBenchRequest>& requests,
                                            const EndpointBenchOptions& o) {
    const auto n = static_cast<int32_t>(requests.size());
    const int32_t cap = o.max_concurrency > 0 ? o.max_concurrency : std::max(1, o.max_clients);
    const int32_t workers = std::max(1, std::min(n, cap));
    std::vector<std::unique_ptr<OpenAiClient>> clients;
    for (int32_t w = 0; w < workers; ++w) {
        auto c = OpenAiClient::create(o.endpoint);
        if (!c)
            return c.error();
        clients.push_back(std::move(c.value()));
    }
    const std::vector<double> arrivals = make_arrival_times(
        n, std::isinf(o.request_rate) ? 0.0 : o.request_rate, o.seed, o.burstiness);

    EndpointBenchRun run;
    run.rows.resize(requests.size());
    run.records.resize(requests.size());
    run.token_s.resize(requests.size());
    std::mutex mu;
    std::condition_variable cv;
    int32_t released = 0, taken = 0, done = 0;
    const Clock::time_point t0 = Clock::now();

    auto work = [&](OpenAiClient& client) {
        while (true) {
            int32_t i = 0;
            {
                std::unique_lock<std::mutex> lock(mu);
                cv.wait(lock, [&] { return taken < released || taken == n; });
                if (taken == n)
                    return;
                i = taken++;
            }
            const EndpointBenchRequest& rq = requests[static_cast<size_t>(i)];
            CompletionRequest cr;
            cr.type = o.type;
            if (o.type == EndpointType::Chat)
                cr.messages = {{"user", rq.prompt}};
            else
                cr.prompt = rq.prompt;
            cr.max_tokens = rq.output_len;
            cr.temperature = 0.0;
            cr.ignore_eos = true;
            cr.stream = true;
            cr.include_usage = true;
            const Clock::time_point sent = Clock::now();
            auto r = client.complete(cr);
            BenchRequestRow& row = run.rows[static_cast<size_t>(i)];
            EndpointRequestRecord& rec = run.records[static_cast<size_t>(i)];
            row.index = i;
            row.arrival_s = since(t0, sent);
            row.input_tokens = rq.input_tokens;
            if (!r) {
                rec.error = r.message();
                row.error = r.message();
            } else {
                rec.out = std::move(r.value());
                const CompletionResult& c = rec.out;
                // Times from the request's own start (CompletionResult::start) on the run's clock.
                const double start = since(t0, c.start);
                row.arrival_s = start;
                row.first_token_s = start + c.ttft_s;
                row.finish_s = start + c.latency_s;
                if (c.usage && c.usage->prompt_tokens > 0)
                    row.input_tokens =
                        static_cast<int32_t>(std::min<int64_t>(c.usage->prompt_tokens, INT32_MAX));
                if (c.usage) {
                    row.output_tokens = static_cast<int32_t>(
                        std::min<int64_t>(c.usage->completion_tokens, INT32_MAX));
                    rec.output_count_source = "usage";
                } else if (o.count_tokens) {
                    row.output_tokens = o.count_tokens(c.text);
                    rec.output_count_source = "tokenizer";
                } else {
                    row.output_tokens = c.token_chunks;
                    rec.output_count_source = "chunks";
                }
                for (double t : c.chunk_s)
                    run.token_s[static_cast<size_t>(i)].push_back(start + t);
            }
            std::lock_guard<std::mutex> lock(mu);
            ++done;
            if (o.on_progress)
                o.on_progress(done, n);
        }
    };

    // The server's /metrics: one scrape before the run, then every interval while it runs.
    std::unique_ptr<OpenAiClient> scraper;
    RemoteEngineMetrics server_metrics(o.endpoint.model);
    std::optional<RemoteMetricsSample> first_scrape, last_scrape;
    std::vector<double> kv_during;
    if (o.scrape_metrics) {
        auto c = OpenAiClient::create(o.endpoint);
        if (!c)
            return c.error();
        scraper = std::move(c.value());
        auto s0 = scrape_metrics(*scraper, server_metrics, 0.0);
        if (s0)
            first_scrape = *s0;
        else
            run.metrics_error = s0.message();
    }
    std::mutex smu; // the scraper's own lock and signal (the workers' cv stays theirs)
    std::condition_variable scv;
    bool finished = false;
    std::thread scrape_thread;
    int32_t scrapes_during = 0;
    if (first_scrape) {
        scrape_thread = std::thread([&] {
            std::unique_lock<std::mutex> lock(smu);
            const auto every = std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(std::max(0.05, o.scrape_interval_s)));
            while (!scv.wait_for(lock, every, [&] { return finished; })) {
                lock.unlock();
                auto s = scrape_metrics(*scraper, server_metrics, since(t0, Clock::now()));
                lock.lock();
                if (!s || finished)
                    continue;
                ++scrapes_during;
                if (s->kv_usage)
                    kv_during.push_back(*s->kv_usage);
            }
        });
    }

    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(workers));
    for (int32_t w = 0; w < workers; ++w)
        pool.emplace_back(work, std::ref(*clients[static_cast<size_t>(w)]));
    for (int32_t i = 0; i < n; ++i) {
        const auto due = t0 + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(arrivals[static_cast<size_t>(i)]));
        std::this_thread::sleep_until(due);
        {
            std::lock_guard<std::mutex> lock(mu);
            released = i + 1;
        }
        cv.notify_one();
    }
    cv.notify_all();
    for (std::thread& t : pool)
        t.join();
    const double duration = since(t0, Clock::now());
    if (scrape_thread.joinable()) {
        {
            std::lock_guard<std::mutex> lock(smu);
            finished = true;
        }
        scv.notify_all();
        scrape_thread.join();
        auto s1 = scrape_metrics(*scraper, server_metrics, since(t0, Clock::now()));
        if (s1)
            last_scrape = *s1;
        else
            run.metrics_error = s1.message();
    }
    if (first_scrape && last_scrape) {
        ServerFigures f;
        f.server_kind = last_scrape->server_kind;
        f.scrapes = scrapes_during;
        if (!kv_during.empty()) {
            double sum = 0, peak = 0;
            for (double k : kv_during) {
                sum += k;
                peak = std::max(peak, k);
            }
            f.mean_kv_usage = sum / static_cast<double>(kv_during.size());
            f.peak_kv_usage = peak;
        }
        auto delta = [](const std::optional<double>& a,
                        const std::optional<double>& b) -> std::optional<int64_t> {
            if (!a || !b || *b < *a)
                return std::nullopt;
            return static_cast<int64_t>(std::llround(*b - *a));
        };
        f.preemptions = delta(first_scrape->preemptions_total, last_scrape->preemptions_total);
        f.prefix_cache_queries = delta(first_scrape->prefix_cache_queries_total,
                                       last_scrape->prefix_cache_queries_total);
        f.prefix_cache_hits =
            delta(first_scrape->prefix_cache_hits_total, last_scrape->prefix_cache_hits_total);
        run.server = f;
    }

    BenchResult& res = run.result;
    res.request_rate = o.request_rate;
    res.burstiness = o.burstiness;
    res.max_concurrency = o.max_concurrency;
    res.duration_s = duration;
    std::vector<double> itls_ms;
    for (size_t i = 0; i < run.rows.size(); ++i) {
        if (!run.rows[i].error.empty()) {
            ++res.failed;
            continue;
        }
        ++res.completed;
        for (double s : run.records[i].out.itl_s)
            itls_ms.push_back(s * 1000.0);
    }
    put_request_figures(res, run.rows, run.token_s, itls_ms, o.percentiles);
    put_server_figures(res, run.server);
    return run;
}

} // namespace llmwb::remote
