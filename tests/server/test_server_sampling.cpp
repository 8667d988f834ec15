// `llmwb serve`'s sampling over HTTP (the same in-process server as test_server_openai.cpp, in
// the same program): n > 1 with per-choice seeds, best_of, usage for n choices, enable_thinking
// per request, and the logprobs shapes of completions and chat.
#include <algorithm>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "app/server/openai_handlers.h"
#include "engine/model/demo_model.h"
#include "engine/serving/parallel_sampling.h"
#include "engine/tokenizer/tokenizer.h"
#include "server_fixture.h"

using namespace llmwb;
using namespace llmwb::server_test;
using nlohmann::json;

MT_TEST(n_choices_with_seeds) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    const json req{
        {"prompt", "The model"}, {"max_tokens", 12}, {"n", 3}, {"seed", 7}, {"temperature", 1.0}};
    Reply a = post(f, "/v1/completions", req.dump());
    MT_REQUIRE_COMPARE(a.status, 200);
    MT_REQUIRE_COMPARE(a.body["choices"].size(), size_t(3));
    size_t tokens = 0;
    for (size_t i = 0; i < 3; ++i) {
        MT_COMPARE(a.body["choices"][i]["index"].get<size_t>(), i);
        MT_CHECK(a.body["choices"][i]["finish_reason"].is_string());
    }
    Reply again = post(f, "/v1/completions", req.dump());
    for (size_t i = 0; i < 3; ++i)
        MT_COMPARE(again.body["choices"][i]["text"], a.body["choices"][i]["text"]);
    // Choice i samples with seed + i: choice 1 is the single request with seed 8.
    json single = req;
    single["n"] = 1;
    single["seed"] = 8;
    Reply s = post(f, "/v1/completions", single.dump());
    MT_COMPARE(s.body["choices"][0]["text"], a.body["choices"][1]["text"]);
    // usage counts every choice's tokens.
    for (size_t i = 0; i < 3; ++i) {
        Reply tk = post(
            f, "/tokenize",
            json{{"prompt", a.body["choices"][i]["text"]}, {"add_special_tokens", false}}.dump());
        tokens += tk.body["count"].get<size_t>();
    }
    MT_CHECK(a.body["usage"]["completion_tokens"].get<size_t>() >= tokens);
    MT_COMPARE(a.body["usage"]["total_tokens"].get<size_t>(),
               a.body["usage"]["completion_tokens"].get<size_t>() +
                   a.body["usage"]["prompt_tokens"].get<size_t>());
}

// best_of: best_of seeded samples, the n with the highest cumulative logprob returned best
// first; usage counts the prompt once and the returned choices' tokens (vLLM).
MT_TEST(best_of_returns_the_n_most_likely_samples) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    const json base{{"prompt", "The model"}, {"max_tokens", 6},    {"seed", 11},
                    {"temperature", 1.5},    {"ignore_eos", true}, {"logprobs", 0}};
    // The 4 samples best_of draws: choice i has seed 11 + i.
    json all = base;
    all["n"] = 4;
    Reply a = post(f, "/v1/completions", all.dump());
    MT_REQUIRE_COMPARE(a.status, 200);
    std::vector<std::pair<double, std::string>> samples;
    for (const json& c : a.body["choices"]) {
        double sum = 0;
        for (const json& lp : c["logprobs"]["token_logprobs"])
            sum += lp.get<double>();
        samples.emplace_back(sum, c["text"].get<std::string>());
    }
    MT_REQUIRE_COMPARE(samples.size(), size_t(4));
    std::vector<size_t> order = {0, 1, 2, 3};
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return samples[x].first > samples[y].first; });
    MT_CHECK_MSG(samples[order[0]].first > samples[order[3]].first,
                 "the samples should differ in likelihood");

    json best = base;
    best["n"] = 2;
    best["best_of"] = 4;
    Reply b = post(f, "/v1/completions", best.dump());
    MT_REQUIRE_COMPARE(b.status, 200);
    MT_REQUIRE_COMPARE(b.body["choices"].size(), size_t(2));
    for (size_t i = 0; i < 2; ++i) {
        MT_COMPARE(b.body["choices"][i]["index"].get<size_t>(), i);
        MT_COMPARE(b.body["choices"][i]["text"].get<std::string>(), samples[order[i]].second);
    }
    MT_COMPARE(b.body["usage"]["prompt_tokens"], a.body["usage"]["prompt_tokens"]);
    MT_COMPARE(b.body["usage"]["completion_tokens"].get<int>(), 2 * 6);
    // Without logprobs asked for, the ranking still happens and none are returned.
    best.erase("logprobs");
    best["n"] = 1;
    Reply c = post(f, "/v1/completions", best.dump());
    MT_REQUIRE_COMPARE(c.status, 200);
    MT_REQUIRE_COMPARE(c.body["choices"].size(), size_t(1));
    MT_COMPARE(c.body["choices"][0]["text"].get<std::string>(), samples[order[0]].second);
    MT_CHECK(c.body["choices"][0]["logprobs"].is_null());
    // best_of equal to n is plain n.
    best["n"] = 2;
    best["best_of"] = 2;
    MT_COMPARE(post(f, "/v1/completions", best.dump()).status, 200);
    std::string why;
    MT_CHECK_MSG(f.engine_idle_and_clean(5.0, why), "%s", why.c_str());
}

// n > 1: the prompt's tokens are counted once in usage, as vLLM counts them (per prompt).
MT_TEST(usage_counts_the_prompt_once_for_n_choices) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    json one{{"prompt", "Words follow words"}, {"max_tokens", 4}, {"ignore_eos", true}};
    Reply r1 = post(f, "/v1/completions", one.dump());
    one["n"] = 3;
    Reply r3 = post(f, "/v1/completions", one.dump());
    MT_REQUIRE_COMPARE(r1.status, 200);
    MT_REQUIRE_COMPARE(r3.status, 200);
    MT_COMPARE(r3.body["usage"]["prompt_tokens"], r1.body["usage"]["prompt_tokens"]);
    MT_COMPARE(r3.body["usage"]["completion_tokens"].get<int>(), 12);
    MT_COMPARE(r3.body["usage"]["total_tokens"].get<int>(),
               r1.body["usage"]["prompt_tokens"].get<int>() + 12);
}

// chat_template_kwargs.enable_thinking (vLLM's spelling) reaches the template per request.
MT_TEST(enable_thinking_per_request_reaches_the_template) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    ServedModel m;
    m.name = "thinker";
    m.tokenizer = f.model->tokenizer.get();
    set_chat_template(m,
                      std::string("{% for message in messages %}<|im_start|>{{ message.role }}\n"
                                  "{{ message.content }}<|im_end|>\n{% endfor %}"
                                  "{% if add_generation_prompt %}<|im_start|>assistant\n"
                                  "{% if enable_thinking is defined and enable_thinking is false %}"
                                  "<think>\n\n</think>\n\n{% endif %}{% endif %}"));
    MT_REQUIRE_MSG(m.chat_template != nullptr, "%s", m.chat_template_error.c_str());
    auto rendered = [&](const std::string& body) {
        auto r = parse_chat_request(json::parse(body));
        if (!std::holds_alternative<ChatRequest>(r))
            return std::string("parse error: ") + std::get<ApiError>(r).message;
        const ChatRequest& c = std::get<ChatRequest>(r);
        auto t = server_detail::render_chat_prompt(m, c.messages, c.tools, c.add_generation_prompt,
                                                   c.enable_thinking);
        return std::holds_alternative<std::string>(t)
                   ? std::get<std::string>(t)
                   : "render error: " + std::get<ApiError>(t).message;
    };
    const std::string msgs = R"("messages":[{"role":"user","content":"2+2?"}])";
    const std::string off =
        rendered("{" + msgs + R"(,"chat_template_kwargs":{"enable_thinking":false}})");
    const std::string on =
        rendered("{" + msgs + R"(,"chat_template_kwargs":{"enable_thinking":true}})");
    const std::string unset = rendered("{" + msgs + "}");
    MT_CHECK_MSG(off.find("assistant\n<think>\n\n</think>\n\n") != std::string::npos, "%s",
                 off.c_str());
    MT_CHECK_MSG(on.find("<think>") == std::string::npos, "%s", on.c_str());
    MT_COMPARE(on, unset);
    // Through the route: accepted, and a wrong type is refused naming the key (bad_rows).
    Reply r =
        post(f, "/v1/chat/completions",
             "{" + msgs + R"(,"max_tokens":2,"chat_template_kwargs":{"enable_thinking":false}})");
    MT_COMPARE(r.status, 200);
}

MT_TEST(logprobs_shapes) {
    ServerFixture& f = ready();
    MT_REQUIRE(f.error.empty());
    Reply c = post(f, "/v1/completions",
                   json{{"prompt", "The model"},
                        {"max_tokens", 6},
                        {"logprobs", 2},
                        {"temperature", 0},
                        {"ignore_eos", true}}
                       .dump());
    MT_REQUIRE_COMPARE(c.status, 200);
    const json& lp = c.body["choices"][0]["logprobs"];
    const size_t n = c.body["usage"]["completion_tokens"];
    MT_COMPARE(n, size_t(6));
    for (const char* key : {"tokens", "token_logprobs", "top_logprobs", "text_offset"})
        MT_COMPARE(lp[key].size(), n);
    std::string joined;
    for (size_t i = 0; i < n; ++i) {
        MT_COMPARE(lp["top_logprobs"][i].size(), size_t(2));
        MT_CHECK(lp["token_logprobs"][i].get<double>() <= 0.0);
        MT_COMPARE(lp["text_offset"][i].get<size_t>(), joined.size());
        joined += lp["tokens"][i].get<std::string>();
    }
    // The tokens include special tokens (<|im_end|>) that the text leaves out.
    for (const std::string special : {"<|im_end|>", "<|endoftext|>"})
        for (size_t at; (at = joined.find(special)) != std::string::npos;)
            joined.erase(at, special.size());
    MT_COMPARE(joined, c.body["choices"][0]["text"].get<std::string>());
    // Greedy: the chosen token is the best of the top list.
    MT_CHECK(lp["top_logprobs"][0].contains(lp["tokens"][0].get<std::string>()));

    Reply ch = post(f, "/v1/chat/completions",
                    json{{"messages", {{{"role", "user"}, {"content", "Hello"}}}},
                         {"max_completion_tokens", 5},
                         {"logprobs", true},
                         {"top_logprobs", 3},
                         {"ignore_eos", true}}
                        .dump());
    MT_REQUIRE_COMPARE(ch.status, 200);
    const json& content = ch.body["choices"][0]["logprobs"]["content"];
    MT_COMPARE(content.size(), size_t(5));
    for (const json& t : content) {
        MT_CHECK(t["token"].is_string() && t["logprob"].is_number() && t["bytes"].is_array());
        MT_COMPARE(t["top_logprobs"].size(), size_t(3));
        MT_CHECK(t["top_logprobs"][0].contains("bytes"));
    }
    Reply none = post(
        f, "/v1/chat/completions",
        json{{"messages", {{{"role", "user"}, {"content", "Hello"}}}}, {"max_tokens", 3}}.dump());
    MT_CHECK(none.body["choices"][0]["logprobs"].is_null());
}
