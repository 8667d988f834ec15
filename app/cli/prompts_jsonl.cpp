#include "app/cli/prompts_jsonl.h"

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_args.h"

namespace llmwb::cli {

namespace {

using nlohmann::json;

Status parse_line(const json& j, PromptLine& out) {
    if (!j.is_object())
        return make_error("expected a JSON object");
    auto num = [&](const char* key, double lo, double hi, auto& field) -> Status {
        auto it = j.find(key);
        if (it == j.end())
            return ok_status();
        if (!it->is_number())
            return make_error(std::string("\"") + key + "\" must be a number");
        const double v = it->get<double>();
        if (!(v >= lo && v <= hi))
            return make_error(std::string("\"") + key + "\" is out of range");
        using T = std::remove_reference_t<decltype(field)>;
        if constexpr (std::is_integral_v<T>) {
            if (v != std::floor(v))
                return make_error(std::string("\"") + key + "\" must be an integer");
        }
        field = static_cast<T>(v);
        return ok_status();
    };
    static const char* kKeys[] = {"prompt",
                                  "ids",
                                  "max_tokens",
                                  "temperature",
                                  "top_p",
                                  "top_k",
                                  "min_p",
                                  "seed",
                                  "stop",
                                  "stop_token_ids",
                                  "ignore_eos",
                                  "repetition_penalty",
                                  "presence_penalty",
                                  "frequency_penalty"};
    for (auto it = j.begin(); it != j.end(); ++it) {
        bool known = false;
        for (const char* k : kKeys)
            known |= it.key() == k;
        if (!known)
            return make_error("unknown key \"" + it.key() + "\"");
    }
    const bool has_prompt = j.contains("prompt"), has_ids = j.contains("ids");
    if (has_prompt == has_ids)
        return make_error("give exactly one of \"prompt\" and \"ids\"");
    if (has_prompt) {
        if (!j["prompt"].is_string())
            return make_error("\"prompt\" must be a string");
        out.prompt = j["prompt"].get<std::string>();
    } else {
        const json& a = j["ids"];
        if (!a.is_array())
            return make_error("\"ids\" must be an array of token ids");
        std::vector<int32_t> ids;
        for (const json& v : a) {
            if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
                return make_error("\"ids\" must hold non-negative integers");
            ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
        }
        out.ids = std::move(ids);
    }
    SamplingParams& p = out.params;
    out.has_max_tokens = j.contains("max_tokens");
    int64_t seed = -1;
    for (Status st :
         {num("max_tokens", 1, 1 << 24, p.max_tokens), num("temperature", 0, 100, p.temperature),
          num("top_p", 0, 1, p.top_p), num("top_k", 0, 1 << 30, p.top_k),
          num("min_p", 0, 1, p.min_p), num("seed", 0, 9.0e15, seed),
          num("repetition_penalty", 0, 100, p.repetition_penalty),
          num("presence_penalty", -2, 2, p.presence_penalty),
          num("frequency_penalty", -2, 2, p.frequency_penalty)})
        if (!st)
            return st;
    if (seed >= 0)
        p.seed = static_cast<uint64_t>(seed);
    if (auto it = j.find("stop"); it != j.end()) {
        p.stop.clear();
        if (it->is_string()) {
            p.stop.push_back(it->get<std::string>());
        } else if (it->is_array()) {
            for (const json& s : *it) {
                if (!s.is_string())
                    return make_error("\"stop\" must be a string or strings");
                p.stop.push_back(s.get<std::string>());
            }
        } else {
            return make_error("\"stop\" must be a string or an array of strings");
        }
    }
    if (auto it = j.find("stop_token_ids"); it != j.end()) {
        if (!it->is_array())
            return make_error("\"stop_token_ids\" must be an array");
        p.stop_token_ids.clear();
        for (const json& v : *it) {
            if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
                return make_error("\"stop_token_ids\" must hold non-negative integers");
            p.stop_token_ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
        }
    }
    if (auto it = j.find("ignore_eos"); it != j.end()) {
        if (!it->is_boolean())
            return make_error("\"ignore_eos\" must be true or false");
        p.ignore_eos = it->get<bool>();
    }
    return p.validate();
}

} // namespace

Result<std::vector<PromptLine>> read_prompts_jsonl(const std::string& path,
                                                   const SamplingParams& defaults) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    std::vector<PromptLine> out;
    std::istringstream in(*text);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        if (out.size() >= 1000000)
            return make_error(path + ": more than 1000000 prompts");
        json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded())
            return make_error(path + ":" + std::to_string(number) + ": invalid JSON");
        PromptLine pl;
        pl.line = number;
        pl.params = defaults;
        if (Status st = parse_line(j, pl); !st)
            return make_error(path + ":" + std::to_string(number) + ": " + st.message());
        out.push_back(std::move(pl));
    }
    if (out.empty())
        return make_error(path + ": no prompts");
    return out;
}

} // namespace llmwb::cli
