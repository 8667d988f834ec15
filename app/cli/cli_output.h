// Output helpers shared by the CLI commands.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/util/result.h"

namespace llmwb::cli {

struct CliModel;

// JSON on one line; invalid UTF-8 (possible in generated text) becomes U+FFFD, never a throw.
template <class J> std::string dump_json(const J& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string join_ids(const std::vector<int32_t>& ids);

// Renders the model's chat template over a messages file (shared by render-chat and generate).
Result<std::string> render_chat_file(const CliModel& m, const std::string& path,
                                     bool add_generation_prompt,
                                     std::optional<bool> enable_thinking);

} // namespace llmwb::cli
