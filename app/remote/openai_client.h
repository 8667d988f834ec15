// A client of one OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp's server, Ollama's OpenAI
// API, another `llmwb serve`): GET /v1/models, POST /v1/completions and /v1/chat/completions,
// streamed (server-sent events) or not, cancellable mid-stream, and GET /metrics. Every request
// carries the figures a client can measure, computed as vLLM's `vllm bench serve` computes them
// (vllm/benchmarks/lib/endpoint_request_func.py):
// - every streamed chunk whose "choices" is a non-empty array is a token chunk, even when its
//   text is empty (a special token, the role-only first chunk of a chat stream);
// - TTFT = the first token chunk's arrival - the request's start; ITL = the gaps between
//   consecutive token chunks; latency (e2e) = the last token chunk's arrival - the start (the
//   trailing usage chunk and [DONE] do not extend it);
// - output tokens = usage.completion_tokens of the final usage chunk when the server honours
//   stream_options.include_usage; otherwise unknown here (the caller counts them with a
//   tokenizer, as vLLM does, or takes the number of token chunks).
// Everything from the server is hostile: the body, each line and each event are bounded, JSON
// is depth-checked before parsing, connect/read/total timeouts apply, and every failure is an
// error naming the endpoint and the route, with the HTTP status and the server's own message.
// One client runs one request at a time (a benchmark gives each worker its own client);
// cancel() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/remote/endpoint_url.h"
#include "engine/util/result.h"

namespace llmwb::remote {

enum class EndpointType { Completions, Chat };
const char* endpoint_type_name(EndpointType t); // "completions" | "chat"
Result<EndpointType> parse_endpoint_type(const std::string& name);

struct EndpointConfig {
    std::string base_url; // "http://127.0.0.1:8000" or ".../v1"
    std::string api_key;  // "" = none; else "Authorization: Bearer <key>"
    std::string model;    // the served model name ("model" of every request)
    double connect_timeout_s = 10;
    double read_timeout_s = 300; // the most a server may stay silent mid-response
    // 0 = none; else the most one request may take, checked as data arrives (a server that
    // goes silent is caught by read_timeout_s).
    double total_timeout_s = 0;
    size_t max_body_bytes = 64u << 20;
    size_t max_line_bytes = 1u << 20;  // one SSE line
    size_t max_event_bytes = 4u << 20; // one SSE event
    int max_json_depth = 64;
    // https://: the server's certificate is verified against the system's CAs, or against
    // ca_cert_path (a PEM file: a cluster's own CA) when given; verify_tls false skips the check.
    std::string ca_cert_path;
    bool verify_tls = true;
};

struct ChatMessage {
    std::string role, content;
};

struct CompletionRequest {
    EndpointType type = EndpointType::Completions;
    std::string prompt;                // completions
    std::vector<ChatMessage> messages; // chat
    int32_t max_tokens = 16;           // max_tokens (completions), max_completion_tokens (chat)
    std::optional<double> temperature;
    bool ignore_eos = false; // vLLM's extension (llama.cpp's server and SGLang accept it too)
    bool stream = true;
    bool include_usage = true; // stream_options.include_usage
    // Merged into the body last (an object's keys override the ones above).
    nlohmann::json extra = nlohmann::json::object();
};

struct Usage {
    int64_t prompt_tokens = 0, completion_tokens = 0;
};

struct CompletionResult {
    std::string text;
    std::string finish_reason; // "" when the server gave none
    std::optional<Usage> usage;
    bool cancelled = false; // cancel() stopped it; text and figures are what arrived before
    // Client-side figures (seconds), vLLM's rules above. Non-streamed: ttft = latency = the
    // whole request.
    std::chrono::steady_clock::time_point start{};
    int32_t token_chunks = 0;
    double ttft_s = 0, latency_s = 0;
    std::vector<double> itl_s;
    std::vector<double> chunk_s; // each token chunk's arrival, from start
};

struct ModelEntry {
    std::string id, owned_by, root;       // root: vLLM's (the model's path or HF name)
    std::optional<int64_t> max_model_len; // vLLM's and llmwb serve's
};

class OpenAiClient {
  public:
    // Errors: a bad base URL; https:// where cpp-httplib was built without OpenSSL; a CA file
    // that does not exist.
    static Result<std::unique_ptr<OpenAiClient>> create(EndpointConfig config);
    ~OpenAiClient();
    OpenAiClient(const OpenAiClient&) = delete;
    OpenAiClient& operator=(const OpenAiClient&) = delete;

    const EndpointConfig& config() const { return config_; }
    const EndpointUrl& url() const { return url_; }

    Result<std::vector<ModelEntry>> list_models();
    // Runs one request; on_text (may be empty) gets each streamed piece of text as it arrives.
    // A cancelled request is not an error: the result says cancelled.
    Result<CompletionResult> complete(const CompletionRequest& request,
                                      const std::function<void(std::string_view)>& on_text = {});
    // GET <prefix>/metrics: the Prometheus text (bounded by max_body_bytes).
    Result<std::string> fetch_metrics();

    // Stops the request in flight (from any thread): its connection is closed. A cancel()
    // before complete() starts is not kept (complete() begins uncancelled).
    void cancel();

  private:
    explicit OpenAiClient(EndpointConfig config, EndpointUrl url);
    struct Http;
    Result<std::string> get_text(const std::string& route);

    EndpointConfig config_;
    EndpointUrl url_;
    std::unique_ptr<Http> http_;
    std::atomic<bool> cancel_{false};
};

// The message a server's error body carries: error.message (OpenAI, vLLM, llama.cpp), message,
// detail (FastAPI) or the first 300 printable characters of the body.
std::string server_error_message(std::string_view body);

} // namespace llmwb::remote
