// llmwb-soak: an engine soak. For the given time it keeps the serving Engine busy with random
// requests (random prompt and output lengths, greedy and seeded sampling, shared prefixes so
// the prefix cache has hits), aborts random requests at random moments and re-plans the engine
// live as the app's Tuning dock does (max_num_seqs / max_num_batched_tokens, a
// gpu_memory_utilization budget, an explicit block count, speculative k). Prints RSS and
// counters at every interval and at the end, each in one reference state (the queue drained,
// the initial plan, a fresh lazily committed KV pool), and at the end:
//   RSS after warm-up vs at the end (flat within 5%?), every block back in the pool (free ==
//   total), the engine's consistency checks, requests completed / aborted / refused.
// Exit status 1 when a check fails. scripts/soak.sh runs it (not part of CI).
//   llmwb-soak [--minutes M | --seconds S] [--model PATH] [--threads N] [--seed S]
//              [--concurrency N] [--interval-s S] [--warmup-s S]
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/model/demo_model.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_loaders.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/serving/engine.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    double seconds = 600;
    std::string model; // empty: the demo model
    int threads = 1;
    uint64_t seed = 1;
    int concurrency = 24;
    double interval_s = 60;
    double warmup_s = -1; // -1: max(60 s, a tenth of the run), at most a fifth of it
};

double rss_mb() {
    long pages = 0, resident = 0;
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    std::fclose(f);
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// Bytes malloc has handed out and not had back (a leak grows this; fragmentation only RSS).
double heap_mb() {
    return double(mallinfo2().uordblks) / (1024.0 * 1024.0);
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has = i + 1 < argc;
        auto num = [&](double lo, double hi, double& out) {
            if (!has)
                return false;
            char* end = nullptr;
            const double v = std::strtod(argv[++i], &end);
            if (!end || *end || !(v >= lo && v <= hi))
                return false;
            out = v;
            return true;
        };
        double v = 0;
        bool ok = true;
        if (a == "--minutes")
            ok = num(0.01, 100000, v), o.seconds = v * 60;
        else if (a == "--seconds")
            ok = num(1, 6000000, v), o.seconds = v;
        else if (a == "--model" && has)
            o.model = argv[++i];
        else if (a == "--threads")
            ok = num(1, 256, v), o.threads = int(v);
        else if (a == "--seed")
            ok = num(0, 1e15, v), o.seed = uint64_t(v);
        else if (a == "--concurrency")
            ok = num(1, 1024, v), o.concurrency = int(v);
        else if (a == "--interval-s")
            ok = num(1, 86400, v), o.interval_s = v;
        else if (a == "--warmup-s")
            ok = num(0, 86400, v), o.warmup_s = v;
        else
            ok = false;
        if (!ok) {
            std::fprintf(stderr, "usage: llmwb-soak [--minutes M | --seconds S] [--model PATH] "
                                 "[--threads N] [--seed S] [--concurrency N] [--interval-s S] "
                                 "[--warmup-s S]\n");
            return false;
        }
    }
    if (o.warmup_s < 0) // a minute, a tenth of a long run, a fifth of a short one
        o.warmup_s = std::min(std::max(60.0, o.seconds / 10), o.seconds / 5);
    return true;
}

struct Counters {
    int64_t submitted = 0, refused = 0, completed = 0, finished_other = 0, aborted = 0;
    int64_t replans = 0, replan_errors = 0, consistency_failures = 0, steps = 0, tokens = 0;
};

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o))
        return 2;
    std::string path = o.model;
    if (path.empty()) {
        const auto dir = std::filesystem::temp_directory_path() / "llmwb-soak";
        auto demo = ensure_demo_model(dir.string());
        if (!demo) {
            std::fprintf(stderr, "error: %s\n", demo.message().c_str());
            return 1;
        }
        path = *demo;
    }
    auto loaded = load_model(path);
    if (!loaded) {
        std::fprintf(stderr, "error: %s\n", loaded.message().c_str());
        return 1;
    }
    auto tok = Tokenizer::create((*loaded)->tokenizer);
    if (!tok) {
        std::fprintf(stderr, "error: tokenizer: %s\n", tok.message().c_str());
        return 1;
    }
    kernels::ThreadPool pool(o.threads);
    CpuTransformer model(**loaded, pool);
    EngineConfig cfg;
    cfg.max_num_seqs = 16;
    cfg.max_num_batched_tokens = 256;
    cfg.memory.utilization = 0.5;
    auto created = Engine::create(model, **tok, cfg);
    if (!created) {
        std::fprintf(stderr, "error: %s\n", created.message().c_str());
        return 1;
    }
    Engine& engine = **created;
    const int32_t vocab = model.vocab_size();
    const int64_t context = engine.context_limit();
    std::printf("llmwb-soak: %s, %.0f s, %d threads, concurrency %d, seed %llu, context %lld, "
                "pool %d blocks\n",
                path.c_str(), o.seconds, o.threads, o.concurrency,
                static_cast<unsigned long long>(o.seed), static_cast<long long>(context),
                engine.kv_manager().pool().num_blocks());
    std::fflush(stdout);

    std::mt19937_64 rng(o.seed);
    auto uniform = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    // A few shared prefixes (system prompts) so that the prefix cache hits and evicts.
    std::vector<std::vector<int32_t>> prefixes(4);
    for (auto& p : prefixes) {
        p.resize(size_t(uniform(16, 96)));
        for (auto& t : p)
            t = int32_t(uniform(0, vocab - 1));
    }

    Counters c;
    std::unordered_set<RequestId> live;
    StepOutputs out;
    const auto t0 = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    double next_report = o.interval_s;
    double rss_warm = -1, rss_peak = 0, heap_warm = 0;
    // The last reference reading at or before the middle of the run after warm-up: a leak grows
    // in the second half as in the first; a buffer reaching its high-water mark does not.
    double rss_mid = -1, heap_mid = 0;
    const double mid_s = o.warmup_s + (o.seconds - o.warmup_s) / 2;
    int64_t next_replan = uniform(20, 400), next_check = 1000;

    auto report = [&](const char* what) {
        const double rss = rss_mb();
        rss_peak = std::max(rss_peak, rss);
        const BlockPool& bp = engine.kv_manager().pool();
        std::printf(
            "%-8s t=%6.0fs rss=%7.1f MB heap=%7.1f MB  steps=%lld tokens=%lld completed=%lld "
            "aborted=%lld refused=%lld replans=%lld live=%zu blocks free/total=%d/%d\n",
            what, elapsed(), rss, heap_mb(), static_cast<long long>(c.steps),
            static_cast<long long>(c.tokens), static_cast<long long>(c.completed),
            static_cast<long long>(c.aborted), static_cast<long long>(c.refused),
            static_cast<long long>(c.replans), live.size(), bp.num_free(), bp.num_blocks());
        std::fflush(stdout);
        return rss;
    };

    // One engine step and its outputs counted (tokens, completions, other ends).
    auto step_and_count = [&] {
        engine.step(out);
        ++c.steps;
        for (const RequestOutput& r : out.outputs) {
            c.tokens += int64_t(r.new_token_ids.size());
            if (!r.finished)
                continue;
            live.erase(r.id);
            if (r.finish == FinishReason::Stop || r.finish == FinishReason::Length)
                ++c.completed;
            else
                ++c.finished_other;
        }
    };
    // RSS is compared in one reference state: the engine drained (nothing new; every live
    // request runs to its end) and re-planned to the initial pool and limits, speculation off.
    int64_t drain_steps = 0;
    const int32_t ref_blocks = engine.kv_manager().pool().num_blocks();
    auto reference = [&](const char* what) {
        while (engine.has_unfinished() && drain_steps < 10000000) {
            step_and_count();
            ++drain_steps;
        }
        engine.set_limits(cfg.max_num_seqs, cfg.max_num_batched_tokens);
        (void)engine.set_speculative(SpeculativeConfig{});
        // The KV storage is committed lazily (a block costs RAM once written): a fresh pool
        // (one block fewer, then the reference size again) leaves the blocks the run happened
        // to touch out of the comparison, which then measures everything else.
        for (int32_t n : {ref_blocks - 1, ref_blocks}) {
            if (Status st = engine.set_num_blocks(n); !st)
                std::printf("reference plan: %s\n", st.message().c_str());
            engine.step(out); // applies the plan (nothing to run)
        }
        return report(what);
    };

    while (elapsed() < o.seconds) {
        // Keep the engine busy.
        while (int(live.size()) < o.concurrency) {
            std::vector<int32_t> prompt;
            if (chance(0.5))
                prompt = prefixes[size_t(uniform(0, int64_t(prefixes.size()) - 1))];
            const int64_t n = uniform(1, chance(0.1) ? 600 : 120);
            for (int64_t i = 0; i < n; ++i)
                prompt.push_back(int32_t(uniform(0, vocab - 1)));
            SamplingParams p;
            p.max_tokens = int(uniform(1, chance(0.1) ? 512 : 96));
            p.ignore_eos = chance(0.7);
            if (chance(0.5)) {
                p.temperature = 0.8f;
                p.top_p = 0.9f;
                p.seed = uint64_t(uniform(0, 1000000));
            } else {
                p.temperature = 0;
            }
            if (chance(0.1))
                p.logprobs = 2;
            ++c.submitted;
            auto id = engine.add_request(std::move(prompt), p);
            if (!id) {
                ++c.refused; // e.g. a prompt that leaves no room in the context
                continue;
            }
            live.insert(*id);
        }
        step_and_count();
        // Random aborts (a user pressing Stop, a client going away).
        if (!live.empty() && chance(0.05)) {
            auto it = live.begin();
            std::advance(it, uniform(0, int64_t(live.size()) - 1));
            if (engine.abort(*it))
                ++c.aborted;
            live.erase(it);
        }
        // Live re-plans, as the Tuning dock makes them.
        if (c.steps >= next_replan) {
            next_replan = c.steps + uniform(20, 400);
            ++c.replans;
            Status st = Ok{};
            switch (uniform(0, 3)) {
            case 0:
                engine.set_limits(int32_t(uniform(1, 48)), int32_t(uniform(16, 1024)));
                break;
            case 1: {
                MemoryBudget b;
                b.utilization = double(uniform(5, 90)) / 100.0;
                st = engine.set_memory_budget(b);
                break;
            }
            case 2: {
                const int32_t lo = std::max<int32_t>(engine.min_blocks_for_live(), 8);
                st = engine.set_num_blocks(int32_t(uniform(lo, lo + 600)));
                break;
            }
            default: {
                SpeculativeConfig s;
                const int64_t k = uniform(0, 4);
                if (k > 0) {
                    s.method = SpeculativeMethod::Ngram;
                    s.num_speculative_tokens = int32_t(k);
                }
                st = engine.set_speculative(s);
                break;
            }
            }
            if (!st)
                ++c.replan_errors;
        }
        if (c.steps >= next_check) {
            next_check = c.steps + 1000;
            if (Status st = engine.check_consistency(); !st) {
                ++c.consistency_failures;
                std::printf("consistency: %s\n", st.message().c_str());
            }
        }
        if (rss_warm < 0 && elapsed() >= o.warmup_s)
            rss_warm = reference("warm-up"), heap_warm = heap_mb();
        if (elapsed() >= next_report) {
            next_report += o.interval_s;
            const double rss = reference("minute");
            if (rss_warm >= 0 && elapsed() <= mid_s + o.interval_s / 2)
                rss_mid = rss, heap_mid = heap_mb();
        }
    }

    const double rss_end = reference("end");
    const double heap_end = heap_mb();
    if (rss_warm < 0)
        rss_warm = rss_end, heap_warm = heap_end;
    const BlockPool& bp = engine.kv_manager().pool();
    const Status consistent = engine.check_consistency();
    const double growth = rss_warm > 0 ? (rss_end - rss_warm) / rss_warm * 100.0 : 0;
    const bool rss_ok = growth <= 5.0;
    const bool pool_ok = bp.num_free() == bp.num_blocks() && !engine.has_unfinished();
    std::printf("\n== soak result ==\n");
    std::printf("duration             %.0f s (+ %lld drain steps)\n", elapsed(),
                static_cast<long long>(drain_steps));
    std::printf("steps / tokens       %lld / %lld\n", static_cast<long long>(c.steps),
                static_cast<long long>(c.tokens));
    std::printf("requests             submitted %lld, completed %lld, aborted %lld, other finish "
                "%lld, refused at add %lld\n",
                static_cast<long long>(c.submitted), static_cast<long long>(c.completed),
                static_cast<long long>(c.aborted), static_cast<long long>(c.finished_other),
                static_cast<long long>(c.refused));
    std::printf("re-plans             %lld (%lld refused by the engine)\n",
                static_cast<long long>(c.replans), static_cast<long long>(c.replan_errors));
    std::printf("RSS                  after warm-up %.1f MB, end %.1f MB, peak %.1f MB: %+.2f%% "
                "(%s)\n",
                rss_warm, rss_end, rss_peak, growth, rss_ok ? "flat within 5%" : "GREW > 5%");
    if (rss_mid >= 0)
        std::printf("second half          RSS %.1f -> %.1f MB (%+.2f%%), heap %.1f -> %.1f MB\n",
                    rss_mid, rss_end, (rss_end - rss_mid) / rss_mid * 100.0, heap_mid, heap_end);
    std::printf("malloc heap in use   after warm-up %.1f MB, end %.1f MB: %+.2f%%\n", heap_warm,
                heap_end, heap_warm > 0 ? (heap_end - heap_warm) / heap_warm * 100.0 : 0.0);
    std::printf("KV pool at the end   %d free of %d blocks (%s)\n", bp.num_free(), bp.num_blocks(),
                pool_ok ? "every block back" : "BLOCKS MISSING");
    std::printf("consistency checks   %lld failures during the run; at the end: %s\n",
                static_cast<long long>(c.consistency_failures),
                consistent ? "ok" : consistent.message().c_str());
    const bool ok = rss_ok && pool_ok && consistent && c.consistency_failures == 0;
    std::printf("RESULT %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
