// tokenizer.json's normalizer, pre_tokenizer and decoder -> TokenizerData: the flags where
// they express the file (the fast paths), else the general pipeline's steps (Parsed::general).
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/tokenizer_json_reader.h"

namespace llmwb::tokenizer_json {

namespace {

Result<std::pair<std::string, bool>> read_pattern(const Reader& r, const json& e,
                                                  const std::string& field) {
    const json* pat = r.find(e, "pattern");
    if (pat) {
        if (const json* str = r.find(*pat, "String"); str && str->is_string())
            return std::pair{str->get<std::string>(), false};
        if (const json* rx = r.find(*pat, "Regex"); rx && rx->is_string())
            return std::pair{rx->get<std::string>(), true};
    }
    return r.error(field + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
}

} // namespace

Status read_normalizer(const Reader& r, const json& root, TokenizerData& d, Parsed& p) {
    const json* n = r.find(root, "normalizer");
    if (!n)
        return ok_status();
    using NS = TokenizerData::NormalizerStep;
    bool prepend = false, replace = false;
    for (const json* e : flatten(*n, "normalizers")) {
        const std::string t = type_of(*e);
        NS step;
        if (t == "NFC" || t == "NFD" || t == "NFKC" || t == "NFKD" || t == "Lowercase") {
            step.type = t == "NFC"    ? NS::Type::NFC
                        : t == "NFD"  ? NS::Type::NFD
                        : t == "NFKC" ? NS::Type::NFKC
                        : t == "NFKD" ? NS::Type::NFKD
                                      : NS::Type::Lowercase;
            if (t == "NFC") {
                d.nfc = true;
                if (prepend || replace)
                    p.general = true; // NFC after the "▁" steps: order matters
            } else {
                p.general = true;
            }
        } else if (t == "Strip") {
            auto left = r.bool_or(*e, "strip_left", "normalizer.Strip", false);
            auto right = r.bool_or(*e, "strip_right", "normalizer.Strip", false);
            if (!left)
                return left.error();
            if (!right)
                return right.error();
            step.type = NS::Type::Strip;
            step.left = *left;
            step.right = *right;
            p.general = true;
        } else if (t == "Prepend") {
            auto s = r.string_or(*e, "prepend", "normalizer.Prepend", "");
            if (!s)
                return s.error();
            step.type = NS::Type::Prepend;
            step.content = *s;
            if (*s == kMetaspace) {
                prepend = true;
                p.sentencepiece = true;
            } else {
                p.general = true;
            }
        } else if (t == "Replace") {
            auto pat = read_pattern(r, *e, "normalizer.Replace");
            if (!pat)
                return pat.error();
            auto content = r.string_or(*e, "content", "normalizer.Replace", "");
            if (!content)
                return content.error();
            step.type = NS::Type::Replace;
            step.pattern = pat->first;
            step.regex = pat->second;
            step.content = *content;
            if (!step.regex && step.pattern == " " && *content == kMetaspace) {
                replace = true;
                p.sentencepiece = true;
            } else {
                p.general = true;
            }
        } else {
            return r.error("normalizer", "unsupported normalizer type '" + t + "'");
        }
        p.normalizer_steps.push_back(std::move(step));
    }
    if (prepend || replace) {
        if (!replace)
            p.general = true; // Prepend "▁" alone: only the general normalizer expresses it
        d.add_space_prefix = prepend;
        d.prepend_scheme = TokenizerData::PrependScheme::EverySegment;
    }
    return ok_status();
}

namespace {

Result<TokenizerData::PreTokenizerStep::Behavior>
read_behavior(const Reader& r, const json& e, const std::string& field, const char* dflt) {
    using B = TokenizerData::PreTokenizerStep::Behavior;
    auto behavior = r.string_or(e, "behavior", field, dflt);
    if (!behavior)
        return behavior.error();
    const std::string& b = *behavior;
    if (b == "Isolated")
        return B::Isolated;
    if (b == "Removed")
        return B::Removed;
    if (b == "MergedWithPrevious")
        return B::MergedWithPrevious;
    if (b == "MergedWithNext")
        return B::MergedWithNext;
    if (b == "Contiguous")
        return B::Contiguous;
    return r.error(field + ".behavior", "unknown value '" + b + "'");
}

} // namespace

Status read_pre_tokenizer(const Reader& r, const json& root, TokenizerData& d, Parsed& p) {
    const json* pt = r.find(root, "pre_tokenizer");
    if (!pt)
        return ok_status();
    using PS = TokenizerData::PreTokenizerStep;
    // The flags (pre_tokenizer / pre_tokenizer_regex, Metaspace settings) express one Split
    // (Isolated, not inverted) and/or one ByteLevel and/or one Metaspace; anything else runs
    // the general pipeline.
    bool have_split = false;
    int count = 0;
    for (const json* e : flatten(*pt, "pretokenizers")) {
        ++count;
        const std::string t = type_of(*e);
        PS step;
        if (t == "Split") {
            auto pat = read_pattern(r, *e, "pre_tokenizer.Split");
            if (!pat)
                return pat.error();
            auto behavior = read_behavior(r, *e, "pre_tokenizer.Split", "Isolated");
            auto invert = r.bool_or(*e, "invert", "pre_tokenizer.Split", false);
            if (!behavior)
                return behavior.error();
            if (!invert)
                return invert.error();
            step.type = PS::Type::Split;
            step.pattern = pat->first;
            step.regex = pat->second;
            step.behavior = *behavior;
            step.invert = *invert;
            if (!step.regex || step.behavior != PS::Behavior::Isolated || step.invert ||
                have_split) {
                p.general = true;
            } else {
                d.pre_tokenizer_regex = step.pattern;
                auto b = builtin_from_regex(d.pre_tokenizer_regex);
                d.pre_tokenizer = b ? builtin_name(*b) : d.pre_tokenizer_regex;
            }
            have_split = true;
        } else if (t == "ByteLevel") {
            p.byte_level = true;
            auto use_regex = r.bool_or(*e, "use_regex", "pre_tokenizer.ByteLevel", true);
            auto prefix = r.bool_or(*e, "add_prefix_space", "pre_tokenizer.ByteLevel", false);
            if (!use_regex)
                return use_regex.error();
            if (!prefix)
                return prefix.error();
            step.type = PS::Type::ByteLevel;
            step.use_regex = *use_regex;
            step.add_prefix_space = *prefix;
            d.byte_level_add_prefix_space = *prefix;
            if (*prefix && have_split)
                p.general = true; // the prefix goes on each piece of the Split
            if (*use_regex) {
                if (have_split)
                    p.general = true;
                have_split = true;
                d.pre_tokenizer = "gpt2";
                d.pre_tokenizer_regex = builtin_regex(BuiltinPattern::Gpt2);
            }
        } else if (t == "Metaspace") {
            p.sentencepiece = true;
            auto rep = r.string_or(*e, "replacement", "pre_tokenizer.Metaspace", kMetaspace);
            if (!rep)
                return rep.error();
            if (rep->empty())
                return r.error("pre_tokenizer.Metaspace.replacement", "empty");
            auto split = r.bool_or(*e, "split", "pre_tokenizer.Metaspace", true);
            if (!split)
                return split.error();
            d.metaspace_split = *split;
            std::string scheme = "always";
            if (const json* s = r.find(*e, "prepend_scheme")) {
                if (!s->is_string())
                    return r.error("pre_tokenizer.Metaspace.prepend_scheme", "expected a string");
                scheme = s->get<std::string>();
            } else {
                auto add = r.bool_or(*e, "add_prefix_space", "pre_tokenizer.Metaspace", true);
                if (!add)
                    return add.error();
                scheme = *add ? "always" : "never";
            }
            step.type = PS::Type::Metaspace;
            step.replacement = *rep;
            step.split = *split;
            if (scheme == "always") {
                d.add_space_prefix = true;
                d.prepend_scheme = TokenizerData::PrependScheme::Always;
                step.prepend_scheme = TokenizerData::PrependScheme::Always;
            } else if (scheme == "first") {
                d.add_space_prefix = true;
                d.prepend_scheme = TokenizerData::PrependScheme::First;
                step.prepend_scheme = TokenizerData::PrependScheme::First;
            } else if (scheme == "never") {
                d.add_space_prefix = false;
                step.prepend = false;
            } else {
                return r.error("pre_tokenizer.Metaspace.prepend_scheme",
                               "unknown value '" + scheme + "'");
            }
            if (*rep != kMetaspace || have_split || count > 1)
                p.general = true;
        } else if (t == "Digits") {
            auto individual = r.bool_or(*e, "individual_digits", "pre_tokenizer.Digits", false);
            if (!individual)
                return individual.error();
            step.type = PS::Type::Digits;
            step.individual_digits = *individual;
            p.general = true;
        } else if (t == "Punctuation") {
            auto behavior = read_behavior(r, *e, "pre_tokenizer.Punctuation", "Isolated");
            if (!behavior)
                return behavior.error();
            step.type = PS::Type::Punctuation;
            step.behavior = *behavior;
            p.general = true;
        } else if (t == "WhitespaceSplit" || t == "Whitespace") {
            step.type = t == "Whitespace" ? PS::Type::Whitespace : PS::Type::WhitespaceSplit;
            p.general = true;
        } else {
            return r.error("pre_tokenizer", "unsupported pre-tokenizer type '" + t + "'");
        }
        p.pre_tokenizer_steps.push_back(std::move(step));
    }
    if (have_split && p.sentencepiece)
        p.general = true; // a Split in a SentencePiece tokenizer (Gemma's Split on " ")
    if (p.byte_level && !have_split)
        d.pre_tokenizer = "none";
    return ok_status();
}

Status read_decoder(const Reader& r, const json& root, TokenizerData& d, Parsed& p) {
    const json* dec = r.find(root, "decoder");
    if (!dec)
        return ok_status();
    TokenizerData::Decoder out;
    out.replace_metaspace = false;
    out.byte_fallback = false;
    bool fused = false;
    for (const json* e : flatten(*dec, "decoders")) {
        const std::string t = type_of(*e);
        if (t == "ByteLevel") {
            out.byte_level = true;
            p.byte_level = true;
        } else if (t == "Replace") {
            const json* pat = r.find(*e, "pattern");
            const json* str = pat ? r.find(*pat, "String") : nullptr;
            auto content = r.string_or(*e, "content", "decoder.Replace", "");
            if (!content)
                return content.error();
            if (!str || !str->is_string() || str->get<std::string>() != kMetaspace ||
                *content != " ")
                return r.error("decoder.Replace", "only String \"\\u2581\" -> \" \" is supported");
            out.replace_metaspace = true;
        } else if (t == "ByteFallback") {
            out.byte_fallback = true;
        } else if (t == "Fuse") {
            fused = true;
        } else if (t == "Strip") {
            auto content = r.string_or(*e, "content", "decoder.Strip", " ");
            if (!content)
                return content.error();
            const json* start = r.find(*e, "start");
            const json* stop = r.find(*e, "stop");
            if (*content != " " || !fused ||
                (stop && (!stop->is_number_integer() || stop->get<std::int64_t>() != 0)) ||
                (start && (!start->is_number_integer() || start->get<std::int64_t>() < 0 ||
                           start->get<std::int64_t>() > 64)))
                return r.error("decoder.Strip",
                               "only Strip(\" \", start, 0) after Fuse is supported");
            out.strip_leading_spaces = start ? static_cast<int>(start->get<std::int64_t>()) : 0;
        } else if (t == "Metaspace") {
            p.sentencepiece = true;
            out.replace_metaspace = true;
            std::string scheme = "always";
            if (const json* s = r.find(*e, "prepend_scheme"); s && s->is_string()) {
                scheme = s->get<std::string>();
            } else if (const json* a = r.find(*e, "add_prefix_space"); a && a->is_boolean()) {
                scheme = a->get<bool>() ? "always" : "never";
            }
            out.metaspace_first_token = scheme != "never";
        } else {
            return r.error("decoder", "unsupported decoder type '" + t + "'");
        }
    }
    d.decoder = out;
    return ok_status();
}

} // namespace llmwb::tokenizer_json
