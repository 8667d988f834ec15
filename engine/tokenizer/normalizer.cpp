#include "engine/tokenizer/normalizer.h"

#include "engine/tokenizer/hf_regex.h"
#include "engine/tokenizer/nfc.h"
#include "engine/tokenizer/unicode_tables.h"
#include "engine/tokenizer/utf8.h"

#ifdef LLMWB_HAVE_ICU
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#endif

namespace llmwb {

namespace {

using Spec = TokenizerData::NormalizerStep;

// Calls f(valid_run) for each maximal valid UTF-8 run and appends invalid bytes unchanged.
template <typename F> void for_valid_runs(std::string_view text, std::string& out, F&& f) {
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size();) {
        const utf8::Decoded d = utf8::decode(text, i);
        if (d.cp == utf8::kInvalid) {
            if (i > start)
                f(text.substr(start, i - start));
            out.push_back(text[i]);
            start = i + 1;
        }
        i += d.length;
    }
    if (start < text.size())
        f(text.substr(start));
}

bool is_white_space(std::uint32_t cp) {
    return cp != utf8::kInvalid && (unicode::category_flags(cp) & unicode::kWhiteSpace);
}

std::string strip(std::string_view s, bool left, bool right) {
    std::size_t b = 0, e = s.size();
    if (left) {
        while (b < e) {
            const utf8::Decoded d = utf8::decode(s, b);
            if (!is_white_space(d.cp))
                break;
            b += d.length;
        }
    }
    if (right) {
        while (e > b) {
            std::size_t k = e - 1; // start of the last character
            while (k > b && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80 && e - k < 4)
                --k;
            const utf8::Decoded d = utf8::decode(s, k);
            if (k + d.length != e || !is_white_space(d.cp))
                break;
            e = k;
        }
    }
    return std::string(s.substr(b, e - b));
}

std::string replace_string(std::string_view s, std::string_view from, std::string_view to) {
    if (from.empty())
        return std::string(s);
    std::string out;
    out.reserve(s.size());
    std::size_t pos = 0;
    for (std::size_t hit; (hit = s.find(from, pos)) != std::string_view::npos;
         pos = hit + from.size()) {
        out.append(s.substr(pos, hit - pos));
        out.append(to);
    }
    out.append(s.substr(pos));
    return out;
}

#ifdef LLMWB_HAVE_ICU
bool to_utf16(std::string_view s, std::u16string& out) {
    if (s.size() > (1u << 29)) // ICU lengths are int32_t
        return false;
    UErrorCode st = U_ZERO_ERROR;
    int32_t len = 0;
    u_strFromUTF8(nullptr, 0, &len, s.data(), static_cast<int32_t>(s.size()), &st);
    if (st != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(st))
        return false;
    st = U_ZERO_ERROR;
    out.resize(static_cast<std::size_t>(len));
    u_strFromUTF8(out.data(), len, nullptr, s.data(), static_cast<int32_t>(s.size()), &st);
    return U_SUCCESS(st);
}

bool append_utf8(std::u16string_view s, std::string& out) {
    UErrorCode st = U_ZERO_ERROR;
    int32_t len = 0;
    u_strToUTF8(nullptr, 0, &len, s.data(), static_cast<int32_t>(s.size()), &st);
    if (st != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(st))
        return false;
    st = U_ZERO_ERROR;
    const std::size_t at = out.size();
    out.resize(at + static_cast<std::size_t>(len));
    u_strToUTF8(out.data() + at, len, nullptr, s.data(), static_cast<int32_t>(s.size()), &st);
    return U_SUCCESS(st);
}
#endif

} // namespace

bool normalizer_has_icu() {
#ifdef LLMWB_HAVE_ICU
    return true;
#else
    return false;
#endif
}

bool unicode_normalize(std::string_view text, NormalForm form, std::string& out) {
#ifdef LLMWB_HAVE_ICU
    UErrorCode st = U_ZERO_ERROR;
    const UNormalizer2* n = form == NormalForm::NFD    ? unorm2_getNFDInstance(&st)
                            : form == NormalForm::NFKC ? unorm2_getNFKCInstance(&st)
                                                       : unorm2_getNFKDInstance(&st);
    if (U_FAILURE(st))
        return false;
    std::string result;
    result.reserve(text.size());
    bool ok = true;
    for_valid_runs(text, result, [&](std::string_view run) {
        std::u16string src, dst;
        if (!ok || !to_utf16(run, src)) {
            ok = false;
            return;
        }
        UErrorCode e = U_ZERO_ERROR;
        const int32_t len =
            unorm2_normalize(n, src.data(), static_cast<int32_t>(src.size()), nullptr, 0, &e);
        if (e != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(e)) {
            ok = false;
            return;
        }
        e = U_ZERO_ERROR;
        dst.resize(static_cast<std::size_t>(len));
        unorm2_normalize(n, src.data(), static_cast<int32_t>(src.size()), dst.data(), len, &e);
        ok = U_SUCCESS(e) && append_utf8(dst, result);
    });
    if (!ok)
        return false;
    out = std::move(result);
    return true;
#else
    (void)text;
    (void)form;
    (void)out;
    return false;
#endif
}

bool unicode_lowercase(std::string_view text, std::string& out) {
#ifdef LLMWB_HAVE_ICU
    // Rust's char::to_lowercase: the simple mapping of each character, except that U+0130
    // (capital I with dot above) has a two-character full mapping. No context (final sigma).
    std::string result;
    result.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const utf8::Decoded d = utf8::decode(text, i);
        if (d.cp == utf8::kInvalid) {
            result.push_back(text[i]);
        } else if (d.cp == 0x130) {
            result.append("i\xCC\x87");
        } else {
            utf8::append(result, static_cast<std::uint32_t>(u_tolower(static_cast<UChar32>(d.cp))));
        }
        i += d.length;
    }
    out = std::move(result);
    return true;
#else
    (void)text;
    (void)out;
    return false;
#endif
}

Normalizer::~Normalizer() = default;

Result<std::unique_ptr<Normalizer>> Normalizer::create(const std::vector<Spec>& steps) {
    std::unique_ptr<Normalizer> n(new Normalizer());
    if (steps.size() > kMaxSteps)
        return make_error("tokenizer: normalizer has " + std::to_string(steps.size()) +
                          " steps (at most " + std::to_string(kMaxSteps) + ")");
    for (const Spec& s : steps) {
        Step step;
        step.spec = s;
        switch (s.type) {
        case Spec::Type::NFD:
        case Spec::Type::NFKC:
        case Spec::Type::NFKD:
        case Spec::Type::Lowercase:
            if (!normalizer_has_icu())
                return make_error("tokenizer: normalizer NFD/NFKC/NFKD/Lowercase needs ICU, "
                                  "which this build does not have");
            break;
        case Spec::Type::Replace:
            if (s.regex) {
                auto re = HfRegex::compile(s.pattern, "normalizer.Replace");
                if (!re)
                    return re.error();
                step.regex = std::move(re.value());
            }
            break;
        case Spec::Type::NFC:
        case Spec::Type::Strip:
        case Spec::Type::Prepend:
            break;
        }
        n->steps_.push_back(std::move(step));
    }
    return n;
}

std::string Normalizer::normalize(std::string_view text) const {
    std::string cur(text);
    std::string next;
    std::vector<RegexSpan> spans;
    // Replace / Prepend steps can grow the text, and a hostile file could chain them into an
    // exponential blow-up: past this size the remaining steps are not applied.
    const std::size_t max_bytes = kMaxGrowth * text.size() + kMaxExtraBytes;
    for (const Step& step : steps_) {
        if (cur.size() > max_bytes)
            break;
        const Spec::Type t = step.spec.type;
        switch (t) {
        case Spec::Type::NFC:
            cur = nfc_normalize(cur);
            break;
        case Spec::Type::NFD:
        case Spec::Type::NFKC:
        case Spec::Type::NFKD: {
            const NormalForm f = t == Spec::Type::NFD    ? NormalForm::NFD
                                 : t == Spec::Type::NFKC ? NormalForm::NFKC
                                                         : NormalForm::NFKD;
            if (unicode_normalize(cur, f, next))
                cur.swap(next);
            break;
        }
        case Spec::Type::Lowercase:
            if (unicode_lowercase(cur, next))
                cur.swap(next);
            break;
        case Spec::Type::Strip:
            cur = strip(cur, step.spec.left, step.spec.right);
            break;
        case Spec::Type::Replace:
            if (!step.regex) {
                cur = replace_string(cur, step.spec.pattern, step.spec.content);
            } else {
                spans.clear();
                step.regex->find_all(cur, spans);
                next.clear();
                std::size_t pos = 0;
                for (const RegexSpan& sp : spans) {
                    next.append(cur, pos, sp.begin - pos);
                    next.append(step.spec.content);
                    pos = sp.end;
                }
                next.append(cur, pos, std::string::npos);
                cur.swap(next);
            }
            break;
        case Spec::Type::Prepend:
            if (!cur.empty())
                cur.insert(0, step.spec.content);
            break;
        }
    }
    return cur;
}

} // namespace llmwb
