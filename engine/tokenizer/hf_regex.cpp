#include "engine/tokenizer/hf_regex.h"

#include "engine/tokenizer/utf8.h"

#ifdef LLMWB_HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

namespace llmwb {

std::string rewrite_space_escapes(std::string_view pattern) {
    std::string out;
    out.reserve(pattern.size() + 32);
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c != '\\' || i + 1 >= pattern.size()) {
            out.push_back(c);
            continue;
        }
        const char e = pattern[i + 1];
        if (e == 's') {
            out.append("\\p{White_Space}");
        } else if (e == 'S') {
            out.append("\\P{White_Space}");
        } else {
            out.push_back(c);
            out.push_back(e);
        }
        ++i; // the escaped character is consumed either way (so "\\s" stays a backslash + s)
    }
    return out;
}

#ifdef LLMWB_HAVE_PCRE2
struct HfRegex::Code {
    pcre2_code* code = nullptr;
    ~Code() { pcre2_code_free(code); }
};
#else
struct HfRegex::Code {};
#endif

HfRegex::~HfRegex() = default;

Result<std::unique_ptr<HfRegex>> HfRegex::compile(std::string_view pattern,
                                                  const std::string& what) {
    std::unique_ptr<HfRegex> re(new HfRegex());
    re->pattern_ = std::string(pattern);
#ifdef LLMWB_HAVE_PCRE2
    if (!utf8::is_valid(pattern))
        return make_error("tokenizer: " + what + ": regex is not valid UTF-8");
    const std::string rewritten = rewrite_space_escapes(pattern);
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                      PCRE2_UTF | PCRE2_UCP, &err, &err_offset, nullptr);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        return make_error("tokenizer: " + what + ": regex does not compile: " +
                          reinterpret_cast<const char*>(msg) + ": " + std::string(pattern));
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); // optional speed-up; plain matching still works
    re->code_ = std::make_unique<Code>();
    re->code_->code = code;
    return re;
#else
    return make_error("tokenizer: " + what +
                      ": this build has no PCRE2, regex unsupported: " + std::string(pattern));
#endif
}

void HfRegex::find_all(std::string_view text, std::vector<RegexSpan>& out) const {
#ifdef LLMWB_HAVE_PCRE2
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_->code, nullptr);
    auto search = [&](std::size_t base, std::string_view s) {
        std::size_t pos = 0;
        bool have_last = false;
        std::size_t last_end = 0;
        // PCRE2 validates the whole subject on every call unless told not to, which made
        // find-all quadratic: the first call validates it, the later ones skip the check
        // (they start at a character boundary of the same, now known-valid, subject).
        std::uint32_t options = 0;
        while (pos <= s.size()) {
            const int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(s.data()),
                                       s.size(), pos, options, md, nullptr);
            if (rc < 0)
                break; // no more matches (or, on the first call, a UTF-8 error: no matches)
            options = PCRE2_NO_UTF_CHECK;
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
            const std::size_t b = ov[0], e = ov[1];
            if (e == b) {
                if (!(have_last && last_end == e))
                    out.push_back({base + b, base + e});
                have_last = true;
                last_end = e;
                if (e >= s.size())
                    break;
                pos = e + utf8::decode(s, e).length; // step over one character
            } else {
                out.push_back({base + b, base + e});
                have_last = true;
                last_end = e;
                pos = e;
            }
        }
    };
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size();) {
        const utf8::Decoded d = utf8::decode(text, i);
        if (d.cp == utf8::kInvalid) {
            if (i > start)
                search(start, text.substr(start, i - start));
            start = i + 1;
        }
        i += d.length;
    }
    if (start < text.size() || text.empty())
        search(start, text.substr(start));
    pcre2_match_data_free(md);
#else
    (void)text;
    (void)out;
#endif
}

} // namespace llmwb
