// test_serving_metrics_exposition OUT_FILE [--bench]
//
// Writes ServingMetrics' Prometheus exposition after a real engine run (the scenario of
// test_serving_metrics_scenario.h: preemptions, speculative drafts, stop / length / aborts) to
// OUT_FILE, for prometheus_parse_test.mjs. With --bench it then prints what observing costs the
// engine thread: observe_step per step (and per output) with 64 concurrent requests, beside the
// engine step itself, and render_prometheus — a figure, never an assertion.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/mini_test.h"
#include "test_serving_metrics_scenario.h"

using namespace llmwb;

namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

int bench() {
    EngineConfig c;
    c.block_size = 16;
    c.max_num_seqs = 64;
    c.max_num_batched_tokens = 1024;
    c.memory.num_blocks = 1024;
    auto e = test::serving_engine(c);
    ServingMetrics metrics("bench");
    const auto prompts = test::scenario_prompts(e->executor().vocab_size());
    for (int i = 0; i < 64; ++i)
        if (!e->add_request(prompts[static_cast<size_t>(i) % prompts.size()],
                            test::scenario_greedy(64))
                 .ok())
            return 1;
    StepOutputs out;
    double observe_us = 0, step_us = 0, max_observe_us = 0;
    int64_t steps = 0, outputs = 0;
    while (e->has_unfinished()) {
        const auto t0 = Clock::now();
        e->step(out);
        const auto t1 = Clock::now();
        metrics.observe_step(out, *e);
        const auto t2 = Clock::now();
        step_us += us_between(t0, t1);
        observe_us += us_between(t1, t2);
        max_observe_us = std::max(max_observe_us, us_between(t1, t2));
        outputs += static_cast<int64_t>(out.outputs.size());
        ++steps;
    }
    constexpr int kRenders = 200;
    size_t bytes = 0;
    const auto r0 = Clock::now();
    for (int i = 0; i < kRenders; ++i)
        bytes += metrics.render_prometheus().size();
    const auto r1 = Clock::now();
    std::printf("observe_step: %.2f us per step (max %.2f us), %.3f us per output; %lld steps, "
                "%.1f outputs per step\n",
                observe_us / steps, max_observe_us, observe_us / std::max<int64_t>(1, outputs),
                static_cast<long long>(steps), double(outputs) / steps);
    std::printf("engine step:  %.1f us per step (tiny test model, CPU): observe_step is %.3f%% "
                "of it\n",
                step_us / steps, 100.0 * observe_us / step_us);
    std::printf("render_prometheus: %.1f us per scrape (%zu bytes)\n",
                us_between(r0, r1) / kRenders, bytes / kRenders);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s OUT_FILE [--bench]\n", argv[0]);
        return 2;
    }
    try {
        ServingMetrics metrics("llmwb-demo");
        const test::MetricsScenario s = test::run_metrics_scenario(metrics);
        std::ofstream f(argv[1], std::ios::binary);
        f << s.exposition;
        if (!f.good()) {
            std::fprintf(stderr, "cannot write %s\n", argv[1]);
            return 1;
        }
        if (argc > 2 && std::strcmp(argv[2], "--bench") == 0)
            return bench();
    } catch (const mini_test::Abort&) {
        return 1; // the failure was printed
    }
    return mini_test::failures() == 0 ? 0 : 1;
}
