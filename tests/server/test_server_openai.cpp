// `llmwb serve`'s server in-process (server_fixture.h) over HTTP: every route, errors with their
// status codes and the parameter they name, SSE framing, stop, greedy output equal to the
// engine's generate(), a client that disconnects mid-stream (its blocks are freed), and hostile
// bodies (each a 4xx, never a crash). Sampling (n > 1, best_of, logprobs, enable_thinking):
// test_server_sampling.cpp, in the same program.
#include <atomic>
#include <random>
#include <thread>

#include "app/server/openai_handlers.h"
#include "app/server/openai_tool_calls.h"
#include "engine/model/demo_model.h"
#include "engine/serving/generation.h"
#include "engine/serving/parallel_sampling.h"
#include "engine/tokenizer/tokenizer.h"
#include "server_fixture.h"

using namespace llmwb;
using namespace llmwb::server_test;
using nlohmann::json;

namespace {

// The SSE events of a stream body: every "data: " payload, in order. `framing_ok` is false when
// anything else is there (every event must be "data: ...\n\n").
std::vector<std::string> sse_events(const std::string& raw, bool& framing_ok) {
    std::vector<std::string> out;
    framing_ok = true;
    size_t pos = 0;
    while (pos < raw.size()) {
        const size_t end = raw.find("\n\n", pos);
        if (end == std::string::npos) {
            framing_ok = false;
            break;
        }
        const std::string ev = raw.substr(pos, end - pos);
        if (ev.rfind("data: ", 0) != 0 || ev.find('\n') != std::string::npos)
            framing_ok = false;
        out.push_back(ev.substr(std::min<size_t>(6, ev.size())));
        pos = end + 2;
    }
    return out;
}

std::string greedy_completion_body(const std::string& prompt, int max_tokens) {
    return json{
        {"model", "demo"}, {"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}}
        .dump();
}

} // namespace

MT_TEST(models_health_version_metrics) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    Reply r = get(f, "/v1/models");
    MT_REQUIRE_COMPARE(r.status, 200);
    MT_COMPARE(r.body["object"].get<std::string>(), std::string("list"));
    const json& m = r.body["data"][0];
    MT_COMPARE(m["id"].get<std::string>(), std::string("demo"));
    MT_COMPARE(m["object"].get<std::string>(), std::string("model"));
    MT_COMPARE(m["owned_by"].get<std::string>(), std::string("llmwb"));
    MT_CHECK(m["root"].get<std::string>().find(kDemoModelFileName) != std::string::npos);
    MT_COMPARE(m["max_model_len"].get<int64_t>(), f.engine->context_limit());
    MT_CHECK(m.contains("created"));

    Reply h = get(f, "/health", "");
    MT_COMPARE(h.status, 200);
    MT_CHECK(h.raw.empty());
    Reply v = get(f, "/version", "");
    MT_COMPARE(v.status, 200);
    MT_CHECK(v.body["version"].is_string());
    auto c = f.client("");
    auto metrics = c->Get("/metrics");
    MT_REQUIRE(metrics);
    MT_COMPARE(metrics->status, 200);
    MT_CHECK(metrics->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0) == 0);
}

MT_TEST(unauthorized_without_the_key) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    for (const char* path : {"/v1/models"}) {
        Reply none = get(f, path, "");
        MT_COMPARE(none.status, 401);
        MT_COMPARE(none.body["error"]["code"].get<std::string>(), std::string("invalid_api_key"));
        MT_COMPARE(get(f, path, "wrong-key").status, 401);
    }
    MT_COMPARE(post(f, "/v1/completions", greedy_completion_body("a", 2), "").status, 401);
    MT_COMPARE(post(f, "/tokenize", R"({"prompt":"a"})", "").status, 401);
    MT_COMPARE(post(f, "/detokenize", R"({"tokens":[1]})", "nope").status, 401);
}

MT_TEST(not_found_route_and_model) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    Reply r = get(f, "/v1/nothing");
    MT_COMPARE(r.status, 404);
    MT_CHECK(r.body["error"]["message"].is_string());
    MT_COMPARE(r.body["error"]["type"].get<std::string>(), std::string("invalid_request_error"));
    Reply m = post(f, "/v1/completions", R"({"model":"gpt-9","prompt":"a"})");
    MT_COMPARE(m.status, 404);
    MT_COMPARE(m.body["error"]["param"].get<std::string>(), std::string("model"));
    MT_COMPARE(m.body["error"]["code"].get<std::string>(), std::string("model_not_found"));
}

struct BadRow {
    std::string name, path, body, param;
};
std::vector<BadRow> bad_rows() {
    const std::string c = "/v1/completions", ch = "/v1/chat/completions";
    const std::string msgs = R"("messages":[{"role":"user","content":"hi"}])";
    return {
        {"top_p", c, R"({"prompt":"a","top_p":2})", "top_p"},
        {"temperature_type", c, R"({"prompt":"a","temperature":"hot"})", "temperature"},
        {"temperature_negative", c, R"({"prompt":"a","temperature":-1})", "temperature"},
        {"top_k", c, R"({"prompt":"a","top_k":-3})", "top_k"},
        {"min_p", c, R"({"prompt":"a","min_p":1.5})", "min_p"},
        {"presence_penalty", c, R"({"prompt":"a","presence_penalty":3})", "presence_penalty"},
        {"frequency_penalty", c, R"({"prompt":"a","frequency_penalty":-2.5})", "frequency_penalty"},
        {"repetition_penalty", c, R"({"prompt":"a","repetition_penalty":0})", "repetition_penalty"},
        {"seed", c, R"({"prompt":"a","seed":-1})", "seed"},
        {"n_zero", c, R"({"prompt":"a","n":0})", "n"},
        {"n_huge", c, R"({"prompt":"a","n":100000})", "n"},
        {"max_tokens_zero", c, R"({"prompt":"a","max_tokens":0})", "max_tokens"},
        {"max_tokens_fraction", c, R"({"prompt":"a","max_tokens":1.5})", "max_tokens"},
        {"max_tokens_beyond_context", c, R"({"prompt":"a","max_tokens":100000})", "max_tokens"},
        {"stop_type", c, R"({"prompt":"a","stop":[1]})", "stop"},
        {"stop_empty", c, R"({"prompt":"a","stop":""})", "stop"},
        {"logprobs_range", c, R"({"prompt":"a","logprobs":50})", "logprobs"},
        {"logprobs_type", c, R"({"prompt":"a","logprobs":true})", "logprobs"},
        {"prompt_missing", c, R"({"max_tokens":3})", "prompt"},
        {"prompt_type", c, R"({"prompt":{"a":1}})", "prompt"},
        {"prompt_ids_vocab", c, R"({"prompt":[99999999]})", "prompt"},
        {"prompt_batch", c, R"({"prompt":["a","b"]})", "prompt"},
        {"stream_type", c, R"({"prompt":"a","stream":"yes"})", "stream"},
        {"stream_options_without_stream", c, R"({"prompt":"a","stream_options":{}})",
         "stream_options"},
        {"stop_token_ids_vocab", c, R"({"prompt":"a","stop_token_ids":[99999999]})",
         "stop_token_ids"},
        {"echo", c, R"({"prompt":"a","echo":true})", "echo"},
        {"response_format", ch, "{" + msgs + R"(,"response_format":{"type":"json_object"}})",
         "response_format"},
        {"messages_missing", ch, R"({"max_tokens":3})", "messages"},
        {"messages_role", ch, R"({"messages":[{"content":"hi"}]})", "messages[0]"},
        {"messages_image", ch,
         R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":"x"}]}]})",
         "messages[0].content"},
        {"max_completion_tokens", ch, "{" + msgs + R"(,"max_completion_tokens":-1})",
         "max_completion_tokens"},
        {"chat_logprobs_type", ch, "{" + msgs + R"(,"logprobs":3})", "logprobs"},
        {"top_logprobs_range", ch, "{" + msgs + R"(,"logprobs":true,"top_logprobs":21})",
         "top_logprobs"},
        {"tool_choice", ch, "{" + msgs + R"(,"tool_choice":"required"})", "tool_choice"},
        {"tools_shape", ch, "{" + msgs + R"(,"tools":[{"type":"function"}]})", "tools[0]"},
        {"best_of_below_n", c, R"({"best_of":2,"prompt":"a","n":3})", "best_of"},
        {"best_of_stream", c, R"({"prompt":"a","best_of":3,"stream":true})", "best_of"},
        {"best_of_chat", ch, "{" + msgs + R"(,"best_of":2})", "best_of"},
        {"enable_thinking_type", ch,
         "{" + msgs + R"(,"chat_template_kwargs":{"enable_thinking":1}})",
         "chat_template_kwargs.enable_thinking"},
    };
}

MT_TEST_TABLE(bad_parameter_is_400_naming_it, BadRow, bad_rows()) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    Reply r = post(f, row.path, row.body);
    MT_COMPARE(r.status, 400);
    MT_REQUIRE(r.body.is_object() && r.body.contains("error"));
    const json& e = r.body["error"];
    MT_COMPARE(e["type"].get<std::string>(), std::string("invalid_request_error"));
    MT_REQUIRE(e["param"].is_string());
    MT_COMPARE(e["param"].get<std::string>(), row.param);
    MT_CHECK(!e["message"].get<std::string>().empty());
    MT_CHECK(e.contains("code"));
}

MT_TEST(body_too_large_is_413) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    const std::string big = json{{"prompt", std::string(kBodyLimit + 10, 'a')}}.dump();
    Reply r = post(f, "/v1/completions", big);
    MT_COMPARE(r.status, 413);
}

// `curl -d` without a Content-Type sends application/x-www-form-urlencoded, which cpp-httplib
// caps at 8 KB whatever the server's limit: the error says so and names the fix.
MT_TEST(form_encoded_body_over_8k_is_413_naming_the_content_type) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    const std::string body = json{{"prompt", std::string(9000, 'a')}}.dump();
    MT_REQUIRE(body.size() > 8192 && body.size() < kBodyLimit);
    Reply r = post(f, "/v1/completions", body, kKey, "application/x-www-form-urlencoded");
    MT_COMPARE(r.status, 413);
    MT_REQUIRE(r.body.is_object() && r.body.contains("error"));
    const std::string m = r.body["error"]["message"].get<std::string>();
    MT_CHECK(m.find("application/json") != std::string::npos);
    // The same body sent as JSON gets past the size check (its prompt may exceed the demo
    // model's context: a 400 then, not a 413).
    json as_json = json::parse(body);
    as_json["max_tokens"] = 1;
    MT_CHECK(post(f, "/v1/completions", as_json.dump()).status != 413);
}

MT_TEST(too_many_waiting_is_429_with_retry_after) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    // Hold the engine thread: submissions pile up in the loop's queue.
    std::atomic<bool> release{false}, holding{false};
    std::thread hold([&] {
        f.loop->with_engine([&](Engine&) {
            holding = true;
            while (!release)
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
        });
    });
    while (!holding)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::vector<std::thread> queued;
    std::vector<int> statuses(kMaxWaiting, 0);
    for (int i = 0; i < kMaxWaiting; ++i) {
        queued.emplace_back([&, i] {
            statuses[i] = post(f, "/v1/completions", greedy_completion_body("Words", 3)).status;
        });
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (f.loop->num_waiting() < i + 1 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    MT_COMPARE(f.loop->num_waiting(), kMaxWaiting);
    Reply r = post(f, "/v1/completions", greedy_completion_body("Words", 3));
    release = true;
    hold.join();
    for (auto& t : queued)
        t.join();
    MT_COMPARE(r.status, 429);
    MT_CHECK(!r.headers.empty());
    auto it = r.headers.find("Retry-After");
    MT_CHECK(it != r.headers.end());
    MT_COMPARE(r.body["error"]["type"].get<std::string>(), std::string("rate_limit_error"));
    for (int s : statuses)
        MT_COMPARE(s, 200);
}

// The waiting limit counts sequences: a group (n > 1) still waiting for its prefill counts its
// n choices, not 1 (Engine::num_waiting_sequences, which the loop's 429 check adds).
MT_TEST(waiting_group_counts_its_sequences) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    int32_t before = -1, with_group = -1, with_single = -1, after = -1;
    std::string error;
    f.loop->with_engine([&](Engine& e) {
        before = e.num_waiting_sequences();
        const std::vector<int32_t> prompt = f.model->tokenizer->encode("Group of three", true);
        SamplingParams p;
        p.max_tokens = 4;
        auto group = e.add_request_group(prompt, parallel_sampling_choices(p, 3));
        auto single = group ? e.add_request(prompt, p) : Result<RequestId>(group.error());
        if (!group || !single) {
            error = group ? single.message() : group.message();
            return;
        }
        with_group = e.num_waiting_sequences();
        for (RequestId id : *group) // unforked choices: dropped with their prefill
            e.abort(id);
        with_single = e.num_waiting_sequences();
        e.abort(*single);
        after = e.num_waiting_sequences();
    });
    MT_REQUIRE_MSG(error.empty(), "%s", error.c_str());
    MT_COMPARE(before, 0);
    MT_COMPARE(with_group, 4); // 3 choices + 1 single request
    MT_COMPARE(with_single, 1);
    MT_COMPARE(after, 0);
    std::string why;
    MT_CHECK_MSG(f.engine_idle_and_clean(5.0, why), "%s", why.c_str());
}

MT_TEST(greedy_output_equals_generate) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    for (const char* prompt : {"The model", "Words follow", "A chat template"}) {
        MT_SCOPE("prompt %s", prompt);
        SamplingParams p;
        p.temperature = 0;
        p.max_tokens = 24;
        p.max_tokens_set = true;
        std::vector<int32_t> ids = f.model->tokenizer->encode(prompt, true);
        Result<GenerationResult> expected = make_error("not run");
        f.loop->with_engine([&](Engine& e) { expected = generate(e, ids, p); });
        MT_REQUIRE(expected.ok());
        Reply r = post(f, "/v1/completions", greedy_completion_body(prompt, 24));
        MT_REQUIRE_COMPARE(r.status, 200);
        MT_COMPARE(r.body["choices"][0]["text"].get<std::string>(), expected->text);
        MT_COMPARE(r.body["usage"]["completion_tokens"].get<size_t>(), expected->ids.size());
        MT_COMPARE(r.body["usage"]["prompt_tokens"].get<size_t>(), ids.size());
        MT_COMPARE(r.body["choices"][0]["finish_reason"].get<std::string>(),
                   std::string(finish_reason_name(expected->finish)));
        // The same prompt as token ids.
        Reply byid = post(f, "/v1/completions",
                          json{{"prompt", ids}, {"max_tokens", 24}, {"temperature", 0}}.dump());
        MT_COMPARE(byid.body["choices"][0]["text"].get<std::string>(), expected->text);
    }
}

MT_TEST(stop_string_ends_the_text) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    Reply full = post(
        f, "/v1/completions",
        json{{"prompt", "The model"}, {"max_tokens", 30}, {"temperature", 0}, {"ignore_eos", true}}
            .dump());
    MT_REQUIRE_COMPARE(full.status, 200);
    const std::string text = full.body["choices"][0]["text"];
    MT_REQUIRE(text.size() > 12);
    const std::string stop = text.substr(text.size() / 2, 3);
    const size_t at = text.find(stop);
    Reply r = post(f, "/v1/completions",
                   json{{"prompt", "The model"},
                        {"max_tokens", 30},
                        {"temperature", 0},
                        {"ignore_eos", true},
                        {"stop", json::array({"zzzz", stop})}}
                       .dump());
    MT_REQUIRE_COMPARE(r.status, 200);
    MT_COMPARE(r.body["choices"][0]["text"].get<std::string>(), text.substr(0, at));
    MT_COMPARE(r.body["choices"][0]["finish_reason"].get<std::string>(), std::string("stop"));
    // A single string works too.
    Reply one = post(f, "/v1/completions",
                     json{{"prompt", "The model"},
                          {"max_tokens", 30},
                          {"temperature", 0},
                          {"ignore_eos", true},
                          {"stop", stop}}
                         .dump());
    MT_COMPARE(one.body["choices"][0]["text"].get<std::string>(), text.substr(0, at));
}

MT_TEST(chat_completion_uses_the_template) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    const json msgs = {{{"role", "system"}, {"content", "Be brief."}},
                       {{"role", "user"}, {"content", "Hello"}}};
    Reply r = post(f, "/v1/chat/completions",
                   json{{"messages", msgs}, {"temperature", 0}, {"max_tokens", 20}}.dump());
    MT_REQUIRE_COMPARE(r.status, 200);
    MT_COMPARE(r.body["object"].get<std::string>(), std::string("chat.completion"));
    const json& msg = r.body["choices"][0]["message"];
    MT_COMPARE(msg["role"].get<std::string>(), std::string("assistant"));
    MT_CHECK(msg["content"].is_string());
    // The prompt is the template's rendering: /tokenize with the same messages agrees.
    Reply tk = post(f, "/tokenize", json{{"messages", msgs}}.dump());
    MT_REQUIRE_COMPARE(tk.status, 200);
    MT_COMPARE(r.body["usage"]["prompt_tokens"], tk.body["count"]);
    const std::string rendered =
        post(f, "/detokenize", json{{"tokens", tk.body["tokens"]}}.dump()).body["prompt"];
    MT_CHECK(rendered.find("Be brief.") != std::string::npos);
    MT_CHECK(rendered.find("Hello") != std::string::npos);
    // Text parts are joined like a string content.
    Reply parts =
        post(f, "/v1/chat/completions",
             json{{"messages",
                   {{{"role", "system"}, {"content", "Be brief."}},
                    {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "Hello"}}}}}}},
                  {"temperature", 0},
                  {"max_tokens", 20}}
                 .dump());
    MT_COMPARE(parts.body["choices"][0]["message"]["content"], msg["content"]);
    // Tools go to the template; the demo model writes no call, so the text stays content.
    const json tools = {{{"type", "function"},
                         {"function",
                          {{"name", "get_weather"},
                           {"parameters", {{"type", "object"}, {"properties", json::object()}}}}}}};
    Reply withtools = post(
        f, "/v1/chat/completions",
        json{{"messages", msgs}, {"tools", tools}, {"temperature", 0}, {"max_tokens", 20}}.dump());
    MT_REQUIRE_COMPARE(withtools.status, 200);
    MT_CHECK(withtools.body["choices"][0]["message"]["content"].is_string());
    MT_CHECK(!withtools.body["choices"][0]["message"].contains("tool_calls"));
}

MT_TEST(tokenize_detokenize) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    Reply t = post(f, "/tokenize",
                   R"({"model":"demo","prompt":"Words follow words.","add_special_tokens":false})");
    MT_REQUIRE_COMPARE(t.status, 200);
    MT_COMPARE(t.body["tokens"].get<std::vector<int32_t>>(),
               f.model->tokenizer->encode("Words follow words.", false));
    MT_COMPARE(t.body["count"].get<size_t>(), t.body["tokens"].size());
    MT_COMPARE(t.body["max_model_len"].get<int64_t>(), f.engine->context_limit());
    Reply d = post(f, "/detokenize", json{{"tokens", t.body["tokens"]}}.dump());
    MT_REQUIRE_COMPARE(d.status, 200);
    MT_COMPARE(d.body["prompt"].get<std::string>(), std::string("Words follow words."));
    MT_COMPARE(post(f, "/detokenize", R"({"tokens":[-1]})").status, 400);
    MT_COMPARE(post(f, "/detokenize", R"({"tokens":"abc"})").status, 400);
    MT_COMPARE(post(f, "/tokenize", R"({"prompt":5})").status, 400);
}

MT_TEST(sse_framing_completion_and_chat) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    Reply whole = post(f, "/v1/completions", greedy_completion_body("The model", 16));
    MT_REQUIRE_COMPARE(whole.status, 200);
    int status = 0;
    const std::string raw = post_stream(f, "/v1/completions",
                                        json{{"prompt", "The model"},
                                             {"max_tokens", 16},
                                             {"temperature", 0},
                                             {"stream", true},
                                             {"stream_options", {{"include_usage", true}}}}
                                            .dump(),
                                        0, &status);
    MT_COMPARE(status, 200);
    bool framing = false;
    auto events = sse_events(raw, framing);
    MT_CHECK(framing);
    MT_REQUIRE(events.size() >= 3);
    MT_COMPARE(events.back(), std::string("[DONE]"));
    std::string text;
    std::string finish;
    for (size_t i = 0; i + 2 < events.size(); ++i) {
        json c = json::parse(events[i]);
        MT_COMPARE(c["object"].get<std::string>(), std::string("text_completion"));
        MT_CHECK(c.contains("usage") && c["usage"].is_null());
        text += c["choices"][0]["text"].get<std::string>();
        if (c["choices"][0]["finish_reason"].is_string())
            finish = c["choices"][0]["finish_reason"];
    }
    MT_COMPARE(text, whole.body["choices"][0]["text"].get<std::string>());
    MT_COMPARE(finish, whole.body["choices"][0]["finish_reason"].get<std::string>());
    json usage = json::parse(events[events.size() - 2]);
    MT_COMPARE(usage["choices"].size(), size_t(0));
    MT_COMPARE(usage["usage"], whole.body["usage"]);

    const std::string chat_raw =
        post_stream(f, "/v1/chat/completions",
                    json{{"messages", {{{"role", "user"}, {"content", "Hello"}}}},
                         {"max_tokens", 10},
                         {"temperature", 0},
                         {"stream", true},
                         {"n", 2}}
                        .dump());
    auto chat = sse_events(chat_raw, framing);
    MT_CHECK(framing);
    MT_REQUIRE(chat.size() >= 3);
    MT_COMPARE(chat.back(), std::string("[DONE]"));
    std::string texts[2];
    bool role[2] = {false, false};
    int finishes = 0;
    for (size_t i = 0; i + 1 < chat.size(); ++i) {
        json c = json::parse(chat[i]);
        MT_COMPARE(c["object"].get<std::string>(), std::string("chat.completion.chunk"));
        MT_CHECK(!c.contains("usage"));
        const size_t idx = c["choices"][0]["index"];
        MT_REQUIRE(idx < 2);
        const json& d = c["choices"][0]["delta"];
        if (d.contains("role")) {
            MT_CHECK(!role[idx]); // once, first
            MT_CHECK(texts[idx].empty());
            role[idx] = true;
        }
        if (d.contains("content"))
            texts[idx] += d["content"].get<std::string>();
        finishes += c["choices"][0]["finish_reason"].is_string();
    }
    MT_CHECK(role[0] && role[1]);
    MT_COMPARE(finishes, 2);
    MT_COMPARE(texts[0], texts[1]); // greedy: both choices alike
}

MT_TEST(client_disconnect_mid_stream_frees_blocks) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    std::string why;
    MT_REQUIRE_MSG(f.engine_idle_and_clean(10, why), "before: %s", why.c_str());
    // A long request; the client goes away after a few chunks.
    const std::string raw = post_stream(f, "/v1/completions",
                                        json{{"prompt", "The model"},
                                             {"max_tokens", 4000},
                                             {"ignore_eos", true},
                                             {"stream", true},
                                             {"n", 2}}
                                            .dump(),
                                        3);
    MT_CHECK(raw.find("data: ") == 0);
    MT_CHECK(raw.find("[DONE]") == std::string::npos);
    MT_CHECK_MSG(f.engine_idle_and_clean(10, why), "after the disconnect: %s", why.c_str());
    // The server still serves.
    MT_COMPARE(post(f, "/v1/completions", greedy_completion_body("The model", 4)).status, 200);
}

MT_TEST(cors_only_for_allowed_origins) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    auto c = f.client();
    auto ok = c->Get("/v1/models", {{"Origin", "http://allowed.example"}});
    MT_REQUIRE(ok);
    MT_COMPARE(ok->get_header_value("Access-Control-Allow-Origin"),
               std::string("http://allowed.example"));
    auto other = c->Get("/v1/models", {{"Origin", "http://evil.example"}});
    MT_REQUIRE(other);
    MT_CHECK(!other->has_header("Access-Control-Allow-Origin"));
}

MT_TEST(loading_is_503) {
    ServerOptions so;
    so.port = 0;
    so.threads = 2;
    OpenAiServer s(so, nullptr);
    auto port = s.bind();
    MT_REQUIRE(port.ok());
    std::thread t([&] { s.listen(); });
    httplib::Client c("127.0.0.1", *port);
    auto models = c.Get("/v1/models");
    auto health = c.Get("/health");
    auto comp = c.Post("/v1/completions", R"({"prompt":"a"})", "application/json");
    s.stop();
    t.join();
    MT_REQUIRE(models && health && comp);
    MT_COMPARE(models->status, 503);
    MT_COMPARE(health->status, 503);
    MT_COMPARE(comp->status, 503);
    json e = json::parse(comp->body, nullptr, false);
    MT_CHECK(e.contains("error"));
}

// A small generator of hostile bodies: malformed JSON, deep nesting, huge numbers, wrong types
// for every field, random bytes, invalid UTF-8. Each must be a 4xx (never a crash or a 5xx).
MT_TEST(hostile_bodies_are_4xx) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    std::vector<std::string> bodies = {"",
                                       "{",
                                       "}",
                                       "[]",
                                       "null",
                                       "1",
                                       "\"s\"",
                                       "{\"prompt\":",
                                       "{\"prompt\":\"a\",}",
                                       std::string(5000, '[') + std::string(5000, ']'),
                                       "{\"prompt\":" + std::string(100000 / 2, '[') + "}",
                                       R"({"prompt":"a","max_tokens":1e999})",
                                       R"({"prompt":"a","max_tokens":-1e999})",
                                       R"({"prompt":"a","max_tokens":99999999999999999999999999})",
                                       R"({"prompt":"a","seed":18446744073709551616})",
                                       R"({"prompt":"a","n":1e10})",
                                       R"({"prompt":"a","temperature":NaN})",
                                       R"({"prompt":"a","top_k":1.0e308})",
                                       "{\"prompt\":\"\xff\xfe\"}",
                                       "{\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\"}]}",
                                       R"({"messages":"hi"})",
                                       R"({"messages":[]})",
                                       R"({"messages":[1,2]})",
                                       R"({"messages":[{"role":5}]})",
                                       R"({"tokens":[1e300]})",
                                       R"({"tokens":[null]})"};
    const std::vector<std::string> fields = {"prompt",
                                             "messages",
                                             "model",
                                             "n",
                                             "stream",
                                             "stream_options",
                                             "max_tokens",
                                             "max_completion_tokens",
                                             "temperature",
                                             "top_p",
                                             "top_k",
                                             "min_p",
                                             "seed",
                                             "stop",
                                             "stop_token_ids",
                                             "presence_penalty",
                                             "frequency_penalty",
                                             "repetition_penalty",
                                             "logprobs",
                                             "top_logprobs",
                                             "tools",
                                             "tool_choice",
                                             "response_format",
                                             "chat_template_kwargs",
                                             "ignore_eos",
                                             "best_of",
                                             "tokens",
                                             "add_generation_prompt"};
    const std::vector<json> wrong = {json("x"),
                                     json(-5),
                                     json(1e308),
                                     json::array({json::object()}),
                                     json::object({{"a", json::array()}}),
                                     json(true)};
    std::mt19937 rng(1234);
    for (const std::string& k : fields)
        for (const json& w : wrong) {
            json j{{k, w}};
            if (k != "prompt" && (rng() & 1))
                j["prompt"] = "a";
            if (k != "messages" && (rng() & 1))
                j["messages"] = {{{"role", "user"}, {"content", "x"}}};
            j["max_tokens"] = k == "max_tokens" ? w : json(2);
            bodies.push_back(j.dump());
        }
    for (int i = 0; i < 40; ++i) {
        std::string s(static_cast<size_t>(rng() % 200), '\0');
        for (char& c : s)
            c = static_cast<char>(rng() % 256);
        bodies.push_back(s);
    }
    int checked = 0;
    for (const std::string& body : bodies)
        for (const char* path :
             {"/v1/completions", "/v1/chat/completions", "/tokenize", "/detokenize"}) {
            Reply r = post(f, path, body);
            MT_SCOPE("%s %s", path, body.substr(0, 60).c_str());
            // A body that happens to be valid may succeed; anything else is a 4xx error object.
            MT_CHECK(r.status == 200 || (r.status >= 400 && r.status < 500));
            if (r.status >= 400) {
                MT_CHECK(r.body.is_object() && r.body.contains("error"));
                ++checked;
            }
        }
    MT_CHECK(checked > 300);
    std::string why;
    MT_CHECK_MSG(f.engine_idle_and_clean(10, why), "%s", why.c_str());
}

MT_TEST(oversized_header_and_uri_are_refused) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    auto c = f.client();
    auto header = c->Get("/v1/models", {{"X-Big", std::string(20000, 'a')}});
    MT_CHECK(!header || (header->status >= 400 && header->status < 500));
    auto uri = c->Get(("/v1/models?" + std::string(20000, 'b')).c_str());
    MT_CHECK(!uri || (uri->status >= 400 && uri->status < 500));
    MT_COMPARE(get(f, "/v1/models").status, 200); // still serving
}

MT_TEST(request_timeout_aborts_and_frees_blocks) {
    FixtureOptions o;
    o.request_timeout_s = 1;
    ServerFixture f(o);
    MT_REQUIRE_MSG(f.error.empty(), "%s", f.error.c_str());
    // Longer than a second on any machine: 64 sequences of 8000 tokens.
    const json long_req{
        {"prompt", "The model"}, {"max_tokens", 8000}, {"ignore_eos", true}, {"n", 64}};
    const auto t0 = std::chrono::steady_clock::now();
    Reply r = post(f, "/v1/completions", long_req.dump());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MT_REQUIRE_COMPARE(r.status, 200);
    int aborted = 0;
    for (const json& c : r.body["choices"])
        aborted += c["finish_reason"] == "abort";
    MT_CHECK(aborted > 0);
    MT_CHECK_MSG(s < 10, "took %.1f s", s);
    json streamed = long_req;
    streamed["stream"] = true;
    const std::string raw = post_stream(f, "/v1/completions", streamed.dump());
    MT_CHECK(raw.find("\"finish_reason\":\"abort\"") != std::string::npos);
    MT_CHECK(raw.find("data: [DONE]") != std::string::npos);
    std::string why;
    MT_CHECK_MSG(f.engine_idle_and_clean(10, why), "%s", why.c_str());
}

MT_TEST(tool_calls_parsed_from_output) {
    auto q = parse_tool_calls("Let me check.\n<tool_call>\n{\"name\": \"get_weather\", "
                              "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>"
                              "{\"name\": \"now\", \"arguments\": {}}</tool_call>",
                              "x");
    MT_REQUIRE(q.has_value());
    MT_COMPARE(q->content, std::string("Let me check."));
    MT_REQUIRE_COMPARE(q->tool_calls.size(), size_t(2));
    MT_COMPARE(q->tool_calls[0]["type"].get<std::string>(), std::string("function"));
    MT_COMPARE(q->tool_calls[0]["function"]["name"].get<std::string>(), std::string("get_weather"));
    MT_COMPARE(json::parse(q->tool_calls[0]["function"]["arguments"].get<std::string>()),
               json({{"city", "Paris"}}));
    MT_CHECK(q->tool_calls[0]["id"] != q->tool_calls[1]["id"]);
    auto l =
        parse_tool_calls("<|python_tag|>{\"name\": \"search\", \"parameters\": {\"q\": 1}}", "y");
    MT_REQUIRE(l.has_value());
    MT_COMPARE(l->content, std::string());
    MT_COMPARE(l->tool_calls[0]["function"]["name"].get<std::string>(), std::string("search"));
    MT_COMPARE(l->tool_calls[0]["function"]["arguments"].get<std::string>(),
               std::string("{\"q\":1}"));
    MT_CHECK(!parse_tool_calls("Just text.", "z").has_value());
    MT_CHECK(!parse_tool_calls("<tool_call>{not json}</tool_call>", "z").has_value());
    MT_CHECK(!parse_tool_calls("{\"no_name\": 1}", "z").has_value());
    MT_CHECK(!parse_tool_calls("<tool_call>" + std::string(1000, '[') + "</tool_call>", "z"));
}

MINI_TEST_MAIN()
