#include "engine/runtime/sampling_params.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace llmwb {

namespace {

using T = SamplingFieldType;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// clang-format off
constexpr std::array<SamplingField, 14> kFields{{
    {"temperature", T::Real, "[0, inf)", "0 = greedy (default 1.0)", 0, kInf, false, true},
    {"top_p", T::Real, "(0, 1]", "nucleus sampling: smallest set with this probability mass",
     0, 1, true, false},
    {"top_k", T::Integer, "[0, 2147483647]", "the K most likely tokens (0 = off)",
     0, 0, false, false, 0, kIntMax},
    {"min_p", T::Real, "[0, 1]", "drop tokens below min_p x the top probability", 0, 1},
    {"repetition_penalty", T::Real, "(0, inf)", "over prompt and output (1 = off)",
     0, kInf, true, true},
    {"presence_penalty", T::Real, "[-2, 2]", "subtracted once per seen output token", -2, 2},
    {"frequency_penalty", T::Real, "[-2, 2]", "subtracted per output occurrence", -2, 2},
    {"seed", T::Integer, "[0, 9223372036854775807]", "same seed, same output",
     0, 0, false, false, 0, kInt64Max},
    {"max_tokens", T::Integer, "[1, 2147483647]", "tokens to generate (default: up to 256, within the context)",
     0, 0, false, false, 1, kIntMax},
    {"stop", T::Strings, "non-empty strings", "stop string (repeatable)"},
    {"stop_token_ids", T::TokenIds, "token ids >= 0", "stop token ids, e.g. 1,2,3"},
    {"ignore_eos", T::Flag, "true or false", "keep generating after EOS"},
    {"logprobs", T::Integer, "[0, 20]", "logprob of each token and the top N alternatives",
     0, 0, false, false, 0, 20},
    {"thinking_budget", T::Integer, "[0, 2147483647]", "tokens inside <think>...</think>; then </think> is forced",
     0, 0, false, false, 0, kIntMax},
}};
// clang-format on

std::string show(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

Status range_error(const SamplingField& f, std::string_view got) {
    const char* must = f.type == T::Integer ? " must be an integer in "
                       : f.type == T::Real  ? " must be in "
                                            : " must be ";
    return make_error(std::string(f.name) + must + std::string(f.range) + ", got " +
                      std::string(got));
}

bool in_range(const SamplingField& f, double v) {
    if (std::isnan(v))
        return false;
    if (f.min_open ? !(v > f.min) : !(v >= f.min))
        return false;
    if (f.max_open ? !(v < f.max) : !(v <= f.max))
        return false;
    // An open infinite end still excludes infinity: values are finite.
    return std::isfinite(v);
}

double get_real(const SamplingParams& p, std::string_view n) {
    if (n == "temperature")
        return p.temperature;
    if (n == "top_p")
        return p.top_p;
    if (n == "min_p")
        return p.min_p;
    if (n == "repetition_penalty")
        return p.repetition_penalty;
    if (n == "presence_penalty")
        return p.presence_penalty;
    return p.frequency_penalty;
}

void put_real(SamplingParams& p, std::string_view n, double v) {
    const auto f = static_cast<float>(v);
    if (n == "temperature")
        p.temperature = f;
    else if (n == "top_p")
        p.top_p = f;
    else if (n == "min_p")
        p.min_p = f;
    else if (n == "repetition_penalty")
        p.repetition_penalty = f;
    else if (n == "presence_penalty")
        p.presence_penalty = f;
    else
        p.frequency_penalty = f;
}

// Every seed is valid once set (programmatic seeds may use all 64 bits).
int64_t get_integer(const SamplingParams& p, std::string_view n) {
    if (n == "top_k")
        return p.top_k;
    if (n == "max_tokens")
        return p.max_tokens;
    if (n == "logprobs")
        return p.logprobs;
    if (n == "thinking_budget")
        return p.thinking_budget.value_or(0);
    return 0; // seed
}

void put_integer(SamplingParams& p, std::string_view n, int64_t v) {
    if (n == "top_k")
        p.top_k = static_cast<int>(v);
    else if (n == "max_tokens") {
        p.max_tokens = static_cast<int>(v);
        p.max_tokens_set = true; // a request's own limit: the length rule is strict
    } else if (n == "logprobs")
        p.logprobs = static_cast<int>(v);
    else if (n == "thinking_budget")
        p.thinking_budget = static_cast<int32_t>(v);
    else
        p.seed = static_cast<uint64_t>(v);
}

// Whole text as a number; nullopt when it is not one.
std::optional<double> parse_number(std::string_view text) {
    if (text.empty() || text.front() == ' ')
        return std::nullopt;
    const std::string s(text);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size())
        return std::nullopt;
    return v;
}

} // namespace

Status sampling_field_error(const SamplingField& field, std::string_view got) {
    return range_error(field, got);
}

std::span<const SamplingField> sampling_fields() {
    return kFields;
}

const SamplingField* find_sampling_field(std::string_view name) {
    for (const SamplingField& f : kFields)
        if (f.name == name)
            return &f;
    return nullptr;
}

std::string sampling_flag(const SamplingField& field) {
    std::string s = "--" + std::string(field.name);
    for (char& c : s)
        if (c == '_')
            c = '-';
    return s;
}

Status set_sampling_integer(SamplingParams& p, const SamplingField& f, int64_t v) {
    if (f.type != T::Integer)
        return set_sampling_number(p, f, static_cast<double>(v));
    if (v < f.imin || v > f.imax)
        return range_error(f, std::to_string(v));
    put_integer(p, f.name, v);
    return ok_status();
}

Status set_sampling_number(SamplingParams& p, const SamplingField& f, double v) {
    if (f.type == T::Integer) {
        // Integral and within int64 (2^63 itself is not: the bound below is exclusive).
        if (v != std::floor(v) || !(v >= -9.2233720368547758e18 && v < 9.2233720368547758e18))
            return range_error(f, show(v));
        return set_sampling_integer(p, f, static_cast<int64_t>(v));
    }
    if (f.type != T::Real)
        return range_error(f, show(v));
    if (!in_range(f, v))
        return range_error(f, show(v));
    put_real(p, f.name, v);
    return ok_status();
}

Status set_sampling_text(SamplingParams& p, const SamplingField& f, std::string_view text) {
    switch (f.type) {
    case T::Real: {
        auto v = parse_number(text);
        if (!v)
            return range_error(f, "'" + std::string(text) + "'");
        return set_sampling_number(p, f, *v);
    }
    case T::Integer: {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc() && end == text.data() + text.size())
            return set_sampling_integer(p, f, v);
        // Not an int64: a number out of range or with a fraction, or not a number at all.
        bool digits = !text.empty();
        for (size_t i = 0; i < text.size(); ++i)
            digits &= (text[i] >= '0' && text[i] <= '9') || (i == 0 && text[i] == '-');
        if (digits || parse_number(text))
            return range_error(f, std::string(text));
        return range_error(f, "'" + std::string(text) + "'");
    }
    case T::Flag:
        if (text == "true" || text == "1")
            p.ignore_eos = true;
        else if (text == "false" || text == "0")
            p.ignore_eos = false;
        else
            return range_error(f, "'" + std::string(text) + "'");
        return ok_status();
    case T::Strings:
        if (text.empty())
            return range_error(f, "''");
        p.stop.emplace_back(text);
        return ok_status();
    case T::TokenIds: {
        std::vector<int32_t> ids;
        size_t pos = 0;
        while (pos <= text.size()) {
            size_t comma = text.find(',', pos);
            if (comma == std::string_view::npos)
                comma = text.size();
            std::string_view item = text.substr(pos, comma - pos);
            while (!item.empty() && (item.front() == ' ' || item.front() == '['))
                item.remove_prefix(1);
            while (!item.empty() && (item.back() == ' ' || item.back() == ']'))
                item.remove_suffix(1);
            int64_t v = -1;
            auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
            if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < 0 ||
                v > kIntMax)
                return range_error(f, "'" + std::string(item) + "'");
            ids.push_back(static_cast<int32_t>(v));
            pos = comma + 1;
        }
        p.stop_token_ids = std::move(ids);
        return ok_status();
    }
    }
    return ok_status();
}

Status SamplingParams::validate(int32_t vocab_size) const {
    for (const SamplingField& f : kFields) {
        switch (f.type) {
        case T::Real: {
            const double v = get_real(*this, f.name);
            if (!in_range(f, v))
                return range_error(f, show(v));
            break;
        }
        case T::Integer: {
            const int64_t v = get_integer(*this, f.name);
            if (v < f.imin || v > f.imax)
                return range_error(f, std::to_string(v));
            break;
        }
        case T::Strings:
            for (const std::string& s : stop)
                if (s.empty())
                    return range_error(f, "''");
            break;
        case T::TokenIds:
            for (int32_t id : stop_token_ids) {
                if (id < 0)
                    return range_error(f, std::to_string(id));
                if (vocab_size > 0 && id >= vocab_size)
                    return make_error("stop_token_ids must be token ids in [0, " +
                                      std::to_string(vocab_size) + ") (the vocabulary), got " +
                                      std::to_string(id));
            }
            break;
        case T::Flag:
            break;
        }
    }
    return ok_status();
}

Result<int32_t> resolve_max_tokens(const SamplingParams& p, int64_t prompt_tokens,
                                   int64_t context_tokens) {
    if (context_tokens <= 0) // no context length known: max_tokens as given
        return p.max_tokens;
    const std::string ctx = std::to_string(context_tokens);
    if (prompt_tokens >= context_tokens)
        return make_error("prompt (" + std::to_string(prompt_tokens) +
                          " tokens) leaves no room in the model's context of " + ctx + " tokens");
    const int64_t room = context_tokens - prompt_tokens;
    if (!p.max_tokens_set)
        return static_cast<int32_t>(std::min<int64_t>(p.max_tokens, room));
    if (p.max_tokens > room)
        return make_error("prompt (" + std::to_string(prompt_tokens) + " tokens) + max_tokens (" +
                          std::to_string(p.max_tokens) +
                          ") = " + std::to_string(prompt_tokens + p.max_tokens) +
                          " exceeds the model's context of " + ctx + " tokens");
    return p.max_tokens;
}

} // namespace llmwb
