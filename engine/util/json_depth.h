// The nesting depth of JSON text, checked before a parser sees it. nlohmann's parser is
// iterative, but destroying, converting or dumping the parsed value recurses once per level: a
// file of a million '[' followed by a million ']' (4 MB) overflows the stack. Every reader of
// external JSON (model files, tokenizer files, prompts, chat messages, reports) refuses deeper
// text first, with the file and the reason.
#pragma once

#include <string>
#include <string_view>

#include "engine/util/result.h"

namespace llmwb {

// Deep enough for every real file (tokenizer.json and config.json nest under 10 levels, tool
// schemas in chat messages a few dozen), shallow enough for any stack.
inline constexpr int kMaxJsonDepth = 128;

// Counts [ and { outside strings (an escaped character never ends a string). `where` names the
// input in the error.
inline Status check_json_depth(std::string_view text, int max_depth, const std::string& where) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i; // the escaped character cannot end the string
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                return make_error(where + ": JSON nested deeper than " + std::to_string(max_depth) +
                                  " levels");
        } else if (c == ']' || c == '}') {
            if (depth > 0)
                --depth; // an unbalanced close is the parser's error to report
        }
    }
    return ok_status();
}

} // namespace llmwb
