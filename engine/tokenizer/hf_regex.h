// A tokenizer.json regex (Split / Replace patterns, written for Oniguruma) compiled with PCRE2
// (UTF + UCP), and its find-all. Only one construct means something else in PCRE2: \s and \S
// (Oniguruma: the White_Space property; PCRE2 UCP also counts U+180E), so they are rewritten
// to \p{White_Space} / \P{White_Space} before compiling. Without PCRE2 (LLMWB_HAVE_PCRE2 off)
// compiling is an error naming the pattern.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/result.h"

namespace llmwb {

struct RegexSpan {
    std::size_t begin, end; // byte range in the searched text
};

class HfRegex {
  public:
    // `what` names the pattern's origin in errors (e.g. "pre_tokenizer.Split").
    static Result<std::unique_ptr<HfRegex>> compile(std::string_view pattern,
                                                    const std::string& what);
    ~HfRegex();

    // Appends the non-overlapping leftmost matches in `text`, left to right, as Oniguruma's
    // find-all yields them: an empty match is reported (it splits the text) unless it sits
    // where the previous match ended. An invalid UTF-8 byte never matches (the text is
    // searched in its valid runs).
    void find_all(std::string_view text, std::vector<RegexSpan>& out) const;

    const std::string& pattern() const { return pattern_; }

    struct Code; // pcre2_code

  private:
    HfRegex() = default;
    std::string pattern_;
    std::unique_ptr<Code> code_;
};

// \s -> \p{White_Space}, \S -> \P{White_Space} outside and inside character classes; every
// other escape is kept as written.
std::string rewrite_space_escapes(std::string_view pattern);

} // namespace llmwb
