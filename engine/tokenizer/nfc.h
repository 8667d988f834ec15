// Unicode Normalization Form C (the "NFC" normalizer of tokenizer.json, used by Qwen).
#pragma once

#include <string>
#include <string_view>

namespace llmwb {

// NFC of UTF-8 text. Invalid bytes are passed through unchanged (as starters that compose with
// nothing). Text that cannot change (every code point below U+0300) is returned as is quickly.
std::string nfc_normalize(std::string_view text);

} // namespace llmwb
