#include "app/cli/prompts_jsonl.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "app/cli/cli_args.h"
#include "engine/runtime/sampling_params_json.h"
#include "engine/util/json_depth.h"

namespace llmwb::cli {

namespace {

constexpr int kMaxLineNesting = 16; // a prompt line needs 2 ({"ids": [...]})

using nlohmann::json;
using T = SamplingFieldType;

std::string shown(const json& v) {
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A JSON array of token ids (integers in [0, 2^31)); nullopt otherwise.
std::optional<std::vector<int32_t>> token_ids(const json& a) {
    if (!a.is_array())
        return std::nullopt;
    std::vector<int32_t> ids;
    ids.reserve(a.size());
    for (const json& v : a) {
        if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT32_MAX) ||
            v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
            return std::nullopt;
        ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
    }
    return ids;
}

Status set_field(SamplingParams& p, const SamplingField& f, const json& v) {
    return set_sampling_field_json(p, f, v);
}

Status parse_line(const json& j, PromptLine& out) {
    if (!j.is_object())
        return make_error("expected a JSON object, got " + shown(j).substr(0, 80));
    const bool has_prompt = j.contains("prompt"), has_ids = j.contains("ids");
    if (has_prompt == has_ids)
        return make_error("give exactly one of \"prompt\" and \"ids\"");
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        if (key == "prompt") {
            if (!it->is_string())
                return make_error("prompt must be a string, got " + shown(*it).substr(0, 80));
            out.prompt = it->get<std::string>();
        } else if (key == "ids") {
            auto ids = token_ids(*it);
            if (!ids)
                return make_error("ids must be an array of token ids >= 0");
            out.ids = std::move(*ids);
        } else if (const SamplingField* f = find_sampling_field(key)) {
            if (Status st = set_field(out.params, *f, *it); !st)
                return st;
        } else {
            return make_error("unknown key \"" + key + "\"");
        }
    }
    return out.params.validate();
}

} // namespace

Result<std::vector<PromptLine>> parse_prompts_jsonl(std::string_view text,
                                                    const SamplingParams& defaults,
                                                    const std::string& name) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
        text.remove_prefix(3);
    std::vector<PromptLine> out;
    int number = 0;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos)
            continue;
        if (out.size() >= kMaxPromptLines)
            return make_error(name + ": more than " + std::to_string(kMaxPromptLines) + " prompts");
        PromptLine pl;
        pl.line = number;
        pl.params = defaults;
        // Deep JSON is refused before parsing (engine/util/json_depth.h).
        const bool too_deep = !check_json_depth(line, kMaxLineNesting, "line").ok();
        json j = too_deep ? json(json::value_t::discarded)
                          : json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (too_deep) {
            pl.error = "JSON nested deeper than " + std::to_string(kMaxLineNesting) + " levels";
        } else if (j.is_discarded()) {
            pl.error = "invalid JSON";
        } else if (Status st = parse_line(j, pl); !st) {
            pl.error = st.message();
            pl.prompt.reset();
            pl.ids.reset();
        }
        out.push_back(std::move(pl));
    }
    if (out.empty())
        return make_error(name + ": no prompts");
    return out;
}

Result<std::vector<PromptLine>> read_prompts_jsonl(const std::string& path,
                                                   const SamplingParams& defaults) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    return parse_prompts_jsonl(*text, defaults, path);
}

} // namespace llmwb::cli
