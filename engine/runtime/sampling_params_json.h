// One SamplingParams field from a JSON value, through the field table (sampling_params.h): the
// one reading of sampling fields that JSON gives, shared by `llmwb generate --prompts` (JSONL
// lines) and the OpenAI server's request bodies. A template over nlohmann's json and
// ordered_json. Bounded: at most kMaxJsonStopStrings stop strings and kMaxJsonStopTokenIds stop
// token ids; a value of the wrong type or out of range is the table's error for the field.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/runtime/sampling_params.h"

namespace llmwb {

inline constexpr size_t kMaxJsonStopStrings = 64;
inline constexpr size_t kMaxJsonStopTokenIds = 1024;

// The value as the error shows it: compact JSON, cut to 80 characters.
template <class Json> std::string sampling_json_shown(const Json& v) {
    std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (s.size() > 80)
        s = s.substr(0, 77) + "...";
    return s;
}

template <class Json>
Status set_sampling_field_json(SamplingParams& p, const SamplingField& f, const Json& v) {
    using T = SamplingFieldType;
    switch (f.type) {
    case T::Real:
        if (!v.is_number())
            return sampling_field_error(f, sampling_json_shown(v));
        return set_sampling_number(p, f, v.template get<double>());
    case T::Integer:
        if (v.is_number_unsigned()) {
            const auto u = v.template get<uint64_t>();
            if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                return sampling_field_error(f, sampling_json_shown(v));
            return set_sampling_integer(p, f, static_cast<int64_t>(u));
        }
        if (v.is_number_integer())
            return set_sampling_integer(p, f, v.template get<int64_t>());
        if (v.is_number_float())
            return set_sampling_number(p, f, v.template get<double>());
        return sampling_field_error(f, sampling_json_shown(v));
    case T::Flag:
        if (!v.is_boolean())
            return sampling_field_error(f, sampling_json_shown(v));
        return set_sampling_text(p, f, v.template get<bool>() ? "true" : "false");
    case T::Strings: {
        p.stop.clear();
        if (v.is_string())
            return set_sampling_text(p, f, v.template get<std::string>());
        if (!v.is_array() || v.size() > kMaxJsonStopStrings)
            return sampling_field_error(f, sampling_json_shown(v));
        for (const Json& s : v) {
            if (!s.is_string())
                return sampling_field_error(f, sampling_json_shown(v));
            if (Status st = set_sampling_text(p, f, s.template get<std::string>()); !st)
                return st;
        }
        return ok_status();
    }
    case T::TokenIds: {
        if (!v.is_array() || v.size() > kMaxJsonStopTokenIds)
            return sampling_field_error(f, sampling_json_shown(v));
        std::vector<int32_t> ids;
        ids.reserve(v.size());
        for (const Json& e : v) {
            if (!e.is_number_integer() ||
                (e.is_number_unsigned() &&
                 e.template get<uint64_t>() > static_cast<uint64_t>(INT32_MAX)) ||
                e.template get<int64_t>() < 0 || e.template get<int64_t>() > INT32_MAX)
                return sampling_field_error(f, sampling_json_shown(v));
            ids.push_back(static_cast<int32_t>(e.template get<int64_t>()));
        }
        p.stop_token_ids = std::move(ids);
        return ok_status();
    }
    }
    return ok_status();
}

} // namespace llmwb
