// nlohmann/json's parser, lexer and serializer instantiated once for the whole build instead of in
// every translation unit that calls json::parse or dump(): the precompiled header
// (cmake/LlmwbPch.cmake) includes this header, so every target that uses it sees the explicit
// instantiation declarations below and links llmwb_json_templates (json_templates.cpp), which
// holds the one instantiation. Under AddressSanitizer a translation unit that parses and dumps
// JSON spent ~15 s of its compile in these templates (-O2: ~4 s); the test and app targets have
// dozens of such units. The program is the same either way: a unit compiled without the
// precompiled header instantiates the templates itself, as before (inline, merged by the linker).
// The adapters listed are the ones the code parses from (std::string, its iterators, const char*
// and string literals); another one is instantiated where it is used.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

// X(EXT): the declarations with EXT = extern, the definitions (json_templates.cpp) with nothing.
#define LLMWB_JSON_TEMPLATES(EXT)                                                                  \
    LLMWB_JSON_TEMPLATES_FOR(EXT, nlohmann::json)                                                  \
    LLMWB_JSON_TEMPLATES_FOR(EXT, nlohmann::ordered_json)

#define LLMWB_JSON_TEMPLATES_FOR(EXT, J)                                                           \
    EXT template class nlohmann::detail::serializer<J>;                                            \
    EXT template class nlohmann::detail::json_sax_dom_parser<J>;                                   \
    EXT template class nlohmann::detail::json_sax_dom_callback_parser<J>;                          \
    LLMWB_JSON_PARSER(EXT, J, std::string::const_iterator)                                         \
    LLMWB_JSON_PARSER(EXT, J, std::string::iterator)                                               \
    LLMWB_JSON_PARSER(EXT, J, const char*)

#define LLMWB_JSON_PARSER(EXT, J, It)                                                              \
    EXT template class nlohmann::detail::parser<J, nlohmann::detail::iterator_input_adapter<It>>;  \
    EXT template class nlohmann::detail::lexer<J, nlohmann::detail::iterator_input_adapter<It>>;

LLMWB_JSON_TEMPLATES(extern)
