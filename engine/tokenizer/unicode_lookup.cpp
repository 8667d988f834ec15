// Lookups over the generated tables in unicode_tables.cpp. The Basic Multilingual Plane gets a
// flat byte table built once (64 KiB); everything else is a binary search over ranges.
#include <algorithm>
#include <array>
#include <memory>

#include "engine/tokenizer/unicode_tables.h"

namespace llmwb::unicode {

namespace {

template <class Range>
const Range* find_range(const Range* ranges, std::size_t count, std::uint32_t cp) {
    const Range* end = ranges + count;
    const Range* it = std::upper_bound(ranges, end, cp,
                                       [](std::uint32_t v, const Range& r) { return v < r.first; });
    if (it == ranges)
        return nullptr;
    --it;
    return cp <= it->last ? it : nullptr;
}

const std::uint8_t* bmp_flags() {
    static const std::unique_ptr<std::uint8_t[]> table = [] {
        auto t = std::make_unique<std::uint8_t[]>(0x10000);
        std::fill(t.get(), t.get() + 0x10000, std::uint8_t{0});
        for (std::size_t i = 0; i < kCategoryRangeCount; ++i) {
            const CategoryRange& r = kCategoryRanges[i];
            for (std::uint32_t cp = r.first; cp <= r.last && cp < 0x10000; ++cp)
                t[cp] = r.flags;
        }
        return t;
    }();
    return table.get();
}

} // namespace

std::uint8_t category_flags(std::uint32_t cp) {
    if (cp < 0x10000)
        return bmp_flags()[cp];
    const CategoryRange* r = find_range(kCategoryRanges, kCategoryRangeCount, cp);
    return r ? r->flags : 0;
}

std::uint8_t combining_class(std::uint32_t cp) {
    if (cp < 0x300)
        return 0;
    const CombiningRange* r = find_range(kCombiningRanges, kCombiningRangeCount, cp);
    return r ? r->ccc : 0;
}

} // namespace llmwb::unicode
