#include "engine/tokenizer/pre_tokenizer.h"

#include <algorithm>

#include "engine/tokenizer/hf_regex.h"
#include "engine/tokenizer/unicode_tables.h"
#include "engine/tokenizer/utf8.h"

namespace llmwb {

namespace {

constexpr const char* kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum Class : std::uint8_t { kOther = 0, kLetterC = 1, kNumberC = 2, kSpaceC = 3 };

// The text decoded once into units (one code point or one invalid byte each).
struct Units {
    std::vector<std::uint32_t> cp;
    std::vector<std::uint8_t> cls;
    std::vector<std::uint32_t> offset; // byte offset of each unit, plus the end

    Units(std::string_view text, SpaceSemantics spaces) {
        const std::uint8_t space_flag =
            spaces == SpaceSemantics::Pcre2 ? unicode::kPcreSpace : unicode::kWhiteSpace;
        cp.reserve(text.size());
        cls.reserve(text.size());
        offset.reserve(text.size() + 1);
        for (std::size_t i = 0; i < text.size();) {
            const auto b = static_cast<unsigned char>(text[i]);
            utf8::Decoded d{b, 1};
            if (b >= 0x80)
                d = utf8::decode(text, i);
            std::uint8_t c = kOther;
            if (d.cp != utf8::kInvalid) {
                const std::uint8_t f = unicode::category_flags(d.cp);
                if (f & unicode::kLetter) {
                    c = kLetterC;
                } else if (f & unicode::kNumber) {
                    c = kNumberC;
                } else if (f & space_flag) {
                    c = kSpaceC;
                }
            }
            cp.push_back(d.cp);
            cls.push_back(c);
            offset.push_back(static_cast<std::uint32_t>(i));
            i += d.length;
        }
        offset.push_back(static_cast<std::uint32_t>(text.size()));
    }
    std::size_t size() const { return cp.size(); }
    std::size_t run(std::size_t i, std::uint8_t c) const {
        while (i < cls.size() && cls[i] == c)
            ++i;
        return i;
    }
    bool is_newline(std::size_t i) const { return cp[i] == '\r' || cp[i] == '\n'; }
};

// Case-insensitive ASCII letter of a contraction; U+017F (long s) folds to 's' as in Unicode
// simple case folding, which both Oniguruma and PCRE2 apply under (?i).
std::uint32_t fold(std::uint32_t cp, bool caseless) {
    if (!caseless)
        return cp;
    if (cp >= 'A' && cp <= 'Z')
        return cp + 32;
    if (cp == 0x17F)
        return 's';
    return cp;
}

// Length in units of a contraction ('s 't 're 've 'm 'll 'd) at i, or 0.
std::size_t contraction(const Units& u, std::size_t i, bool caseless) {
    if (u.cp[i] != '\'' || i + 1 >= u.size())
        return 0;
    const std::uint32_t a = fold(u.cp[i + 1], caseless);
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    if (i + 2 >= u.size())
        return 0;
    const std::uint32_t b = fold(u.cp[i + 2], caseless);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        return 3;
    return 0;
}

// \s+(?!\S) then \s+, at a space unit i: the end of the match.
std::size_t trailing_space(const Units& u, std::size_t i) {
    const std::size_t e = u.run(i, kSpaceC);
    if (e == u.size() || e - i < 2)
        return e;
    return e - 1;
}

std::size_t match_gpt2(const Units& u, std::size_t i) {
    if (std::size_t n = contraction(u, i, false))
        return i + n;
    const std::uint8_t c = u.cls[i];
    if (u.cp[i] == ' ' && i + 1 < u.size() && u.cls[i + 1] != kSpaceC)
        return u.run(i + 1, u.cls[i + 1]);
    if (c != kSpaceC)
        return u.run(i, c);
    return trailing_space(u, i);
}

std::size_t match_llama3(const Units& u, std::size_t i, std::size_t max_digits) {
    if (std::size_t n = contraction(u, i, true))
        return i + n;
    const std::uint8_t c = u.cls[i];
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (c == kLetterC)
        return u.run(i, kLetterC);
    if (c != kNumberC && !u.is_newline(i) && i + 1 < u.size() && u.cls[i + 1] == kLetterC)
        return u.run(i + 1, kLetterC);
    // \p{N}{1,max}
    if (c == kNumberC)
        return std::min(u.run(i, kNumberC), i + max_digits);
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    std::size_t k = i;
    if (u.cp[i] == ' ' && i + 1 < u.size() && u.cls[i + 1] == kOther)
        k = i + 1;
    if (u.cls[k] == kOther) {
        k = u.run(k, kOther);
        while (k < u.size() && u.is_newline(k))
            ++k;
        return k;
    }
    // \s*[\r\n]+ : up to the last newline of the space run
    const std::size_t e = u.run(i, kSpaceC);
    for (std::size_t j = e; j > i; --j) {
        if (u.is_newline(j - 1))
            return j;
    }
    return trailing_space(u, i);
}

} // namespace

const char* builtin_regex(BuiltinPattern p) {
    switch (p) {
    case BuiltinPattern::Gpt2:
        return kGpt2Regex;
    case BuiltinPattern::Llama3:
        return kLlama3Regex;
    case BuiltinPattern::Qwen2:
        return kQwen2Regex;
    }
    return "";
}

const char* builtin_name(BuiltinPattern p) {
    switch (p) {
    case BuiltinPattern::Gpt2:
        return "gpt2";
    case BuiltinPattern::Llama3:
        return "llama3";
    case BuiltinPattern::Qwen2:
        return "qwen2";
    }
    return "";
}

std::optional<BuiltinPattern> builtin_from_name(std::string_view name) {
    for (BuiltinPattern p : {BuiltinPattern::Gpt2, BuiltinPattern::Llama3, BuiltinPattern::Qwen2}) {
        if (name == builtin_name(p))
            return p;
    }
    return std::nullopt;
}

std::optional<BuiltinPattern> builtin_from_regex(std::string_view regex) {
    for (BuiltinPattern p : {BuiltinPattern::Gpt2, BuiltinPattern::Llama3, BuiltinPattern::Qwen2}) {
        if (regex == builtin_regex(p))
            return p;
    }
    return std::nullopt;
}

void split_builtin(BuiltinPattern p, std::string_view text, std::vector<std::string_view>& out,
                   SpaceSemantics spaces) {
    const Units u(text, spaces);
    for (std::size_t i = 0; i < u.size();) {
        std::size_t end = i + 1;
        switch (p) {
        case BuiltinPattern::Gpt2:
            end = match_gpt2(u, i);
            break;
        case BuiltinPattern::Llama3:
            end = match_llama3(u, i, 3);
            break;
        case BuiltinPattern::Qwen2:
            end = match_llama3(u, i, 1);
            break;
        }
        out.push_back(text.substr(u.offset[i], u.offset[end] - u.offset[i]));
        i = end;
    }
}

bool pre_tokenizer_has_pcre2() {
#ifdef LLMWB_HAVE_PCRE2
    return true;
#else
    return false;
#endif
}

PreTokenizer::~PreTokenizer() = default;

Result<std::shared_ptr<const PreTokenizer>> PreTokenizer::create(std::string_view name,
                                                                 std::string_view regex) {
    std::shared_ptr<PreTokenizer> pt(new PreTokenizer());
    pt->builtin_ = builtin_from_name(name);
    if (!pt->builtin_)
        pt->builtin_ = builtin_from_regex(regex);
    if (pt->builtin_)
        return std::shared_ptr<const PreTokenizer>(pt);
    if (regex.empty())
        return make_error("tokenizer: unknown pre-tokenizer '" + std::string(name) +
                          "' and no regex");
    auto re = HfRegex::compile(regex, "pre-tokenizer");
    if (!re)
        return re.error();
    pt->regex_ = std::move(re.value());
    return std::shared_ptr<const PreTokenizer>(pt);
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
    if (builtin_) {
        split_builtin(*builtin_, text, out);
        return;
    }
    // Split "Isolated": the matches and the text between them, each a piece.
    std::vector<RegexSpan> matches;
    regex_->find_all(text, matches);
    std::size_t last = 0;
    for (const RegexSpan& m : matches) {
        if (m.begin > last)
            out.push_back(text.substr(last, m.begin - last));
        if (m.end > m.begin)
            out.push_back(text.substr(m.begin, m.end - m.begin));
        last = m.end;
    }
    if (last < text.size())
        out.push_back(text.substr(last));
}

} // namespace llmwb
