#include "engine/tokenizer/text_decoder.h"

#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"

namespace llmwb {

namespace {

constexpr std::string_view kMetaspaceMark = "\xE2\x96\x81";
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

int byte_token_value(std::string_view t) {
    if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>')
        return -1;
    int v = 0;
    for (char c : t.substr(3, 2)) {
        v <<= 4;
        if (c >= '0' && c <= '9') {
            v |= c - '0';
        } else if (c >= 'A' && c <= 'F') {
            v |= c - 'A' + 10;
        } else if (c >= 'a' && c <= 'f') {
            v |= c - 'a' + 10;
        } else {
            return -1;
        }
    }
    return v;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
    for (std::size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
        s.replace(pos, from.size(), to);
}

} // namespace

TextDecoder::TextDecoder(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tok_(tokenizer), skip_special_(skip_special_tokens),
      strip_left_(tokenizer.decoder().strip_leading_spaces) {}

void TextDecoder::push(std::int32_t id, std::string& out) {
    if (!tok_.valid_id(id))
        return;
    if (skip_special_ && tok_.is_special(id))
        return;
    const TokenizerData::Decoder& dec = tok_.decoder();
    const std::string& text = tok_.token_text(id);
    const std::size_t index = token_index_++;
    if (dec.byte_level) {
        std::string bytes;
        if (!ByteLevelTable::instance().decode(text, bytes))
            bytes = text;
        emit_text(bytes, out);
        return;
    }
    if (dec.byte_fallback) {
        const int b = byte_token_value(text);
        if (b >= 0) {
            byte_run_.push_back(static_cast<char>(b));
            return;
        }
    }
    flush_byte_run(out);
    std::string t = text;
    if (dec.metaspace_first_token && index == 0) {
        replace_all(t, kMetaspaceMark, "");
    } else if (dec.replace_metaspace) {
        replace_all(t, kMetaspaceMark, " ");
    }
    emit_text(t, out);
}

void TextDecoder::finish(std::string& out) {
    flush_byte_run(out);
    emit_complete_utf8(out, true);
}

void TextDecoder::flush_byte_run(std::string& out) {
    if (byte_run_.empty())
        return;
    std::string run;
    run.swap(byte_run_);
    if (utf8::is_valid(run)) {
        emit_text(run, out);
    } else {
        std::string repl;
        for (std::size_t i = 0; i < run.size(); ++i)
            repl += kReplacement;
        emit_text(repl, out);
    }
}

void TextDecoder::emit_text(std::string_view text, std::string& out) {
    while (strip_left_ > 0 && !text.empty()) {
        if (text.front() != ' ') {
            strip_left_ = 0;
            break;
        }
        text.remove_prefix(1);
        --strip_left_;
    }
    pending_.append(text);
    emit_complete_utf8(out, false);
}

void TextDecoder::emit_complete_utf8(std::string& out, bool final) {
    std::size_t i = 0;
    while (i < pending_.size()) {
        bool valid = false, complete = false;
        const std::size_t n = utf8::lossy_unit(pending_, i, valid, complete);
        if (!complete && !final)
            break; // may still become valid: hold it back
        if (valid) {
            out.append(pending_, i, n);
        } else {
            out.append(kReplacement);
        }
        i += n;
    }
    pending_.erase(0, i);
}

} // namespace llmwb
