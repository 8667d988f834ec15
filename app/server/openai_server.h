// OpenAiServer: the HTTP side of `llmwb serve` (cpp-httplib) — the OpenAI routes over a
// ServingBackend, vLLM's extra routes (/tokenize, /detokenize, /health, /version, /metrics),
// API-key checks, CORS, limits, and errors as OpenAI error objects.
//
//   GET  /v1/models            the served model (id, object, created, owned_by, root,
//                              max_model_len)
//   POST /v1/completions       openai_requests.h; SSE when "stream": true
//   POST /v1/chat/completions  the model's chat template (as `llmwb render-chat`), tools passed
//                              to it, tool calls parsed from the output (openai_tool_calls.h)
//   POST /tokenize             {"prompt"} or {"messages"} -> {"tokens", "count", "max_model_len"}
//   POST /detokenize           {"tokens"} -> {"prompt"}
//   GET  /health (200, empty)  GET /version ({"version"})  GET /metrics (Prometheus text)
//
// Every handler runs on one of httplib's pool threads (sized for many streaming clients); it
// talks to the engine only through the ServingBackend. A streaming client that goes away (a
// failed write) cancels its request. Until set_backend() the generation and tokenizer routes
// answer 503 (the model is loading).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/server/serving_backend.h"
#include "engine/serving/serving_metrics.h"
#include "engine/util/result.h"

namespace httplib {
class Server;
}

namespace llmwb {

// One HTTP request, for a request log (ServerOptions::request_log): a generation is reported
// when it starts running (running = true, prompt tokens known) and again when it is answered,
// with the same id; any other request once, when answered.
struct RequestLogEntry {
    uint64_t id = 0;      // unique per request while the process runs
    bool running = false; // the start of a generation (status, completion, duration not yet)
    std::chrono::system_clock::time_point time; // when it arrived
    std::string client_address;                 // the peer's address
    int client_port = 0;
    std::string user_agent, method, path;
    int status = 0;
    // Generations only (-1 otherwise): tokens of the prompt and of all choices, and the
    // choices' finish reasons ("stop", "length", "abort", ...; distinct ones joined by ",").
    int64_t prompt_tokens = -1, completion_tokens = -1;
    std::string finish_reason;
    double duration_ms = 0; // from arrival to the last byte sent (0: unknown)
};

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8000;                          // 0: any free port (bind() returns it)
    std::string api_key;                      // empty: no key needed
    std::vector<std::string> allowed_origins; // CORS; empty: off; "*": any origin
    bool protect_metrics = false;             // /metrics (and /health) need the key too
    size_t max_body_bytes = size_t(8) << 20;  // larger bodies: 413
    // Header lines and the request URI are capped by the library (8 KiB each: 400 / 414).
    int threads = 512; // HTTP worker threads (one per open connection)
    int read_timeout_s = 30, write_timeout_s = 30, keep_alive_timeout_s = 5;
    int request_timeout_s = 0; // a generation still running after this is aborted; 0: none
    // Called on the handler's thread when a generation starts running and once each request is
    // answered (streams: after the last chunk); null: no log. It must be quick and thread safe.
    std::function<void(const RequestLogEntry&)> request_log;
};

class OpenAiServer {
  public:
    // `metrics` may be null (then /metrics is empty); it must outlive the server.
    OpenAiServer(ServerOptions options, ServingMetrics* metrics);
    ~OpenAiServer();
    OpenAiServer(const OpenAiServer&) = delete;
    OpenAiServer& operator=(const OpenAiServer&) = delete;

    // The backend once the model is loaded (not owned; it must outlive the server's requests).
    void set_backend(ServingBackend* backend) { backend_.store(backend); }
    // The metrics /metrics renders (not owned; null: empty). Set before requests arrive.
    void set_metrics(ServingMetrics* metrics) { metrics_.store(metrics); }
    // Binds host:port; returns the port (the chosen one for port 0) or why it failed.
    Result<int> bind();
    // Serves until stop(); false when listening failed.
    bool listen();
    // listen() has started serving (stop() before that would not reach it: wait for this).
    bool is_listening() const;
    // Stops accepting, waits for the handler threads (end the backend's requests first:
    // ServingLoop::shutdown) and makes listen() return.
    void stop();

  private:
    struct Routes;
    ServerOptions options_;
    std::atomic<ServingMetrics*> metrics_;
    std::atomic<ServingBackend*> backend_{nullptr};
    static constexpr int kListenBacklog = 1024;
    int listen_fd_ = -1;
    std::unique_ptr<httplib::Server> svr_;
};

} // namespace llmwb
