// The OpenAI endpoint client (app/remote/openai_client.h) against a fake server on loopback:
// streamed figures as vLLM's bench computes them (TTFT, ITL, latency from canned gaps — checked
// as loose orderings, not timings), usage, chat, cancel mid-stream, the API key, /v1/models,
// /metrics, and hostile answers: each a clear error naming the endpoint, never a crash.
#include <atomic>
#include <cstdlib>
#include <thread>

#include "app/remote/openai_client.h"
#include "app/remote/prometheus_text.h"
#include "app/remote/remote_engine_metrics.h"
#include "fake_openai_server.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::remote;

namespace {

std::unique_ptr<OpenAiClient> client_for(const test::FakeOpenAiServer& s,
                                         const std::string& key = "") {
    EndpointConfig c;
    c.base_url = s.url() + "/v1";
    c.model = "fake-model";
    c.api_key = key;
    c.read_timeout_s = 10;
    auto r = OpenAiClient::create(c);
    return r ? std::move(r.value()) : nullptr;
}

CompletionRequest prompt(const std::string& text, EndpointType t = EndpointType::Completions) {
    CompletionRequest r;
    r.type = t;
    r.prompt = text;
    r.messages = {{"user", text}};
    r.max_tokens = 8;
    r.temperature = 0.0;
    return r;
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

} // namespace

MT_TEST(streamedFiguresFollowTheGaps) {
    test::FakeOpenAiServer server;
    MT_REQUIRE(server.ok());
    auto c = client_for(server);
    MT_REQUIRE(c);
    std::string streamed;
    auto r = c->complete(prompt("gaps"), [&](std::string_view t) { streamed += t; });
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    MT_COMPARE(r->text, std::string("abcde"));
    MT_COMPARE(streamed, std::string("abcde"));
    MT_COMPARE(r->token_chunks, 5);
    MT_REQUIRE(r->usage.has_value());
    MT_COMPARE(r->usage->completion_tokens, int64_t(5));
    MT_COMPARE(r->usage->prompt_tokens, int64_t(7));
    MT_REQUIRE_COMPARE(r->itl_s.size(), size_t(4));
    // The server waits 100 ms before the first chunk and 50 ms between chunks.
    std::printf("ttft %.3f s, itl %.3f %.3f %.3f %.3f s, latency %.3f s\n", r->ttft_s, r->itl_s[0],
                r->itl_s[1], r->itl_s[2], r->itl_s[3], r->latency_s);
    MT_CHECK(r->ttft_s >= 0.09);
    double sum = 0;
    for (double g : r->itl_s) {
        MT_CHECK(g >= 0.04);
        sum += g;
    }
    MT_CHECK(r->latency_s + 1e-9 >= r->ttft_s + sum - 1e-6);
    MT_CHECK(std::abs(r->latency_s - (r->ttft_s + sum)) < 1e-6); // latency = last token chunk
    MT_COMPARE(r->chunk_s.size(), size_t(5));
}

MT_TEST(withoutUsageTheChunksCount) {
    test::FakeOpenAiServer server;
    auto c = client_for(server);
    MT_REQUIRE(c);
    auto r = c->complete(prompt("gaps-nousage"));
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    MT_CHECK(!r->usage.has_value());
    MT_COMPARE(r->token_chunks, 5);
}

MT_TEST(chatStreamCountsTheRoleChunk) {
    test::FakeOpenAiServer server;
    auto c = client_for(server);
    MT_REQUIRE(c);
    auto r = c->complete(prompt("gaps", EndpointType::Chat));
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    MT_COMPARE(r->text, std::string("abcde"));
    // vLLM's rule: every chunk with choices is a token chunk, the role-only first one too: TTFT
    // is the role chunk's (100 ms), not the first content's (150 ms).
    MT_COMPARE(r->token_chunks, 6);
    MT_COMPARE(r->itl_s.size(), size_t(5));
    MT_CHECK(r->ttft_s >= 0.09);
    MT_CHECK(r->ttft_s + 0.04 <= r->chunk_s[1]);
    MT_REQUIRE(r->usage.has_value());
    MT_COMPARE(r->usage->completion_tokens, int64_t(6));
}

MT_TEST(notStreamed) {
    test::FakeOpenAiServer server;
    auto c = client_for(server);
    MT_REQUIRE(c);
    for (EndpointType t : {EndpointType::Completions, EndpointType::Chat}) {
        CompletionRequest rq = prompt("three words here", t);
        rq.stream = false;
        auto r = c->complete(rq);
        MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
        MT_COMPARE(r->text, std::string("one two three"));
        MT_COMPARE(r->finish_reason, std::string("length"));
        MT_REQUIRE(r->usage.has_value());
        MT_COMPARE(r->usage->prompt_tokens, int64_t(3));
        MT_CHECK(r->ttft_s == r->latency_s);
    }
}

MT_TEST(cancelMidStream) {
    test::FakeOpenAiServer server;
    auto c = client_for(server);
    MT_REQUIRE(c);
    std::atomic<int> pieces{0};
    std::thread canceller([&] {
        while (pieces.load() < 3)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        c->cancel();
    });
    auto r = c->complete(prompt("long"), [&](std::string_view) { ++pieces; });
    canceller.join();
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    MT_CHECK(r->cancelled);
    MT_CHECK(r->token_chunks >= 3);
    MT_CHECK(r->token_chunks < 200);
    // The server notices the closed connection and stops streaming.
    for (int i = 0; i < 200 && server.aborted_streams() == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    MT_COMPARE(server.aborted_streams(), 1);
    // The client works again afterwards.
    auto again = c->complete(prompt("gaps"));
    MT_REQUIRE_MSG(again.ok(), "%s", again.ok() ? "" : again.message().c_str());
    MT_COMPARE(again->text, std::string("abcde"));
}

MT_TEST(apiKeyAndModels) {
    test::FakeOpenAiServer server("sekret");
    auto good = client_for(server, "sekret");
    MT_REQUIRE(good);
    auto models = good->list_models();
    MT_REQUIRE_MSG(models.ok(), "%s", models.ok() ? "" : models.message().c_str());
    MT_REQUIRE_COMPARE(models->size(), size_t(1));
    MT_COMPARE((*models)[0].id, std::string("fake-model"));
    MT_COMPARE((*models)[0].root, std::string("/models/fake"));
    MT_COMPARE((*models)[0].max_model_len, std::optional<int64_t>(4096));
    auto bad = client_for(server, "wrong");
    auto denied = bad->list_models();
    MT_REQUIRE(!denied.ok());
    MT_CHECK_MSG(contains(denied.message(), "/v1/models: HTTP 401: Invalid API key"), "%s",
                 denied.message().c_str());
    auto none = client_for(server);
    auto r = none->complete(prompt("gaps"));
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), server.url() + "/v1/completions: HTTP 401"), "%s",
                 r.message().c_str());
}

MT_TEST(metricsScrape) {
    test::FakeOpenAiServer server;
    auto c = client_for(server);
    MT_REQUIRE(c);
    auto text = c->fetch_metrics();
    MT_REQUIRE_MSG(text.ok(), "%s", text.ok() ? "" : text.message().c_str());
    auto scrape = parse_prometheus_text(*text);
    MT_REQUIRE(scrape.ok());
    RemoteEngineMetrics m("fake-model");
    RemoteMetricsSample a = m.update(*scrape, 0.0);
    MT_COMPARE(a.running, std::optional<double>(3.0));
    MT_COMPARE(a.kv_usage, std::optional<double>(0.42));
    server.set_metrics("# TYPE vllm:prompt_tokens_total counter\n"
                       "vllm:prompt_tokens_total{model_name=\"fake-model\"} 300.0\n");
    auto b = scrape_metrics(*c, m, 2.0);
    MT_REQUIRE_MSG(b.ok(), "%s", b.ok() ? "" : b.message().c_str());
    MT_COMPARE(b->prompt_throughput, std::optional<double>(100.0));
    MT_CHECK(!b->kv_usage); // not in this scrape: unavailable, not 0
    MT_CHECK(!b->running);
}

struct Hostile {
    std::string name;   // the prompt: the fake server's scenario
    std::string expect; // in the error
};

std::vector<Hostile> hostile_rows() {
    return {{"error500", "HTTP 500: CUDA out of memory"},
            {"error500plain", "HTTP 500: Internal Server Error: boom"},
            {"truncated", "ended without [DONE] after 2 chunks"},
            {"closed", "the connection failed mid-stream after 1 chunks"},
            {"hugeline", "line longer than 1048576 bytes"},
            {"badjson", "not valid JSON"},
            {"deep", "nested deeper than 64 levels"},
            {"wrongtype", "Content-Type 'application/json', not text/event-stream"},
            {"midstream-error", "error mid-stream: engine died"}};
}

MT_TEST_TABLE(hostileAnswers, Hostile, hostile_rows()) {
    test::FakeOpenAiServer server;
    auto c = client_for(server);
    MT_REQUIRE(c);
    auto r = c->complete(prompt(row.name));
    MT_REQUIRE(!r.ok());
    std::printf("%s: %s\n", row.name.c_str(), r.message().c_str());
    MT_CHECK_MSG(contains(r.message(), server.url() + "/v1/completions: "), "%s",
                 r.message().c_str());
    MT_CHECK_MSG(contains(r.message(), row.expect), "%s", r.message().c_str());
    // The client recovers for the next request.
    auto ok = c->complete(prompt("gaps"));
    MT_CHECK_MSG(ok.ok(), "%s", ok.ok() ? "" : ok.message().c_str());
}

MT_TEST(boundedBody) {
    test::FakeOpenAiServer server;
    EndpointConfig cfg;
    cfg.base_url = server.url();
    cfg.model = "fake-model";
    cfg.max_body_bytes = 4096;
    auto c = OpenAiClient::create(cfg);
    MT_REQUIRE(c.ok());
    auto r = (*c)->complete(prompt("hugeline"));
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), "response larger than 4096 bytes"), "%s",
                 r.message().c_str());
}

MT_TEST(nobodyListening) {
    int port = 0;
    {
        test::FakeOpenAiServer gone; // a port that was free a moment ago
        port = gone.port();
    }
    EndpointConfig cfg;
    cfg.base_url = "http://127.0.0.1:" + std::to_string(port);
    cfg.model = "m";
    cfg.connect_timeout_s = 2;
    auto c = OpenAiClient::create(cfg);
    MT_REQUIRE(c.ok());
    auto r = (*c)->list_models();
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), cfg.base_url + "/v1/models: Connection"), "%s",
                 r.message().c_str());
    EndpointConfig no_scheme;
    no_scheme.base_url = "localhost:8000";
    MT_CHECK(!OpenAiClient::create(no_scheme).ok());
}

MT_TEST(httpsWithTheServersCa) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    const std::string cert = dir.file("cert.pem"), key = dir.file("key.pem");
    const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                            "-addext subjectAltName=IP:127.0.0.1 -keyout '" +
                            key + "' -out '" + cert + "' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0)
        MT_SKIP("the openssl command could not make a test certificate");
    test::FakeOpenAiServer server("", cert, key);
    MT_REQUIRE(server.ok());
    MT_REQUIRE(server.url().rfind("https://", 0) == 0);
    EndpointConfig cfg;
    cfg.base_url = server.url();
    cfg.model = "fake-model";
    cfg.ca_cert_path = cert; // the server's own certificate is its CA
    auto c = OpenAiClient::create(cfg);
    MT_REQUIRE(c.ok());
    auto r = (*c)->complete(prompt("gaps"));
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    MT_COMPARE(r->text, std::string("abcde"));
    // Without that CA the self-signed certificate is refused; verify_tls false accepts it.
    cfg.ca_cert_path.clear();
    auto untrusted = OpenAiClient::create(cfg);
    MT_REQUIRE(untrusted.ok());
    auto refused = (*untrusted)->list_models();
    MT_REQUIRE(!refused.ok());
    MT_CHECK_MSG(contains(refused.message(), "SSL"), "%s", refused.message().c_str());
    cfg.verify_tls = false;
    auto unchecked = OpenAiClient::create(cfg);
    MT_REQUIRE(unchecked.ok());
    MT_CHECK((*unchecked)->list_models().ok());
    cfg.ca_cert_path = dir.file("missing.pem");
    MT_CHECK(!OpenAiClient::create(cfg).ok());
}

MINI_TEST_MAIN()
