// server_load: a load figure for the report, not a ctest — N concurrent streaming clients on
// loopback against the in-process server (demo model, CPU), a share of them disconnecting
// mid-stream (an abort storm). Prints completed / aborted-by-client / errors, tokens, wall time,
// and whether the engine is idle with no used block afterwards (no block leaked).
//   server_load [clients=256] [max_tokens=64] [disconnect_every=4]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "server_fixture.h"

using namespace llmwb;
using namespace llmwb::server_test;

int main(int argc, char** argv) {
    const int clients = argc > 1 ? std::atoi(argv[1]) : 256;
    const int max_tokens = argc > 2 ? std::atoi(argv[2]) : 64;
    const int disconnect_every = argc > 3 ? std::atoi(argv[3]) : 4;
    FixtureOptions fo;
    fo.max_num_seqs = 64;
    fo.http_threads = clients + 16;
    fo.max_waiting = 0;
    ServerFixture f(fo);
    if (!f.error.empty()) {
        std::fprintf(stderr, "server_load: %s\n", f.error.c_str());
        return 1;
    }
    std::atomic<int> completed{0}, disconnected{0}, errors{0};
    std::atomic<int64_t> chunks{0};
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < clients; ++i)
        threads.emplace_back([&, i] {
            const bool leave = disconnect_every > 0 && i % disconnect_every == 0;
            const std::string body = nlohmann::json{{"prompt", "The model"},
                                                    {"max_tokens", max_tokens},
                                                    {"ignore_eos", true},
                                                    {"stream", true},
                                                    {"seed", i},
                                                    {"stream_options", {{"include_usage", true}}}}
                                         .dump();
            int status = 0;
            const std::string raw = post_stream(f, "/v1/completions", body, leave ? 3 : 0, &status);
            int64_t n = 0;
            for (size_t p = raw.find("data: {"); p != std::string::npos;
                 p = raw.find("data: {", p + 1))
                ++n;
            chunks += n;
            if (leave)
                ++disconnected;
            else if (status == 200 && raw.find("data: [DONE]") != std::string::npos &&
                     raw.find("\"completion_tokens\":" + std::to_string(max_tokens) + "}") !=
                         std::string::npos)
                ++completed;
            else if (++errors <= 3)
                std::fprintf(stderr, "error: status %d, %zu bytes: %s\n", status, raw.size(),
                             raw.substr(raw.size() > 300 ? raw.size() - 300 : 0).c_str());
        });
    for (auto& t : threads)
        t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string why;
    const bool clean = f.engine_idle_and_clean(30, why);
    std::printf("clients %d (max_tokens %d, every %d-th disconnects after 3 chunks)\n", clients,
                max_tokens, disconnect_every);
    std::printf("completed %d, disconnected %d, errors %d, chunks %lld, %.2f s, %.0f chunks/s\n",
                completed.load(), disconnected.load(), errors.load(),
                static_cast<long long>(chunks.load()), s, static_cast<double>(chunks.load()) / s);
    std::printf("engine after the run: %s (%s)\n",
                clean ? "idle, no block used, consistent" : "NOT CLEAN", why.c_str());
    return clean && errors == 0 ? 0 : 1;
}
