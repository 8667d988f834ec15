#include "engine/tokenizer/pre_tokenizer_sequence.h"

#include <algorithm>

#include "engine/tokenizer/hf_regex.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/unicode_tables.h"
#include "engine/tokenizer/utf8.h"

namespace llmwb {

namespace {

using PreSpec = TokenizerData::PreTokenizerStep;
using Behavior = PreSpec::Behavior;

struct Piece {
    std::string text;
    bool at_start = false; // begins at offset 0 of the input text
};

struct Span {
    std::size_t begin, end;
    bool match;
};

// Onig's \w (Letter, Mark, Decimal_Number, Connector_Punctuation) spelled for PCRE2.
constexpr const char* kWhitespaceRegex =
    R"([\p{L}\p{M}\p{Nd}\p{Pc}]+|[^\p{L}\p{M}\p{Nd}\p{Pc}\s]+)";
// Rust char::is_ascii_punctuation || Unicode general category P.
constexpr const char* kPunctuationRegex = R"([\p{P}!-/:-@\[-`{-~])";

// Matches -> the spans of the whole text: gaps are non-matches (Hugging Face find_matches).
void spans_from_matches(std::size_t size, const std::vector<RegexSpan>& matches,
                        std::vector<Span>& out) {
    out.clear();
    if (size == 0) {
        out.push_back({0, 0, false});
        return;
    }
    std::size_t prev = 0;
    for (const RegexSpan& m : matches) {
        if (m.begin > prev)
            out.push_back({prev, m.begin, false});
        out.push_back({m.begin, m.end, true});
        prev = m.end;
    }
    if (prev < size)
        out.push_back({prev, size, false});
}

// Each character for which pred() holds is a match of its own.
template <typename Pred>
void char_matches(std::string_view s, Pred pred, std::vector<RegexSpan>& out) {
    out.clear();
    for (std::size_t i = 0; i < s.size();) {
        const utf8::Decoded d = utf8::decode(s, i);
        if (d.cp != utf8::kInvalid && pred(d.cp))
            out.push_back({i, i + d.length});
        i += d.length;
    }
}

// Hugging Face NormalizedString::split: spans -> kept ranges per behaviour.
void apply_behavior(const std::vector<Span>& spans, Behavior behavior,
                    std::vector<std::pair<std::size_t, std::size_t>>& out) {
    out.clear();
    switch (behavior) {
    case Behavior::Isolated:
        for (const Span& s : spans)
            out.emplace_back(s.begin, s.end);
        break;
    case Behavior::Removed:
        for (const Span& s : spans) {
            if (!s.match)
                out.emplace_back(s.begin, s.end);
        }
        break;
    case Behavior::Contiguous: {
        bool prev_match = false;
        for (const Span& s : spans) {
            if (s.match == prev_match && !out.empty()) {
                out.back().second = s.end;
            } else {
                out.emplace_back(s.begin, s.end);
            }
            prev_match = s.match;
        }
        break;
    }
    case Behavior::MergedWithPrevious: {
        bool prev_match = false;
        for (const Span& s : spans) {
            if (s.match && !prev_match && !out.empty()) {
                out.back().second = s.end;
            } else {
                out.emplace_back(s.begin, s.end);
            }
            prev_match = s.match;
        }
        break;
    }
    case Behavior::MergedWithNext: {
        bool prev_match = false;
        for (std::size_t k = spans.size(); k-- > 0;) {
            const Span& s = spans[k];
            if (s.match && !prev_match && !out.empty()) {
                out.back().first = s.begin;
            } else {
                out.emplace_back(s.begin, s.end);
            }
            prev_match = s.match;
        }
        std::reverse(out.begin(), out.end());
        break;
    }
    }
}

} // namespace

struct PreTokenizerSequence::Step {
    PreSpec spec;
    std::optional<BuiltinPattern> builtin; // Split with a built-in regex
    std::unique_ptr<HfRegex> regex;        // Split (other regex), Punctuation, Whitespace

    // Splits one piece, appending the results to `out`.
    void apply(Piece& in, std::vector<Piece>& out, std::vector<RegexSpan>& matches,
               std::vector<Span>& spans,
               std::vector<std::pair<std::size_t, std::size_t>>& ranges) const {
        Behavior behavior = spec.behavior;
        bool invert = false;
        switch (spec.type) {
        case PreSpec::Type::ByteLevel:
            if (spec.add_prefix_space && (in.text.empty() || in.text.front() != ' '))
                in.text.insert(0, " ");
            if (!spec.use_regex) {
                out.push_back(std::move(in));
                return;
            }
            builtin_matches(BuiltinPattern::Gpt2, in.text, matches);
            behavior = Behavior::Isolated;
            break;
        case PreSpec::Type::Metaspace: {
            std::string t;
            t.reserve(in.text.size() + 8);
            for (char c : in.text) {
                if (c == ' ') {
                    t.append(spec.replacement);
                } else {
                    t.push_back(c);
                }
            }
            const bool starts = t.compare(0, spec.replacement.size(), spec.replacement) == 0;
            if (spec.prepend && !starts &&
                (spec.prepend_scheme != TokenizerData::PrependScheme::First || in.at_start))
                t.insert(0, spec.replacement);
            in.text = std::move(t);
            if (!spec.split || spec.replacement.empty()) {
                out.push_back(std::move(in));
                return;
            }
            matches.clear();
            for (std::size_t pos = in.text.find(spec.replacement); pos != std::string::npos;
                 pos = in.text.find(spec.replacement, pos + spec.replacement.size()))
                matches.push_back({pos, pos + spec.replacement.size()});
            behavior = Behavior::MergedWithNext;
            break;
        }
        case PreSpec::Type::Split:
            invert = spec.invert;
            if (builtin) {
                builtin_matches(*builtin, in.text, matches);
            } else if (regex) {
                matches.clear();
                regex->find_all(in.text, matches);
            } else {
                matches.clear();
                if (!spec.pattern.empty()) {
                    for (std::size_t pos = in.text.find(spec.pattern); pos != std::string::npos;
                         pos = in.text.find(spec.pattern, pos + spec.pattern.size()))
                        matches.push_back({pos, pos + spec.pattern.size()});
                }
            }
            break;
        case PreSpec::Type::Digits:
            char_matches(
                in.text,
                [](std::uint32_t cp) { return (unicode::category_flags(cp) & unicode::kNumber); },
                matches);
            behavior = spec.individual_digits ? Behavior::Isolated : Behavior::Contiguous;
            break;
        case PreSpec::Type::Punctuation:
            matches.clear();
            regex->find_all(in.text, matches);
            break;
        case PreSpec::Type::WhitespaceSplit:
            char_matches(
                in.text,
                [](std::uint32_t cp) {
                    return (unicode::category_flags(cp) & unicode::kWhiteSpace) != 0;
                },
                matches);
            behavior = Behavior::Removed;
            break;
        case PreSpec::Type::Whitespace:
            matches.clear();
            regex->find_all(in.text, matches);
            invert = true;
            behavior = Behavior::Removed;
            break;
        }
        spans_from_matches(in.text.size(), matches, spans);
        if (invert) {
            for (Span& s : spans)
                s.match = !s.match;
        }
        apply_behavior(spans, behavior, ranges);
        for (const auto& [b, e] : ranges) {
            if (e > b)
                out.push_back({in.text.substr(b, e - b), in.at_start && b == 0});
        }
    }

    static void builtin_matches(BuiltinPattern p, std::string_view text,
                                std::vector<RegexSpan>& matches) {
        // Every character of the text lands in one match of a built-in pattern.
        thread_local std::vector<std::string_view> views;
        views.clear();
        split_builtin(p, text, views);
        matches.clear();
        for (std::string_view v : views) {
            const auto b = static_cast<std::size_t>(v.data() - text.data());
            matches.push_back({b, b + v.size()});
        }
    }
};

PreTokenizerSequence::~PreTokenizerSequence() = default;

Result<std::unique_ptr<PreTokenizerSequence>>
PreTokenizerSequence::create(const std::vector<StepSpec>& steps) {
    std::unique_ptr<PreTokenizerSequence> seq(new PreTokenizerSequence());
    if (steps.size() > kMaxSteps)
        return make_error("tokenizer: pre-tokenizer has " + std::to_string(steps.size()) +
                          " steps (at most " + std::to_string(kMaxSteps) + ")");
    for (const StepSpec& s : steps) {
        auto step = std::make_unique<Step>();
        step->spec = s;
        const char* rx = nullptr;
        std::string what;
        if (s.type == PreSpec::Type::Split && s.regex) {
            step->builtin = builtin_from_regex(s.pattern);
            if (!step->builtin) {
                rx = s.pattern.c_str();
                what = "pre_tokenizer.Split";
            }
        } else if (s.type == PreSpec::Type::Punctuation) {
            rx = kPunctuationRegex;
            what = "pre_tokenizer.Punctuation";
        } else if (s.type == PreSpec::Type::Whitespace) {
            rx = kWhitespaceRegex;
            what = "pre_tokenizer.Whitespace";
        }
        if (rx) {
            auto re = HfRegex::compile(rx, what);
            if (!re)
                return re.error();
            step->regex = std::move(re.value());
        }
        seq->steps_.push_back(std::move(step));
    }
    return seq;
}

bool PreTokenizerSequence::has_metaspace() const {
    for (const auto& s : steps_) {
        if (s->spec.type == PreSpec::Type::Metaspace)
            return true;
    }
    return false;
}

bool PreTokenizerSequence::has_byte_level() const {
    for (const auto& s : steps_) {
        if (s->spec.type == PreSpec::Type::ByteLevel)
            return true;
    }
    return false;
}

void PreTokenizerSequence::split(std::string_view text, bool at_text_start,
                                 std::vector<std::string>& out) const {
    std::vector<Piece> cur, next;
    if (!text.empty())
        cur.push_back({std::string(text), at_text_start});
    std::vector<RegexSpan> matches;
    std::vector<Span> spans;
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    for (const auto& step : steps_) {
        next.clear();
        next.reserve(cur.size() * 2);
        for (Piece& p : cur)
            step->apply(p, next, matches, spans, ranges);
        cur.swap(next);
    }
    for (Piece& p : cur)
        out.push_back(std::move(p.text));
}

std::optional<std::vector<TokenizerData::PreTokenizerStep>>
gguf_pre_tokenizer_steps(std::string_view pre) {
    auto split = [](std::string rx) {
        PreSpec s;
        s.type = PreSpec::Type::Split;
        s.pattern = std::move(rx);
        return s;
    };
    PreSpec byte_level;
    byte_level.type = PreSpec::Type::ByteLevel;
    byte_level.use_regex = false;
    if (pre == "deepseek-v3") {
        return std::vector<PreSpec>{
            split(R"(\p{N}{1,3})"),
            split("[\xE4\xB8\x80-\xE9\xBE\xA5\xE3\x81\x80-\xE3\x82\x9F\xE3\x82\xA0-\xE3\x83\xBF]+"),
            split(R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^)"
                  "\r\n"
                  R"(\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[)"
                  "\r\n"
                  R"(]*|\s*[)"
                  "\r\n"
                  R"(]+|\s+(?!\S)|\s+)"),
            byte_level};
    }
    if (pre == "gpt-4o") {
        return std::vector<PreSpec>{
            split(
                R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
            byte_level};
    }
    return std::nullopt;
}

std::string gguf_pre_tokenizer_name(const std::vector<TokenizerData::PreTokenizerStep>& steps) {
    auto same = [](const PreSpec& a, const PreSpec& b) {
        if (a.type != b.type)
            return false;
        if (a.type == PreSpec::Type::Split)
            return a.pattern == b.pattern && a.regex == b.regex && a.invert == b.invert &&
                   a.behavior == b.behavior;
        if (a.type == PreSpec::Type::ByteLevel)
            return a.use_regex == b.use_regex && a.add_prefix_space == b.add_prefix_space;
        return false;
    };
    for (const char* name : {"deepseek-v3", "gpt-4o"}) {
        const auto known = gguf_pre_tokenizer_steps(name);
        if (known && known->size() == steps.size() &&
            std::equal(steps.begin(), steps.end(), known->begin(), same))
            return name;
    }
    return "";
}

} // namespace llmwb
