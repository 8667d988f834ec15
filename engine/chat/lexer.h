// Lexer: template source -> a flat token stream, with Jinja2's whitespace control as Hugging Face
// configures it (trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False, and the
// `-` / `+` modifiers on tags).
#pragma once

#include <string>
#include <vector>

#include "engine/util/result.h"

namespace llmwb::jinja {

enum class TokenType {
    Data,          // template text between tags
    VariableBegin, // {{
    VariableEnd,   // }}
    BlockBegin,    // {%
    BlockEnd,      // %}
    Name,
    String,  // value is the decoded string
    Integer, // value holds the digits (underscores removed)
    Float,   // value holds the literal (underscores removed)
    Operator,
    Eof,
};

struct Token {
    TokenType type;
    std::string value;
    int line = 1;
};

struct LexerOptions {
    bool trim_blocks = true;
    bool lstrip_blocks = true;
    bool keep_trailing_newline = false;
};

Result<std::vector<Token>> tokenize(const std::string& source, const LexerOptions& options = {});

const char* token_type_name(TokenType t);

} // namespace llmwb::jinja
