#include "fake_openai_server.h"

#include <httplib.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>

namespace llmwb::test {

namespace {

using Json = nlohmann::json;

void sleep_ms(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::string event(const Json& j) {
    return "data: " + j.dump() + "\n\n";
}

Json completion_chunk(const std::string& text) {
    return {{"id", "cmpl-1"},
            {"object", "text_completion"},
            {"model", "fake-model"},
            {"choices", {{{"index", 0}, {"text", text}, {"finish_reason", nullptr}}}}};
}

Json chat_chunk(const Json& delta) {
    return {{"id", "chatcmpl-1"},
            {"object", "chat.completion.chunk"},
            {"model", "fake-model"},
            {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", nullptr}}}}};
}

Json usage_chunk(int prompt, int completion) {
    return {{"id", "cmpl-1"},
            {"choices", Json::array()},
            {"usage",
             {{"prompt_tokens", prompt},
              {"completion_tokens", completion},
              {"total_tokens", prompt + completion}}}};
}

int words(const std::string& s) {
    int n = 0;
    bool in = false;
    for (char c : s) {
        const bool space = c == ' ';
        n += !space && !in;
        in = !space;
    }
    return n;
}

} // namespace

struct FakeOpenAiServer::Impl {
    std::unique_ptr<httplib::Server> owned;
    httplib::Server& server;
    explicit Impl(std::unique_ptr<httplib::Server> s) : owned(std::move(s)), server(*owned) {}
    std::mutex mu;
    std::string metrics =
        "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
        "# TYPE vllm:num_requests_running gauge\n"
        "vllm:num_requests_running{engine=\"0\",model_name=\"fake-model\"} 3.0\n"
        "# TYPE vllm:prompt_tokens_total counter\n"
        "vllm:prompt_tokens_total{engine=\"0\",model_name=\"fake-model\"} 100.0\n"
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"fake-model\"} 0.42\n"
        "# TYPE vllm:num_preemptions_total counter\n"
        "vllm:num_preemptions_total{engine=\"0\",model_name=\"fake-model\"} 7.0\n"
        "# TYPE vllm:prefix_cache_queries_total counter\n"
        "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"fake-model\"} 50.0\n"
        "# TYPE vllm:prefix_cache_hits_total counter\n"
        "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"fake-model\"} 20.0\n";
};

namespace {

std::unique_ptr<httplib::Server> make_server(const std::string& cert, const std::string& key) {
    if (cert.empty())
        return std::make_unique<httplib::Server>();
    return std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
}

} // namespace

FakeOpenAiServer::FakeOpenAiServer(std::string api_key, const std::string& tls_cert,
                                   const std::string& tls_key)
    : impl_(std::make_unique<Impl>(make_server(tls_cert, tls_key))), tls_(!tls_cert.empty()) {
    httplib::Server& s = impl_->server;
    // Each chunk leaves at once (without it, Nagle's algorithm and the client's delayed ACK hold
    // small chunks for ~40 ms, as a real streaming server would not).
    s.set_tcp_nodelay(true);
    auto authorized = [api_key](const httplib::Request& req, httplib::Response& res) {
        if (api_key.empty() || req.get_header_value("Authorization") == "Bearer " + api_key)
            return true;
        res.status = 401;
        res.set_content(
            R"({"error":{"message":"Invalid API key","type":"invalid_request_error","code":401}})",
            "application/json");
        return false;
    };
    s.Get("/v1/models", [authorized](const httplib::Request& req, httplib::Response& res) {
        if (!authorized(req, res))
            return;
        res.set_content(R"({"object":"list","data":[{"id":"fake-model","object":"model",)"
                        R"("owned_by":"llmwb-test","root":"/models/fake","max_model_len":4096}]})",
                        "application/json");
    });
    s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        std::lock_guard<std::mutex> lock(impl_->mu);
        res.set_content(impl_->metrics, "text/plain; version=0.0.4");
    });
    auto handler = [this, authorized](const httplib::Request& req, httplib::Response& res) {
        if (!authorized(req, res))
            return;
        const bool chat = req.path == "/v1/chat/completions";
        Json body = Json::parse(req.body, nullptr, false);
        if (body.is_discarded() || !body.is_object()) {
            res.status = 400;
            res.set_content(R"({"error":{"message":"malformed JSON"}})", "application/json");
            return;
        }
        std::string prompt;
        if (chat && body["messages"].is_array() && !body["messages"].empty())
            prompt = body["messages"].back().value("content", "");
        else
            prompt = body.value("prompt", "");
        const int max_tokens = body.value(chat ? "max_completion_tokens" : "max_tokens", 16);
        const bool stream = body.value("stream", false);
        const bool usage =
            body.contains("stream_options") && body["stream_options"].value("include_usage", false);

        if (prompt == "error500") {
            res.status = 500;
            res.set_content(
                R"({"error":{"message":"CUDA out of memory","type":"InternalServerError","code":500}})",
                "application/json");
            return;
        }
        if (prompt == "error500plain") {
            res.status = 500;
            res.set_content("Internal Server Error: boom\n", "text/plain");
            return;
        }
        if (prompt == "wrongtype") {
            res.set_content(completion_chunk("hi").dump(), "application/json");
            return;
        }
        if (!stream) {
            Json out = {{"id", "cmpl-1"},
                        {"object", chat ? "chat.completion" : "text_completion"},
                        {"usage", {{"prompt_tokens", words(prompt)}, {"completion_tokens", 3}}}};
            if (chat)
                out["choices"] = {
                    {{"index", 0},
                     {"message", {{"role", "assistant"}, {"content", "one two three"}}},
                     {"finish_reason", "length"}}};
            else
                out["choices"] = {
                    {{"index", 0}, {"text", "one two three"}, {"finish_reason", "length"}}};
            res.set_content(out.dump(), "application/json");
            return;
        }
        std::atomic<int>* aborted = &aborted_;
        res.set_chunked_content_provider("text/event-stream", [prompt, chat, max_tokens, usage,
                                                               aborted](size_t,
                                                                        httplib::DataSink& sink) {
            auto put = [&](const std::string& s) {
                if (!sink.write(s.data(), s.size())) {
                    ++*aborted;
                    return false;
                }
                return true;
            };
            auto chunk = [&](const std::string& text) {
                return event(chat ? chat_chunk({{"content", text}}) : completion_chunk(text));
            };
            if (prompt == "gaps" || prompt == "gaps-nousage") {
                // 5 chunks: 100 ms, then 50 ms gaps; one split across two writes, one with
                // CRLF line ends, a keep-alive comment between.
                sleep_ms(100);
                if (chat && !put(event(chat_chunk({{"role", "assistant"}, {"content", ""}}))))
                    return false;
                const char* texts[] = {"a", "b", "c", "d", "e"};
                for (int i = 0; i < 5; ++i) {
                    if (i > 0 || chat)
                        sleep_ms(50);
                    std::string ev = chunk(texts[i]);
                    if (i == 2) {
                        const size_t half = ev.size() / 2;
                        if (!put(ev.substr(0, half)))
                            return false;
                        sleep_ms(10);
                        if (!put(ev.substr(half)))
                            return false;
                    } else if (i == 3) {
                        ev.replace(ev.size() - 2, 2, "\r\n\r\n");
                        if (!put(": keep-alive\r\n\r\n" + ev))
                            return false;
                    } else if (!put(ev)) {
                        return false;
                    }
                }
                if (prompt == "gaps" && usage && !put(event(usage_chunk(7, chat ? 6 : 5))))
                    return false;
                if (!put("data: [DONE]\n\n"))
                    return false;
            } else if (prompt == "long") { // for cancel: 200 chunks 20 ms apart
                for (int i = 0; i < 200; ++i) {
                    if (!put(chunk("x")))
                        return false;
                    sleep_ms(20);
                }
                put("data: [DONE]\n\n");
            } else if (prompt == "truncated") {
                put(chunk("a") + chunk("b"));
            } else if (prompt == "closed") { // the connection drops mid-stream
                put(chunk("a"));
                return false;
            } else if (prompt == "hugeline") { // one 100 MB line, 1 MB at a time
                if (!put("data: "))
                    return false;
                const std::string mb(1 << 20, 'x');
                for (int i = 0; i < 100; ++i)
                    if (!put(mb))
                        return false;
                put("\n\n");
            } else if (prompt == "badjson") {
                put(chunk("a") + "data: {\"choices\": [ {\"text\": \"b\"\n\n");
            } else if (prompt == "deep") {
                put("data: " + std::string(100000, '[') + std::string(100000, ']') + "\n\n");
            } else if (prompt == "midstream-error") {
                put(chunk("a") + event({{"error", {{"message", "engine died"}, {"code", 500}}}}));
            } else { // the benchmark answer
                for (int i = 0; i < max_tokens; ++i) {
                    sleep_ms(2);
                    if (!put(chunk(" tok")))
                        return false;
                }
                if (usage && !put(event(usage_chunk(words(prompt), max_tokens))))
                    return false;
                if (!put("data: [DONE]\n\n"))
                    return false;
            }
            sink.done();
            return true;
        });
    };
    s.Post("/v1/completions", handler);
    s.Post("/v1/chat/completions", handler);
    if (!s.is_valid())
        return; // a TLS server whose certificate did not load
    port_ = s.bind_to_any_port("127.0.0.1");
    if (port_ > 0)
        thread_ = std::thread([this] { impl_->server.listen_after_bind(); });
    for (int i = 0; i < 200 && port_ > 0 && !impl_->server.is_running(); ++i)
        sleep_ms(5);
}

FakeOpenAiServer::~FakeOpenAiServer() {
    impl_->server.stop();
    if (thread_.joinable())
        thread_.join();
}

void FakeOpenAiServer::set_metrics(std::string text) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->metrics = std::move(text);
}

} // namespace llmwb::test
