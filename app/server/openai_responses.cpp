#include "app/server/openai_responses.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

#include "engine/tokenizer/tokenizer.h"

namespace llmwb {

namespace {

using json = nlohmann::ordered_json;

std::string token_string(const Tokenizer& tok, int32_t id) {
    if (!tok.valid_id(id))
        return "";
    const int32_t one[1] = {id};
    return tok.decode(one, false);
}

json bytes_of(const std::string& s) {
    json b = json::array();
    for (unsigned char c : s)
        b.push_back(static_cast<int>(c));
    return b;
}

} // namespace

json finish_reason_json(bool finished, FinishReason finish) {
    if (!finished)
        return nullptr;
    switch (finish) {
    case FinishReason::Stop:
        return "stop";
    case FinishReason::Length:
    case FinishReason::Context:
    case FinishReason::KvPool:
        return "length";
    default:
        return "abort";
    }
}

json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
    return json{{"prompt_tokens", prompt_tokens},
                {"total_tokens", prompt_tokens + completion_tokens},
                {"completion_tokens", completion_tokens}};
}

json completion_logprobs(const Tokenizer& tok, std::span<const SampledToken> tokens, int32_t top_n,
                         int64_t& offset) {
    json out{{"text_offset", json::array()},
             {"token_logprobs", json::array()},
             {"tokens", json::array()},
             {"top_logprobs", json::array()}};
    for (const SampledToken& t : tokens) {
        const std::string s = token_string(tok, t.id);
        out["text_offset"].push_back(offset);
        offset += static_cast<int64_t>(s.size());
        out["token_logprobs"].push_back(t.logprob);
        out["tokens"].push_back(s);
        json top = json::object();
        for (size_t i = 0; i < t.top.size() && static_cast<int32_t>(i) < top_n; ++i)
            top[token_string(tok, t.top[i].id)] = t.top[i].logprob;
        out["top_logprobs"].push_back(std::move(top));
    }
    return out;
}

json chat_logprobs_content(const Tokenizer& tok, std::span<const SampledToken> tokens,
                           int32_t top_n) {
    json content = json::array();
    for (const SampledToken& t : tokens) {
        const std::string s = token_string(tok, t.id);
        json top = json::array();
        for (size_t i = 0; i < t.top.size() && static_cast<int32_t>(i) < top_n; ++i) {
            const std::string ts = token_string(tok, t.top[i].id);
            top.push_back({{"token", ts}, {"logprob", t.top[i].logprob}, {"bytes", bytes_of(ts)}});
        }
        content.push_back(
            {{"token", s}, {"logprob", t.logprob}, {"bytes", bytes_of(s)}, {"top_logprobs", top}});
    }
    return content;
}

std::string make_response_id(const char* prefix) {
    static std::atomic<uint64_t> counter{0};
    static const uint64_t salt =
        std::random_device{}() ^
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%016llx%08llx", prefix, static_cast<unsigned long long>(salt),
                  static_cast<unsigned long long>(counter.fetch_add(1)));
    return buf;
}

} // namespace llmwb
