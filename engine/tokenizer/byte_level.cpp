#include "engine/tokenizer/byte_level.h"

#include "engine/tokenizer/utf8.h"

namespace llmwb {

ByteLevelTable::ByteLevelTable() {
    cp_to_byte_.fill(-1);
    std::uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable =
            (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        const std::uint32_t cp = printable ? static_cast<std::uint32_t>(b) : next++;
        utf8::append(byte_to_text_[static_cast<std::size_t>(b)], cp);
        cp_to_byte_[cp] = static_cast<std::int16_t>(b);
    }
}

const ByteLevelTable& ByteLevelTable::instance() {
    static const ByteLevelTable table;
    return table;
}

void ByteLevelTable::encode(std::string_view bytes, std::string& out) const {
    for (char c : bytes)
        out += byte_to_text_[static_cast<std::uint8_t>(c)];
}

bool ByteLevelTable::decode(std::string_view text, std::string& out) const {
    const std::size_t mark = out.size();
    for (std::size_t i = 0; i < text.size();) {
        const utf8::Decoded d = utf8::decode(text, i);
        if (d.cp >= cp_to_byte_.size() || cp_to_byte_[d.cp] < 0) {
            out.resize(mark);
            return false;
        }
        out.push_back(static_cast<char>(cp_to_byte_[d.cp]));
        i += d.length;
    }
    return true;
}

} // namespace llmwb
