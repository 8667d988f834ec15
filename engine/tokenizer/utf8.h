// Small UTF-8 helpers for the tokenizer. Input text is untrusted: invalid bytes never abort,
// each one is reported as a unit of its own so that callers can pass it through unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace llmwb::utf8 {

inline constexpr std::uint32_t kInvalid = 0xFFFFFFFFu; // "code point" of an invalid byte

struct Decoded {
    std::uint32_t cp;     // kInvalid for a byte that does not start a well-formed sequence
    std::uint32_t length; // bytes consumed, >= 1
};

// Decodes the well-formed UTF-8 sequence at s[i] (precondition: i < s.size()); an ill-formed
// or truncated sequence yields {kInvalid, 1}.
Decoded decode(std::string_view s, std::size_t i);

// Appends the UTF-8 encoding of cp (precondition: cp <= 0x10FFFF and not a surrogate).
void append(std::string& out, std::uint32_t cp);

// Length of the well-formed prefix of s[i..] that a lossy converter would treat as one unit:
// the full sequence if valid, else the maximal subpart of an ill-formed sequence (>= 1 byte).
// `complete` is false when s ends inside a sequence that could still become valid.
std::size_t lossy_unit(std::string_view s, std::size_t i, bool& valid, bool& complete);

// Rust String::from_utf8_lossy: each maximal ill-formed subpart becomes U+FFFD.
std::string to_valid_lossy(std::string_view s);

bool is_valid(std::string_view s);

} // namespace llmwb::utf8
