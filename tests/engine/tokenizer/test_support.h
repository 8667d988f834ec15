// Shared helpers of the tokenizer tests: asset paths and JSON loading.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace llmwb::test {

inline std::string assets_dir() {
    if (const char* env = std::getenv("LLMWB_TEST_ASSETS"); env && *env)
        return env;
    const char* home = std::getenv("HOME");
    return std::string(home ? home : ".") + "/.cache/llmwb/test-assets";
}

// Empty json (is_null) when the file is missing or unreadable.
inline nlohmann::json load_json(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    std::stringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str(), nullptr, false);
}

inline bool file_exists(const std::string& path) {
    return std::ifstream(path).good();
}

} // namespace llmwb::test
