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
    return run;
}

} // namespace llmwb::remote
