// One `llmwb serve` stack in-process for the server tests: the demo model on the CPU, an Engine,
// a ServingLoop and an OpenAiServer on an ephemeral loopback port with an API key, a small body
// limit and a small waiting limit. Built once, on first use.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "app/cli/cli_model.h"
#include "app/server/openai_server.h"
#include "app/server/serving_loop.h"
#include "support/mini_test.h"

namespace llmwb::server_test {

inline constexpr const char* kKey = "sk-test-key";
inline constexpr size_t kBodyLimit = 64 * 1024;
inline constexpr int kMaxWaiting = 2;

struct FixtureOptions {
    int32_t max_num_seqs = 16;
    int http_threads = 24;
    int32_t max_waiting = kMaxWaiting;
    int request_timeout_s = 0;
};

struct ServerFixture {
    mini_test::TempDir dir{"llmwb-server-test"};
    std::unique_ptr<cli::CliModel> model;
    std::unique_ptr<Engine> engine;
    std::unique_ptr<ServingMetrics> metrics;
    std::unique_ptr<ServingLoop> loop;
    std::unique_ptr<OpenAiServer> server;
    std::thread http;
    int port = 0;
    std::string error; // non-empty: the fixture could not be built

    explicit ServerFixture(const FixtureOptions& options = {});
    ~ServerFixture();

    // A client with the key (or without one: key = "").
    std::unique_ptr<httplib::Client> client(const std::string& key = kKey) const;
    // Engine checks between steps: no unfinished request, no used block, consistent pool.
    // Waits up to `seconds` for the engine to become idle.
    bool engine_idle_and_clean(double seconds, std::string& why) const;
};

ServerFixture& fixture();
// The fixture, its start-up error (if any) printed once per caller.
ServerFixture& ready();

// POST `body` as JSON; status and parsed body (discarded when not JSON).
struct Reply {
    int status = 0;
    nlohmann::json body;
    std::string raw;
    httplib::Headers headers;
};
Reply post(const ServerFixture& f, const std::string& path, const std::string& body,
           const std::string& key = kKey, const std::string& content_type = "application/json");
Reply get(const ServerFixture& f, const std::string& path, const std::string& key = kKey);
// A streamed POST: the raw bytes; `stop_after` > 0 closes the connection after that many
// receive callbacks (a client that goes away).
std::string post_stream(const ServerFixture& f, const std::string& path, const std::string& body,
                        int stop_after = 0, int* status = nullptr);

} // namespace llmwb::server_test
