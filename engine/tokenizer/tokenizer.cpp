#include "engine/tokenizer/tokenizer.h"

#include <algorithm>

#include "engine/tokenizer/added_token_matcher.h"
#include "engine/tokenizer/bpe_model.h"
#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/nfc.h"
#include "engine/tokenizer/normalizer.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/pre_tokenizer_sequence.h"
#include "engine/tokenizer/text_decoder.h"

namespace llmwb {

namespace {

constexpr std::string_view kMetaspace = "\xE2\x96\x81";

std::string replace_spaces(std::string_view s) {
    std::string out;
    out.reserve(s.size() + s.size() / 4);
    for (char c : s) {
        if (c == ' ') {
            out.append(kMetaspace);
        } else {
            out.push_back(c);
        }
    }
    return out;
}

} // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::create(const TokenizerData& data) {
    std::unique_ptr<Tokenizer> t(new Tokenizer());
    t->data_ = data;
    TokenizerData& d = t->data_;
    const auto n = static_cast<std::int64_t>(d.tokens.size());
    if (n == 0)
        return make_error("tokenizer: empty vocabulary");
    if (n > (1 << 24))
        return make_error("tokenizer: vocabulary too large (" + std::to_string(n) + ")");
    if (!d.token_types.empty() && static_cast<std::int64_t>(d.token_types.size()) != n)
        return make_error("tokenizer: token_types has " + std::to_string(d.token_types.size()) +
                          " entries for " + std::to_string(n) + " tokens");
    if (!d.scores.empty() && static_cast<std::int64_t>(d.scores.size()) != n)
        return make_error("tokenizer: scores has " + std::to_string(d.scores.size()) +
                          " entries for " + std::to_string(n) + " tokens");
    auto check_id = [n](std::int32_t id, const char* what) -> Status {
        if (id < -1 || id >= n)
            return make_error(std::string("tokenizer: ") + what + " id " + std::to_string(id) +
                              " out of range");
        return ok_status();
    };
    for (auto [id, what] :
         {std::pair{d.bos_id, "bos"}, {d.eos_id, "eos"}, {d.unk_id, "unk"}, {d.pad_id, "pad"}}) {
        if (auto s = check_id(id, what); !s)
            return s.error();
    }
    for (std::int32_t id : d.eot_ids) {
        if (id < 0 || id >= n)
            return make_error("tokenizer: eot id " + std::to_string(id) + " out of range");
    }
    if (d.add_bos && d.bos_id < 0)
        return make_error("tokenizer: add_bos is set but there is no bos id");
    if (d.add_eos && d.eos_id < 0)
        return make_error("tokenizer: add_eos is set but there is no eos id");

    t->byte_level_ = d.kind == TokenizerData::Kind::ByteLevelBpe;

    // Added tokens: given, or (GGUF) derived from token types 2 unknown, 3 control, 4 user-defined.
    std::vector<TokenizerData::AddedToken> added = d.added_tokens;
    if (added.empty() && !d.token_types.empty()) {
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int32_t type = d.token_types[static_cast<std::size_t>(i)];
            if ((type == 2 || type == 3 || type == 4) &&
                !d.tokens[static_cast<std::size_t>(i)].empty()) {
                TokenizerData::AddedToken a;
                a.id = static_cast<std::int32_t>(i);
                a.content = d.tokens[static_cast<std::size_t>(i)];
                a.special = type != 4;
                added.push_back(std::move(a));
            }
        }
    }
    t->special_.assign(static_cast<std::size_t>(n), 0);
    std::vector<TokenizerData::AddedToken> raw, normalized;
    for (const auto& a : added) {
        if (a.id < 0 || a.id >= n)
            return make_error("tokenizer: added token id " + std::to_string(a.id) +
                              " out of range");
        if (a.content.empty())
            return make_error("tokenizer: added token " + std::to_string(a.id) +
                              " has empty content");
        if (a.special)
            t->special_[static_cast<std::size_t>(a.id)] = 1;
        (a.normalized ? normalized : raw).push_back(a);
    }
    t->raw_added_ = std::make_unique<AddedTokenMatcher>(raw);
    t->normalized_added_ = std::make_unique<AddedTokenMatcher>(normalized);

    // Model vocabulary: every token string, the lowest id winning for duplicates.
    TokenIdMap vocab;
    vocab.reserve(static_cast<std::size_t>(n) * 2);
    for (std::int64_t i = 0; i < n; ++i) {
        const std::string& s = d.tokens[static_cast<std::size_t>(i)];
        if (!s.empty())
            vocab.emplace(s, static_cast<std::int32_t>(i));
    }
    bool have_byte_tokens = true;
    if (!t->byte_level_) {
        for (int b = 0; b < 256 && have_byte_tokens; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            have_byte_tokens = vocab.count(std::string_view(name)) > 0;
        }
    }
    t->byte_fallback_ = !t->byte_level_ && d.byte_fallback.value_or(have_byte_tokens);

    BpeModel::Options opt;
    opt.byte_level = t->byte_level_;
    opt.byte_fallback = t->byte_fallback_;
    opt.fuse_unk = d.fuse_unk;
    opt.unk_id = d.unk_id;
    opt.ignore_merges = d.ignore_merges.value_or(d.pre_tokenizer == "llama3");
    auto model = BpeModel::create(d, std::move(vocab), opt);
    if (!model)
        return model.error();
    t->model_ = std::move(model.value());

    t->nfc_ = d.nfc.value_or(d.pre_tokenizer == "qwen2");
    std::optional<std::vector<TokenizerData::PreTokenizerStep>> steps = d.pre_tokenizer_steps;
    if (!steps)
        steps = gguf_pre_tokenizer_steps(d.pre_tokenizer);
    if (steps) {
        auto seq = PreTokenizerSequence::create(*steps);
        if (!seq)
            return seq.error();
        t->sequence_ = std::move(seq.value());
        auto norm = Normalizer::create(
            d.normalizer_steps.value_or(std::vector<TokenizerData::NormalizerStep>{}));
        if (!norm)
            return norm.error();
        t->normalizer_ = std::move(norm.value());
        t->nfc_ = false;
        // Hugging Face matches normalized added tokens by their normalized content.
        if (!normalized.empty() && !t->normalizer_->empty()) {
            std::vector<TokenizerData::AddedToken> matched;
            for (TokenizerData::AddedToken a : normalized) {
                a.content = t->normalizer_->normalize(a.content);
                if (!a.content.empty())
                    matched.push_back(std::move(a));
            }
            t->normalized_added_ = std::make_unique<AddedTokenMatcher>(matched);
        }
    } else if (t->byte_level_) {
        if (d.pre_tokenizer != "none") {
            const std::string name = (d.pre_tokenizer.empty() || d.pre_tokenizer == "default")
                                         ? "gpt2"
                                         : d.pre_tokenizer;
            auto pt = PreTokenizer::create(name, d.pre_tokenizer_regex);
            if (!pt)
                return pt.error();
            t->pre_tokenizer_ = std::move(pt.value());
        }
    } else if (!d.pre_tokenizer_regex.empty()) {
        return make_error("tokenizer: a pre-tokenizer regex with SentencePiece BPE is unsupported");
    }

    if (d.decoder) {
        t->decoder_ = *d.decoder;
    } else if (t->byte_level_) {
        t->decoder_ = TokenizerData::Decoder{};
        t->decoder_.byte_level = true;
        t->decoder_.replace_metaspace = false;
        t->decoder_.byte_fallback = false;
    } else {
        t->decoder_ = TokenizerData::Decoder{};
        t->decoder_.strip_leading_spaces = d.add_space_prefix ? 1 : 0;
    }
    return t;
}

bool Tokenizer::is_special(std::int32_t id) const {
    return valid_id(id) && special_[static_cast<std::size_t>(id)];
}

const std::string& Tokenizer::token_text(std::int32_t id) const {
    return data_.tokens[static_cast<std::size_t>(id)];
}

std::vector<std::int32_t> Tokenizer::stop_ids() const {
    std::vector<std::int32_t> ids;
    if (data_.eos_id >= 0)
        ids.push_back(data_.eos_id);
    for (std::int32_t id : data_.eot_ids) {
        if (std::find(ids.begin(), ids.end(), id) == ids.end())
            ids.push_back(id);
    }
    return ids;
}

std::string Tokenizer::token_bytes(std::int32_t id) const {
    if (!valid_id(id))
        return {};
    const std::string& text = token_text(id);
    std::string out;
    if (byte_level_) {
        if (!ByteLevelTable::instance().decode(text, out))
            out = text;
        return out;
    }
    if (text.size() == 6 && text.compare(0, 3, "<0x") == 0 && text[5] == '>' && byte_fallback_) {
        const std::string hex = text.substr(3, 2);
        char* end = nullptr;
        const long v = std::strtol(hex.c_str(), &end, 16);
        if (end == hex.c_str() + 2)
            return std::string(1, static_cast<char>(v));
    }
    out = text;
    for (std::size_t pos = 0; (pos = out.find(kMetaspace, pos)) != std::string::npos; ++pos)
        out.replace(pos, kMetaspace.size(), " ");
    return out;
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
    std::vector<std::int32_t> ids;
    ids.reserve(text.size() / 3 + 4);
    if (add_special_tokens && data_.add_bos)
        ids.push_back(data_.bos_id);
    std::vector<AddedTokenMatcher::Piece> pieces;
    raw_added_->split(text, pieces);
    for (const auto& p : pieces) {
        if (p.id >= 0) {
            ids.push_back(p.id);
        } else {
            encode_normalized(text.substr(p.begin, p.end - p.begin), p.begin == 0, ids);
        }
    }
    if (add_special_tokens && data_.add_eos)
        ids.push_back(data_.eos_id);
    return ids;
}

void Tokenizer::encode_normalized(std::string_view text, bool at_text_start,
                                  std::vector<std::int32_t>& out) const {
    std::string normalized;
    if (normalizer_) {
        normalized = normalizer_->normalize(text);
        text = normalized;
    } else if (nfc_) {
        normalized = nfc_normalize(text);
        text = normalized;
    }
    if (normalized_added_->empty()) {
        encode_plain(text, at_text_start, out);
        return;
    }
    std::vector<AddedTokenMatcher::Piece> pieces;
    normalized_added_->split(text, pieces);
    for (const auto& p : pieces) {
        if (p.id >= 0) {
            out.push_back(p.id);
        } else {
            encode_plain(text.substr(p.begin, p.end - p.begin), at_text_start && p.begin == 0, out);
        }
    }
}

void Tokenizer::encode_plain(std::string_view text, bool at_text_start,
                             std::vector<std::int32_t>& out) const {
    if (text.empty())
        return;
    if (sequence_) {
        std::vector<std::string> words;
        sequence_->split(text, at_text_start, words);
        for (const std::string& w : words)
            model_->encode_word(w, out);
        return;
    }
    if (byte_level_) {
        std::string prefixed;
        if (data_.byte_level_add_prefix_space && text.front() != ' ') {
            prefixed = " ";
            prefixed.append(text);
            text = prefixed;
        }
        if (!pre_tokenizer_) {
            model_->encode_word(text, out);
            return;
        }
        std::vector<std::string_view> words;
        pre_tokenizer_->split(text, words);
        for (std::string_view w : words)
            model_->encode_word(w, out);
        return;
    }
    // SentencePiece: spaces -> "▁", then the "▁" prefix per the normalizer / Metaspace scheme.
    std::string s = replace_spaces(text);
    bool prepend = false;
    if (data_.add_space_prefix) {
        using PS = TokenizerData::PrependScheme;
        const bool starts = s.compare(0, kMetaspace.size(), kMetaspace) == 0;
        switch (data_.prepend_scheme) {
        case PS::EverySegment:
            prepend = true;
            break;
        case PS::Always:
            prepend = !starts;
            break;
        case PS::First:
            prepend = !starts && at_text_start;
            break;
        }
    }
    if (prepend)
        s.insert(0, kMetaspace);
    if (!data_.metaspace_split) {
        model_->encode_word(s, out);
        return;
    }
    // Split before every "▁" (MergedWithNext).
    std::size_t start = 0;
    for (std::size_t pos = s.find(kMetaspace, 1); pos != std::string::npos;
         pos = s.find(kMetaspace, pos + 1)) {
        if (pos > start)
            model_->encode_word(std::string_view(s).substr(start, pos - start), out);
        start = pos;
    }
    model_->encode_word(std::string_view(s).substr(start), out);
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, bool skip_special_tokens) const {
    TextDecoder dec(*this, skip_special_tokens);
    std::string out;
    for (std::int32_t id : ids)
        dec.push(id, out);
    dec.finish(out);
    return out;
}

} // namespace llmwb
