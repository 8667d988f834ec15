// A fake OpenAI-compatible server for the remote-endpoint tests: an httplib::Server on
// 127.0.0.1 (an ephemeral port) whose answers are canned. The scenario is the request's prompt
// (or the last chat message): "gaps" streams 5 chunks after 100 ms then 50 ms gaps, with usage;
// others (see the .cpp) stream hostile answers. Any other prompt gets the benchmark answer:
// max_tokens chunks 2 ms apart, usage counting the prompt's words.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace llmwb::test {

class FakeOpenAiServer {
  public:
    // api_key non-empty: /v1/* want "Authorization: Bearer <key>" (else 401). tls_cert and
    // tls_key (PEM files) non-empty: https.
    explicit FakeOpenAiServer(std::string api_key = "", const std::string& tls_cert = "",
                              const std::string& tls_key = "");
    ~FakeOpenAiServer();
    FakeOpenAiServer(const FakeOpenAiServer&) = delete;
    FakeOpenAiServer& operator=(const FakeOpenAiServer&) = delete;

    bool ok() const { return port_ > 0; }
    int port() const { return port_; }
    std::string url() const {
        return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
    }
    // Streams the server stopped because the client went away.
    int aborted_streams() const { return aborted_.load(); }
    // The /metrics text served next (vLLM-shaped by default).
    void set_metrics(std::string text);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::thread thread_;
    int port_ = -1;
    bool tls_ = false;
    std::atomic<int> aborted_{0};
};

} // namespace llmwb::test
