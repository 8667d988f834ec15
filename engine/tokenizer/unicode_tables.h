// Unicode property tables generated from Python's unicodedata by
// engine/tokenizer/tools/gen_unicode_tables.py (see there for what each table holds), plus the
// lookups the pre-tokenizer and the NFC normalizer use.
#pragma once

#include <cstddef>
#include <cstdint>

namespace llmwb::unicode {

enum CategoryFlag : std::uint8_t {
    kLetter = 1,      // \p{L}
    kNumber = 2,      // \p{N}
    kWhiteSpace = 4,  // White_Space property (Rust char::is_whitespace, Oniguruma \s)
    kPcreSpace = 8,   // PCRE2 UCP \s: \p{Z} | \h | \v (adds U+180E)
    kAlphabetic = 16, // Alphabetic property (Rust char::is_alphabetic)
};

struct CategoryRange {
    std::uint32_t first, last;
    std::uint8_t flags;
};
struct CombiningRange {
    std::uint32_t first, last;
    std::uint8_t ccc;
};
struct Decomposition {
    std::uint32_t cp;
    std::uint32_t offset; // into kDecompositionPool
    std::uint32_t length;
};
struct Composition {
    std::uint32_t first, second, composite;
};

extern const CategoryRange kCategoryRanges[];
extern const std::size_t kCategoryRangeCount;
extern const CombiningRange kCombiningRanges[];
extern const std::size_t kCombiningRangeCount;
extern const std::uint32_t kDecompositionPool[];
extern const Decomposition kDecompositions[];
extern const std::size_t kDecompositionCount;
extern const Composition kCompositions[];
extern const std::size_t kCompositionCount;

// Flags of a code point (0 for anything else, including unassigned and > U+10FFFF).
std::uint8_t category_flags(std::uint32_t cp);
// Canonical combining class (0 for starters).
std::uint8_t combining_class(std::uint32_t cp);

} // namespace llmwb::unicode
