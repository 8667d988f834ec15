#include "engine/tokenizer/nfc.h"

#include <algorithm>
#include <vector>

#include "engine/tokenizer/unicode_tables.h"
#include "engine/tokenizer/utf8.h"

namespace llmwb {

namespace {

using unicode::combining_class;

constexpr std::uint32_t kRawByte = 0x80000000u; // marker | byte for invalid input bytes

constexpr std::uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr std::uint32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr std::uint32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

std::uint8_t ccc_of(std::uint32_t cp) {
    return (cp & kRawByte) ? 0 : combining_class(cp);
}

void decompose(std::uint32_t cp, std::vector<std::uint32_t>& out) {
    if (cp >= kSBase && cp < kSBase + kSCount) {
        const std::uint32_t s = cp - kSBase;
        out.push_back(kLBase + s / kNCount);
        out.push_back(kVBase + (s % kNCount) / kTCount);
        if (s % kTCount != 0)
            out.push_back(kTBase + s % kTCount);
        return;
    }
    if (cp >= 0xC0 && !(cp & kRawByte)) {
        const unicode::Decomposition* begin = unicode::kDecompositions;
        const unicode::Decomposition* end = begin + unicode::kDecompositionCount;
        const auto* it =
            std::lower_bound(begin, end, cp, [](const unicode::Decomposition& d, std::uint32_t v) {
                return d.cp < v;
            });
        if (it != end && it->cp == cp) {
            out.insert(out.end(), unicode::kDecompositionPool + it->offset,
                       unicode::kDecompositionPool + it->offset + it->length);
            return;
        }
    }
    out.push_back(cp);
}

// Primary composite of (a, b), or 0 when there is none.
std::uint32_t compose(std::uint32_t a, std::uint32_t b) {
    if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
        return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
        b < kTBase + kTCount)
        return a + (b - kTBase);
    const unicode::Composition* begin = unicode::kCompositions;
    const unicode::Composition* end = begin + unicode::kCompositionCount;
    const auto* it = std::lower_bound(
        begin, end, std::pair{a, b},
        [](const unicode::Composition& c, std::pair<std::uint32_t, std::uint32_t> v) {
            return c.first < v.first || (c.first == v.first && c.second < v.second);
        });
    return (it != end && it->first == a && it->second == b) ? it->composite : 0;
}

} // namespace

std::string nfc_normalize(std::string_view text) {
    bool maybe_changes = false;
    for (char ch : text) {
        if (static_cast<unsigned char>(ch) >= 0xCC) { // a code point >= U+0300 (or invalid)
            maybe_changes = true;
            break;
        }
    }
    if (!maybe_changes)
        return std::string(text);

    std::vector<std::uint32_t> cps;
    cps.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const utf8::Decoded d = utf8::decode(text, i);
        if (d.cp == utf8::kInvalid) {
            cps.push_back(kRawByte | static_cast<unsigned char>(text[i]));
        } else {
            decompose(d.cp, cps);
        }
        i += d.length;
    }
    // Canonical ordering: stable sort of each run of non-starters by combining class.
    for (std::size_t i = 0; i < cps.size();) {
        if (ccc_of(cps[i]) == 0) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < cps.size() && ccc_of(cps[j]) != 0)
            ++j;
        std::stable_sort(cps.begin() + static_cast<std::ptrdiff_t>(i),
                         cps.begin() + static_cast<std::ptrdiff_t>(j),
                         [](std::uint32_t a, std::uint32_t b) { return ccc_of(a) < ccc_of(b); });
        i = j;
    }
    // Canonical composition.
    std::vector<std::uint32_t> result;
    result.reserve(cps.size());
    std::ptrdiff_t starter = -1;
    std::uint8_t last_ccc = 0;
    for (std::uint32_t cp : cps) {
        const std::uint8_t cc = ccc_of(cp);
        if (starter >= 0 && !(cp & kRawByte)) {
            const bool adjacent = result.size() == static_cast<std::size_t>(starter) + 1;
            if (adjacent || last_ccc < cc) {
                const std::uint32_t c = compose(result[static_cast<std::size_t>(starter)], cp);
                if (c != 0) {
                    result[static_cast<std::size_t>(starter)] = c;
                    continue;
                }
            }
        }
        if (cc == 0)
            starter = static_cast<std::ptrdiff_t>(result.size());
        last_ccc = cc;
        result.push_back(cp);
    }
    std::string out;
    out.reserve(text.size());
    for (std::uint32_t cp : result) {
        if (cp & kRawByte) {
            out.push_back(static_cast<char>(cp & 0xFF));
        } else {
            utf8::append(out, cp);
        }
    }
    return out;
}

} // namespace llmwb
