#include "engine/tokenizer/added_token_matcher.h"

#include <algorithm>

#include "engine/tokenizer/unicode_tables.h"
#include "engine/tokenizer/utf8.h"

namespace llmwb {

namespace {

bool is_space_cp(std::uint32_t cp) {
    return cp != utf8::kInvalid && (unicode::category_flags(cp) & unicode::kWhiteSpace);
}
// Rust char::is_alphanumeric (Alphabetic | \p{N}) or '_', as Hugging Face's single_word check.
bool is_word_cp(std::uint32_t cp) {
    return cp == '_' || (cp != utf8::kInvalid &&
                         (unicode::category_flags(cp) & (unicode::kAlphabetic | unicode::kNumber)));
}

// The code point that ends just before byte `pos` (kInvalid if none or not well-formed).
std::uint32_t cp_before(std::string_view s, std::size_t pos, std::size_t& start) {
    std::size_t i = pos;
    for (int k = 0; k < 4 && i > 0; ++k) {
        --i;
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80)
            break;
    }
    start = i;
    if (pos == 0)
        return utf8::kInvalid;
    const utf8::Decoded d = utf8::decode(s, i);
    if (i + d.length != pos) {
        start = pos - 1;
        return utf8::kInvalid;
    }
    return d.cp;
}

} // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<TokenizerData::AddedToken>& tokens) {
    nodes_.emplace_back();
    for (const auto& t : tokens) {
        if (t.content.empty())
            continue;
        std::int32_t node = 0;
        for (unsigned char b : t.content) {
            std::int32_t next = child(node, b);
            if (next < 0) {
                next = static_cast<std::int32_t>(nodes_.size());
                nodes_.emplace_back();
                auto& ch = nodes_[static_cast<std::size_t>(node)].children;
                ch.insert(std::upper_bound(
                              ch.begin(), ch.end(), std::pair<unsigned char, std::int32_t>{b, -1},
                              [](const auto& a, const auto& c) { return a.first < c.first; }),
                          {b, next});
            }
            node = next;
        }
        // A later duplicate content replaces the earlier one (as a later insert would).
        if (nodes_[static_cast<std::size_t>(node)].token < 0) {
            nodes_[static_cast<std::size_t>(node)].token =
                static_cast<std::int32_t>(tokens_.size());
            tokens_.push_back(t);
        } else {
            tokens_[static_cast<std::size_t>(nodes_[static_cast<std::size_t>(node)].token)] = t;
        }
    }
}

std::int32_t AddedTokenMatcher::child(std::int32_t node, unsigned char b) const {
    const auto& ch = nodes_[static_cast<std::size_t>(node)].children;
    auto it = std::lower_bound(ch.begin(), ch.end(), b,
                               [](const auto& a, unsigned char v) { return a.first < v; });
    return (it != ch.end() && it->first == b) ? it->second : -1;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<Piece>& out) const {
    std::size_t plain_start = 0; // start of the current plain-text piece
    auto emit_plain = [&](std::size_t end) {
        if (end > plain_start)
            out.push_back({plain_start, end, -1});
    };
    std::size_t pos = 0;
    while (pos < text.size() && !tokens_.empty()) {
        // Longest match starting at pos.
        std::int32_t node = 0, best = -1;
        std::size_t best_end = pos;
        for (std::size_t i = pos; i < text.size(); ++i) {
            node = child(node, static_cast<unsigned char>(text[i]));
            if (node < 0)
                break;
            if (nodes_[static_cast<std::size_t>(node)].token >= 0) {
                best = nodes_[static_cast<std::size_t>(node)].token;
                best_end = i + 1;
            }
        }
        if (best < 0) {
            ++pos;
            continue;
        }
        const auto& tok = tokens_[static_cast<std::size_t>(best)];
        std::size_t start = pos, stop = best_end;
        if (tok.single_word) {
            std::size_t unused = 0;
            const bool left_ok = start == 0 || !is_word_cp(cp_before(text, start, unused));
            const bool right_ok = stop == text.size() || !is_word_cp(utf8::decode(text, stop).cp);
            if (!left_ok || !right_ok) {
                pos = best_end; // this match is consumed without being used
                continue;
            }
        }
        if (tok.lstrip) {
            std::size_t s = start;
            while (s > plain_start) {
                std::size_t prev = 0;
                const std::uint32_t cp = cp_before(text, s, prev);
                if (!is_space_cp(cp))
                    break;
                s = prev;
            }
            start = s;
        }
        if (tok.rstrip) {
            while (stop < text.size()) {
                const utf8::Decoded d = utf8::decode(text, stop);
                if (!is_space_cp(d.cp))
                    break;
                stop += d.length;
            }
        }
        emit_plain(start);
        out.push_back({start, stop, tok.id});
        plain_start = stop;
        pos = stop;
    }
    emit_plain(text.size());
}

} // namespace llmwb
