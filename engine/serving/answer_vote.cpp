#include "engine/serving/answer_vote.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#ifdef LLMWB_HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

namespace llmwb {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

// The length of the number starting at s[i] (a digit): digits, thousands commas between
// digits ("1,234"), then an optional fraction (".5"). 0 when s[i] is no digit.
size_t number_length(std::string_view s, size_t i) {
    size_t j = i;
    while (j < s.size() && is_digit(s[j]))
        ++j;
    if (j == i)
        return 0;
    // ",ddd" groups only as thousands separators: exactly three digits after each comma.
    while (j + 3 < s.size() && s[j] == ',' && is_digit(s[j + 1]) && is_digit(s[j + 2]) &&
           is_digit(s[j + 3]) && (j + 4 >= s.size() || !is_digit(s[j + 4])))
        j += 4;
    if (j + 1 < s.size() && s[j] == '.' && is_digit(s[j + 1])) {
        ++j;
        while (j < s.size() && is_digit(s[j]))
            ++j;
    }
    return j - i;
}

std::optional<std::string> last_number(std::string_view text) {
    std::optional<std::string> last;
    size_t i = 0;
    while (i < text.size()) {
        const size_t n = is_digit(text[i]) ? number_length(text, i) : 0;
        if (n == 0) {
            ++i;
            continue;
        }
        // A sign right before the digits belongs to the number unless it joins two words
        // ("3-4" is 3 and 4; "x = -4" is -4).
        size_t start = i;
        if (i > 0 && text[i - 1] == '-' &&
            (i == 1 || !std::isalnum(static_cast<unsigned char>(text[i - 2]))))
            start = i - 1;
        last = normalize_number(text.substr(start, i + n - start));
        i += n;
    }
    return last;
}

std::optional<std::string> last_boxed(std::string_view text) {
    static constexpr std::string_view kBoxed = "\\boxed{";
    const size_t at = text.rfind(kBoxed);
    if (at == std::string_view::npos)
        return std::nullopt;
    const size_t open = at + kBoxed.size();
    int64_t depth = 1; // a counter, not recursion: the text decides the depth
    for (size_t j = open; j < text.size(); ++j) {
        if (text[j] == '{') {
            ++depth;
        } else if (text[j] == '}' && --depth == 0) {
            std::string_view inner = trim(text.substr(open, j - open));
            if (inner.empty())
                return std::nullopt;
            if (auto num = normalize_number(inner))
                return num;
            return std::string(inner);
        }
    }
    return std::nullopt; // unbalanced: the answer was cut off
}

} // namespace

std::optional<std::string> normalize_number(std::string_view s) {
    s = trim(s);
    bool negative = false;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        negative = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s.empty() || !is_digit(s[0]) || number_length(s, 0) != s.size())
        return std::nullopt;
    std::string whole, frac;
    size_t i = 0;
    for (; i < s.size() && s[i] != '.'; ++i)
        if (s[i] != ',')
            whole += s[i];
    if (i < s.size())
        frac = std::string(s.substr(i + 1));
    while (!frac.empty() && frac.back() == '0')
        frac.pop_back();
    const size_t nz = whole.find_first_not_of('0');
    whole = nz == std::string::npos ? "0" : whole.substr(nz);
    std::string out = whole;
    if (!frac.empty())
        out += "." + frac;
    if (negative && out != "0")
        out = "-" + out;
    return out;
}

#ifdef LLMWB_HAVE_PCRE2
struct AnswerPattern::Code {
    pcre2_code* code = nullptr;
    ~Code() { pcre2_code_free(code); }
};
#else
struct AnswerPattern::Code {};
#endif

Result<AnswerPattern> AnswerPattern::parse(std::string_view spec) {
    AnswerPattern p;
    p.spec_ = std::string(spec);
    if (spec.empty())
        return make_error("answer pattern: empty (give last-number, boxed or a regex with one "
                          "capture group)");
    if (spec == "last-number") {
        p.kind_ = Kind::LastNumber;
        return p;
    }
    if (spec == "boxed") {
        p.kind_ = Kind::Boxed;
        return p;
    }
    p.kind_ = Kind::Regex;
#ifdef LLMWB_HAVE_PCRE2
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(spec.data()), spec.size(),
                                     PCRE2_UTF, &err, &err_offset, nullptr);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        return make_error("answer pattern \"" + std::string(spec) +
                          "\": " + reinterpret_cast<const char*>(msg) + " at offset " +
                          std::to_string(err_offset));
    }
    auto owned = std::make_shared<Code>();
    owned->code = code;
    uint32_t groups = 0;
    pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &groups);
    if (groups != 1)
        return make_error("answer pattern \"" + std::string(spec) +
                          "\": needs exactly one capture group (the answer), has " +
                          std::to_string(groups));
    p.code_ = std::move(owned);
    return p;
#else
    return make_error("answer pattern \"" + std::string(spec) +
                      "\": this build has no PCRE2, regex patterns are unsupported (use "
                      "last-number or boxed)");
#endif
}

std::optional<std::string> AnswerPattern::extract(std::string_view text) const {
    switch (kind_) {
    case Kind::LastNumber:
        return last_number(text);
    case Kind::Boxed:
        return last_boxed(text);
    case Kind::Regex:
        break;
    }
#ifdef LLMWB_HAVE_PCRE2
    if (!code_)
        return std::nullopt;
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_->code, nullptr);
    pcre2_match_context* mc = pcre2_match_context_create(nullptr);
    if (!md || !mc) {
        pcre2_match_data_free(md);
        pcre2_match_context_free(mc);
        return std::nullopt;
    }
    // Bounded backtracking: a pattern that explodes on this text gives no answer.
    pcre2_set_match_limit(mc, 1'000'000);
    pcre2_set_depth_limit(mc, 10'000);
    std::optional<std::string> last;
    size_t at = 0;
    uint32_t options = 0;
    while (at <= text.size()) {
        const int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(text.data()),
                                   text.size(), at, options, md, mc);
        if (rc < 0) // no more matches, invalid UTF-8 or a limit: keep what was found
            break;
        options = PCRE2_NO_UTF_CHECK; // checked by the first call
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        if (rc >= 2 && ov[2] != PCRE2_UNSET) {
            std::string_view g = trim(text.substr(ov[2], ov[3] - ov[2]));
            if (!g.empty()) {
                auto num = normalize_number(g);
                last = num ? *num : std::string(g);
            }
        }
        size_t next = ov[1];
        if (next == ov[0]) { // an empty match: step over one whole UTF-8 character
            ++next;
            while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80)
                ++next;
        }
        at = next;
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    return last;
#else
    return std::nullopt;
#endif
}

VoteResult tally_answers(std::vector<std::optional<std::string>> answers) {
    VoteResult v;
    v.answers = std::move(answers);
    std::unordered_map<std::string, size_t> index;
    for (const auto& a : v.answers) {
        if (!a) {
            ++v.no_answer;
            continue;
        }
        auto [it, inserted] = index.try_emplace(*a, v.tally.size());
        if (inserted)
            v.tally.push_back({*a, 0});
        ++v.tally[it->second].votes;
    }
    // Stable: equal counts keep the order of first appearance.
    std::stable_sort(v.tally.begin(), v.tally.end(),
                     [](const AnswerVotes& a, const AnswerVotes& b) { return a.votes > b.votes; });
    if (!v.tally.empty()) {
        v.winner = v.tally.front().answer;
        v.winner_votes = v.tally.front().votes;
        for (const AnswerVotes& t : v.tally)
            v.tied += t.votes == v.winner_votes ? 1 : 0;
    }
    return v;
}

VoteResult majority_vote(const AnswerPattern& pattern, std::span<const std::string> samples) {
    std::vector<std::optional<std::string>> answers;
    answers.reserve(samples.size());
    for (const std::string& s : samples)
        answers.push_back(pattern.extract(s));
    return tally_answers(std::move(answers));
}

} // namespace llmwb
