// Parser: token stream -> Template (statements and expressions), following Jinja2's grammar and
// operator precedence. Unsupported tags (include, extends, import, block, call, ...) are errors
// that name the tag and the line.
#pragma once

#include <string>

#include "engine/chat/ast.h"
#include "engine/util/result.h"

namespace llmwb::jinja {

Result<Template> parse_template(const std::string& source);

} // namespace llmwb::jinja
