// The hand-written GPT-2 / Llama 3 / Qwen 2 splitter must split exactly like PCRE2 (UTF + UCP)
// runs the same regexes (find-all; gaps would be pieces of their own), on a large randomized
// corpus (fixed seed) that mixes every character class the regexes distinguish, plus random
// code points from the whole Unicode range.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/unicode_tables.h"
#include "engine/tokenizer/utf8.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

std::vector<std::string> pcre2_split(pcre2_code* code, pcre2_match_data* md, const std::string& s) {
    std::vector<std::string> out;
    std::size_t pos = 0, last = 0;
    while (pos <= s.size()) {
        const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos, 0,
                                   md, nullptr);
        if (rc < 0)
            break;
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        if (ov[0] > last)
            out.push_back(s.substr(last, ov[0] - last));
        if (ov[1] > ov[0])
            out.push_back(s.substr(ov[0], ov[1] - ov[0]));
        last = ov[1];
        if (ov[1] == ov[0]) {
            if (ov[1] >= s.size())
                break;
            pos = ov[1] + utf8::decode(s, ov[1]).length;
        } else {
            pos = ov[1];
        }
    }
    if (last < s.size())
        out.push_back(s.substr(last));
    return out;
}

// Random text: runs drawn from pools that exercise letters, numbers, spaces of every kind,
// newlines, apostrophes and contraction letters (any case, incl. U+017F), punctuation, marks,
// emoji, and arbitrary assigned or unassigned code points.
std::string random_text(std::mt19937& rng) {
    static const std::vector<std::vector<std::uint32_t>> pools = {
        {'a', 'b', 'z', 'A', 'Q', 0xE9, 0x4E2D, 0x3042, 0x0627, 0x0915, 0x0E01,
         0x1F600 - 0x1F600 + 0x10400},
        {'0', '5', '9', 0x0663, 0x0967, 0x00B2, 0x2167, 0xFF11, 0x1D7CE},
        {' ', ' ', ' ', '\t', 0x0B, 0x0C, 0xA0, 0x1680, 0x180E, 0x2000, 0x2009, 0x200A, 0x202F,
         0x205F, 0x3000, 0x85, 0x2028, 0x2029},
        {'\n', '\r', '\n', '\r'},
        {'\'', '\'', 's', 'S', 't', 'T', 'r', 'R', 'e',   'E',
         'v',  'V',  'm', 'M', 'l', 'L', 'd', 'D', 0x17F, 0x212A},
        {'.', ',', '!', '?', '-', '_', '(', ')', '"', '#', '<', '|', '>', '/', 0x2014, 0x3002},
        {0x0301, 0x0308, 0x093F, 0x0E31, 0x200D, 0xFE0F, 0x200B},
        {0x1F600, 0x1F44D, 0x1F3FD, 0x1F468, 0x1F1EF},
    };
    std::string s;
    const int runs = std::uniform_int_distribution<int>(0, 14)(rng);
    for (int r = 0; r < runs; ++r) {
        const int kind = std::uniform_int_distribution<int>(0, static_cast<int>(pools.size()))(rng);
        const int len = std::uniform_int_distribution<int>(1, 5)(rng);
        for (int i = 0; i < len; ++i) {
            std::uint32_t cp;
            if (kind == static_cast<int>(pools.size())) { // any code point (not a surrogate)
                do {
                    cp = std::uniform_int_distribution<std::uint32_t>(
                        1, rng() % 4 == 0 ? 0x10FFFF : 0x2FFFF)(rng);
                } while (cp >= 0xD800 && cp <= 0xDFFF);
            } else {
                const auto& p = pools[static_cast<std::size_t>(kind)];
                cp = p[std::uniform_int_distribution<std::size_t>(0, p.size() - 1)(rng)];
            }
            utf8::append(s, cp);
        }
    }
    return s;
}

} // namespace

namespace {

struct PatternRow {
    std::string name;
    BuiltinPattern pattern;
};

std::vector<PatternRow> pattern_rows() {
    return {{"gpt2", BuiltinPattern::Gpt2},
            {"llama3", BuiltinPattern::Llama3},
            {"qwen2", BuiltinPattern::Qwen2}};
}

std::string joined(const std::vector<std::string>& pieces) {
    std::string out;
    for (size_t i = 0; i < pieces.size(); ++i)
        out += (i ? "|" : "") + pieces[i];
    return out;
}

} // namespace

MT_TEST_TABLE(identical_to_pcre2, PatternRow, pattern_rows()) {
    const auto p = row.pattern;
    const int pattern = static_cast<int>(p);
    const std::string rx = builtin_regex(p);
    int err = 0;
    PCRE2_SIZE off = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rx.data()), rx.size(),
                                     PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
    MT_REQUIRE(code);
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
    std::mt19937 rng(12345u + static_cast<unsigned>(pattern));
    constexpr int kCases = 60000;
    int same = 0;
    std::size_t bytes = 0;
    for (int i = 0; i < kCases; ++i) {
        const std::string text = random_text(rng);
        bytes += text.size();
        const auto want = pcre2_split(code, md, text);
        std::vector<std::string_view> got_views;
        split_builtin(p, text, got_views, SpaceSemantics::Pcre2);
        const std::vector<std::string> got(got_views.begin(), got_views.end());
        if (got == want) {
            ++same;
        } else if (kCases - same <= 3 + (kCases - i - 1)) {
            std::fprintf(stderr, "differs: pcre2 [%s] splitter [%s]\n", joined(want).c_str(),
                         joined(got).c_str());
        }
    }
    pcre2_match_data_free(md);
    pcre2_code_free(code);
    std::printf("%s: %d/%d random texts (%.1f MB) split identically to PCRE2\n", builtin_name(p),
                same, kCases, bytes / 1e6);
    MT_COMPARE(same, kCases);
}

// Only U+180E separates White_Space (Hugging Face / Oniguruma \s) from PCRE2's \s.
MT_TEST(space_semantics_differ_only_at_u180e) {
    int differing = 0;
    for (std::uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
        const auto f = unicode::category_flags(cp);
        if (bool(f & unicode::kWhiteSpace) != bool(f & unicode::kPcreSpace)) {
            ++differing;
            MT_COMPARE(cp, 0x180Eu);
        }
    }
    MT_COMPARE(differing, 1);
}

MINI_TEST_MAIN()
