// The GPT-2 byte-to-unicode table of byte-level BPE: every byte maps to one printable code
// point ('!'..'~', '¡'..'¬', '®'..'ÿ' map to themselves, the other 68 bytes to U+0100..U+0143 in
// order), so that vocab entries are printable strings.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace llmwb {

class ByteLevelTable {
  public:
    static const ByteLevelTable& instance();

    // UTF-8 of the code point that byte b maps to.
    const std::string& encode_byte(std::uint8_t b) const { return byte_to_text_[b]; }
    // Maps every byte of `bytes` and appends the result.
    void encode(std::string_view bytes, std::string& out) const;
    // Inverse of encode for one token's text; false (out untouched) if some character of
    // `text` is not in the table.
    bool decode(std::string_view text, std::string& out) const;

  private:
    ByteLevelTable();
    std::array<std::string, 256> byte_to_text_;
    std::array<std::int16_t, 512> cp_to_byte_{}; // code points < 512 only; -1 = none
};

} // namespace llmwb
