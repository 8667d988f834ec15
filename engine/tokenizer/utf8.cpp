#include "engine/tokenizer/utf8.h"

namespace llmwb::utf8 {

namespace {

// Expected total length for a lead byte (0 = not a lead byte) and the allowed range of the
// second byte (Unicode Table 3-7, well-formed byte sequences).
struct Lead {
    std::uint8_t length, lo, hi;
};

Lead lead_info(std::uint8_t b) {
    if (b < 0x80)
        return {1, 0, 0};
    if (b >= 0xC2 && b <= 0xDF)
        return {2, 0x80, 0xBF};
    if (b == 0xE0)
        return {3, 0xA0, 0xBF};
    if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF)
        return {3, 0x80, 0xBF};
    if (b == 0xED)
        return {3, 0x80, 0x9F};
    if (b == 0xF0)
        return {4, 0x90, 0xBF};
    if (b >= 0xF1 && b <= 0xF3)
        return {4, 0x80, 0xBF};
    if (b == 0xF4)
        return {4, 0x80, 0x8F};
    return {0, 0, 0};
}

} // namespace

std::size_t lossy_unit(std::string_view s, std::size_t i, bool& valid, bool& complete) {
    const auto b0 = static_cast<std::uint8_t>(s[i]);
    const Lead lead = lead_info(b0);
    complete = true;
    if (lead.length == 1) {
        valid = true;
        return 1;
    }
    if (lead.length == 0) {
        valid = false;
        return 1;
    }
    std::size_t n = 1;
    while (n < lead.length) {
        if (i + n >= s.size()) { // truncated: could still be completed by more bytes
            valid = false;
            complete = false;
            return n;
        }
        const auto b = static_cast<std::uint8_t>(s[i + n]);
        const std::uint8_t lo = n == 1 ? lead.lo : 0x80;
        const std::uint8_t hi = n == 1 ? lead.hi : 0xBF;
        if (b < lo || b > hi) {
            valid = false;
            return n;
        }
        ++n;
    }
    valid = true;
    return n;
}

Decoded decode(std::string_view s, std::size_t i) {
    bool valid = false, complete = false;
    const std::size_t n = lossy_unit(s, i, valid, complete);
    if (!valid)
        return {kInvalid, 1};
    const auto b = [&](std::size_t k) {
        return static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[i + k]));
    };
    switch (n) {
    case 1:
        return {b(0), 1};
    case 2:
        return {((b(0) & 0x1F) << 6) | (b(1) & 0x3F), 2};
    case 3:
        return {((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F), 3};
    default:
        return {((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) |
                    (b(3) & 0x3F),
                4};
    }
}

void append(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

std::string to_valid_lossy(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        bool valid = false, complete = false;
        const std::size_t n = lossy_unit(s, i, valid, complete);
        if (valid) {
            out.append(s.substr(i, n));
        } else {
            out.append("\xEF\xBF\xBD");
        }
        i += n;
    }
    return out;
}

bool is_valid(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        bool valid = false, complete = false;
        const std::size_t n = lossy_unit(s, i, valid, complete);
        if (!valid)
            return false;
        i += n;
    }
    return true;
}

} // namespace llmwb::utf8
