// UTF-8 helpers that give Python str semantics (indices, lengths and whitespace are in code
// points) to the UTF-8 std::strings of the Jinja interpreter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmwb::jinja {

// Decodes the code point at s[i] and advances i. Invalid bytes decode as U+FFFD, one byte each.
char32_t utf8_next(std::string_view s, size_t& i);
void utf8_append(std::string& out, char32_t cp);
std::u32string to_u32(std::string_view s);
std::string to_utf8(std::u32string_view s);
size_t utf8_length(std::string_view s);

// Python str.isspace() for one code point.
bool is_space(char32_t cp);
// Python str.isprintable() for one code point (approximation: controls, separators other than
// the ASCII space, and format characters are not printable).
bool is_printable(char32_t cp);

// Python str.strip/lstrip/rstrip; chars == nullptr means whitespace.
std::string py_strip(std::string_view s, const std::string* chars, bool left, bool right);
// Python str.split / rsplit; sep == nullptr splits on whitespace runs.
std::vector<std::string> py_split(std::string_view s, const std::string* sep, long maxsplit,
                                  bool from_right);
// Python str.upper / lower / capitalize / title (case mapping of ASCII, Latin-1, Greek and
// Cyrillic letters; other scripts are left as they are).
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_capitalize(std::string_view s);
std::string py_title(std::string_view s);
bool is_upper_cp(char32_t c);
// Python str.islower / isupper: at least one cased character and no cased one of the other case.
bool py_islower(std::string_view s);
bool py_isupper(std::string_view s);
bool is_lower_cp(char32_t c);

} // namespace llmwb::jinja
