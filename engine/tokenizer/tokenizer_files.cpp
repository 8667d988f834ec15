// read_tokenizer_files(): Hugging Face tokenizer.json + tokenizer_config.json -> TokenizerData.
// Only the constructs real BPE tokenizers use are accepted; anything else is an error naming
// the file and the field, never a silent approximation.
#include "engine/tokenizer/tokenizer_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/pre_tokenizer_sequence.h"
#include "engine/tokenizer/tokenizer_json_reader.h"
#include "engine/util/json_depth.h"

namespace llmwb {

namespace {

using namespace tokenizer_json;

constexpr std::uintmax_t kMaxTokenizerJsonBytes = 512ull << 20;
constexpr std::uintmax_t kMaxConfigBytes = 64ull << 20;
constexpr std::int64_t kMaxTokenId = 16 * 1024 * 1024;

Result<std::string> read_file(const std::string& path, std::uintmax_t max_bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return make_error(path + ": cannot open file");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0)
        return make_error(path + ": cannot read file size");
    if (static_cast<std::uintmax_t>(size) > max_bytes)
        return make_error(path + ": file too large (" + std::to_string(size) + " bytes)");
    in.seekg(0, std::ios::beg);
    std::string data(static_cast<std::size_t>(size), '\0');
    if (!in.read(data.data(), size))
        return make_error(path + ": read failed");
    return data;
}

Result<json> parse_json(const std::string& path, std::uintmax_t max_bytes) {
    auto text = read_file(path, max_bytes);
    if (!text)
        return text.error();
    if (Status st = check_json_depth(text.value(), kMaxJsonDepth, path); !st)
        return st.error();
    json j = json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
        return make_error(path + ": invalid JSON");
    if (!j.is_object())
        return make_error(path + ": top level is not a JSON object");
    return j;
}

Status read_post_processor(const Reader& r, const json& root, TokenizerData& d,
                           const std::unordered_map<std::string, std::int32_t>& ids,
                           bool& have_template) {
    have_template = false;
    const json* pp = r.find(root, "post_processor");
    if (!pp)
        return ok_status();
    for (const json* e : flatten(*pp, "processors")) {
        const std::string t = type_of(*e);
        if (t == "ByteLevel")
            continue; // offsets only
        if (t != "TemplateProcessing")
            return r.error("post_processor", "unsupported post-processor type '" + t + "'");
        const json* single = r.find(*e, "single");
        if (!single || !single->is_array())
            return r.error("post_processor.single", "expected an array");
        const json* specials = r.find(*e, "special_tokens");
        std::vector<std::int32_t> before, after;
        bool seen_a = false;
        for (const json& item : *single) {
            if (const json* seq = r.find(item, "Sequence")) {
                if (seen_a)
                    return r.error("post_processor.single", "more than one sequence");
                (void)seq;
                seen_a = true;
                continue;
            }
            const json* st = r.find(item, "SpecialToken");
            const json* name = st ? r.find(*st, "id") : nullptr;
            if (!name || !name->is_string())
                return r.error("post_processor.single", "expected SpecialToken or Sequence");
            const std::string key = name->get<std::string>();
            std::vector<std::int32_t> tok_ids;
            const json* spec = specials ? r.find(*specials, key.c_str()) : nullptr;
            if (spec && r.find(*spec, "ids") && (*spec)["ids"].is_array()) {
                for (const json& v : (*spec)["ids"]) {
                    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
                        v.get<std::int64_t>() > kMaxTokenId)
                        return r.error("post_processor.special_tokens." + key + ".ids",
                                       "invalid id");
                    tok_ids.push_back(static_cast<std::int32_t>(v.get<std::int64_t>()));
                }
            } else if (auto it = ids.find(key); it != ids.end()) {
                tok_ids.push_back(it->second);
            } else {
                return r.error("post_processor.special_tokens",
                               "unknown special token '" + key + "'");
            }
            auto& dst = seen_a ? after : before;
            dst.insert(dst.end(), tok_ids.begin(), tok_ids.end());
        }
        if (before.size() > 1 || after.size() > 1)
            return r.error("post_processor.single",
                           "more than one special token on a side is unsupported");
        have_template = true;
        d.add_bos = !before.empty();
        d.add_eos = !after.empty();
        if (d.add_bos)
            d.bos_id = before[0];
        if (d.add_eos)
            d.eos_id = after[0];
    }
    return ok_status();
}

// bos_token / eos_token / pad_token: a string, {"content": ...} or null.
Result<std::optional<std::string>> token_content(const Reader& r, const json& cfg,
                                                 const char* key) {
    const json* v = r.find(cfg, key);
    if (!v)
        return std::optional<std::string>{};
    if (v->is_string())
        return std::optional<std::string>{v->get<std::string>()};
    if (v->is_object()) {
        const json* c = r.find(*v, "content");
        if (c && c->is_string())
            return std::optional<std::string>{c->get<std::string>()};
    }
    return r.error(key, "expected a string or {\"content\": string}");
}

Status read_config(const std::string& path, TokenizerFiles& files, bool have_template,
                   const std::unordered_map<std::string, std::int32_t>& ids) {
    TokenizerData& d = files.data;
    auto parsed = parse_json(path, kMaxConfigBytes);
    if (!parsed)
        return parsed.error();
    const json& cfg = parsed.value();
    Reader r(path);

    if (const json* ct = r.find(cfg, "chat_template")) {
        if (ct->is_string()) {
            files.chat_template = ct->get<std::string>();
        } else if (ct->is_array()) {
            for (const json& e : *ct) {
                const json* name = r.find(e, "name");
                const json* tmpl = r.find(e, "template");
                if (!name || !name->is_string() || !tmpl || !tmpl->is_string())
                    return r.error("chat_template",
                                   "list entries must be {\"name\", \"template\"} strings");
                if (name->get<std::string>() == "default")
                    files.chat_template = tmpl->get<std::string>();
            }
        } else {
            return r.error("chat_template", "expected a string or a list of {name, template}");
        }
    }
    auto lookup = [&](const std::optional<std::string>& content,
                      const char* field) -> Result<std::int32_t> {
        if (!content)
            return -1;
        auto it = ids.find(*content);
        if (it == ids.end())
            return r.error(field, "token '" + *content + "' is not in the vocabulary");
        return it->second;
    };
    auto bos = token_content(r, cfg, "bos_token");
    auto eos = token_content(r, cfg, "eos_token");
    auto pad = token_content(r, cfg, "pad_token");
    if (!bos)
        return bos.error();
    if (!eos)
        return eos.error();
    if (!pad)
        return pad.error();
    auto bos_id = lookup(*bos, "bos_token");
    auto eos_id = lookup(*eos, "eos_token");
    auto pad_id = lookup(*pad, "pad_token");
    if (!bos_id)
        return bos_id.error();
    if (!eos_id)
        return eos_id.error();
    if (!pad_id)
        return pad_id.error();
    if (*bos_id >= 0 && !(have_template && d.add_bos))
        d.bos_id = *bos_id;
    if (*eos_id >= 0)
        d.eos_id = *eos_id;
    if (*pad_id >= 0)
        d.pad_id = *pad_id;
    if (!have_template) {
        auto ab = r.bool_or(cfg, "add_bos_token", "", false);
        auto ae = r.bool_or(cfg, "add_eos_token", "", false);
        if (!ab)
            return ab.error();
        if (!ae)
            return ae.error();
        d.add_bos = *ab && d.bos_id >= 0;
        d.add_eos = *ae && d.eos_id >= 0;
    }
    return ok_status();
}

} // namespace

Result<TokenizerFiles> read_tokenizer_files(const std::string& tokenizer_json_path,
                                            const std::string& tokenizer_config_path) {
    auto parsed = parse_json(tokenizer_json_path, kMaxTokenizerJsonBytes);
    if (!parsed)
        return parsed.error();
    const json& root = parsed.value();
    Reader r(tokenizer_json_path);
    TokenizerFiles files;
    TokenizerData& d = files.data;
    Parsed p;

    const json* model = r.find(root, "model");
    if (!model || !model->is_object())
        return r.error("model", "missing or not an object");
    if (const json* t = r.find(*model, "type");
        t && (!t->is_string() || t->get<std::string>() != "BPE"))
        return r.error("model.type", "only BPE models are supported");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        auto v = r.string_or(*model, key, "model", "");
        if (!v)
            return v.error();
        if (!v->empty())
            return r.error(std::string("model.") + key, "non-empty value is unsupported");
    }
    {
        auto bf = r.bool_or(*model, "byte_fallback", "model", false);
        auto fu = r.bool_or(*model, "fuse_unk", "model", false);
        auto im = r.bool_or(*model, "ignore_merges", "model", false);
        if (!bf)
            return bf.error();
        if (!fu)
            return fu.error();
        if (!im)
            return im.error();
        d.byte_fallback = *bf;
        d.fuse_unk = *fu;
        d.ignore_merges = *im;
    }

    // Vocabulary: token -> id; ids must be unique and bounded.
    const json* vocab = r.find(*model, "vocab");
    if (!vocab || !vocab->is_object())
        return r.error("model.vocab", "missing or not an object");
    std::unordered_map<std::string, std::int32_t> ids; // content -> id (added tokens override)
    ids.reserve(vocab->size() * 2);
    std::vector<std::pair<std::int32_t, std::string>> entries;
    entries.reserve(vocab->size());
    std::int64_t max_id = -1;
    for (auto it = vocab->begin(); it != vocab->end(); ++it) {
        if (!it.value().is_number_integer())
            return r.error("model.vocab", "id of '" + it.key() + "' is not an integer");
        const std::int64_t id = it.value().get<std::int64_t>();
        if (id < 0 || id > kMaxTokenId)
            return r.error("model.vocab", "id out of range for '" + it.key() + "'");
        entries.emplace_back(static_cast<std::int32_t>(id), it.key());
        max_id = std::max(max_id, id);
    }
    std::vector<TokenizerData::AddedToken> added;
    if (const json* at = r.find(root, "added_tokens")) {
        if (!at->is_array())
            return r.error("added_tokens", "expected an array");
        for (const json& e : *at) {
            TokenizerData::AddedToken a;
            const json* id = r.find(e, "id");
            const json* content = r.find(e, "content");
            if (!id || !id->is_number_integer() || id->get<std::int64_t>() < 0 ||
                id->get<std::int64_t>() > kMaxTokenId)
                return r.error("added_tokens.id", "missing or out of range");
            if (!content || !content->is_string() || content->get<std::string>().empty())
                return r.error("added_tokens.content", "missing or empty");
            a.id = static_cast<std::int32_t>(id->get<std::int64_t>());
            a.content = content->get<std::string>();
            bool* flags[] = {&a.special, &a.lstrip, &a.rstrip, &a.normalized, &a.single_word};
            const char* names[] = {"special", "lstrip", "rstrip", "normalized", "single_word"};
            for (int i = 0; i < 5; ++i) {
                auto v = r.bool_or(e, names[i], "added_tokens", false);
                if (!v)
                    return v.error();
                *flags[i] = *v;
            }
            max_id = std::max<std::int64_t>(max_id, a.id);
            added.push_back(std::move(a));
        }
    }
    if (max_id < 0)
        return r.error("model.vocab", "empty vocabulary");
    d.tokens.assign(static_cast<std::size_t>(max_id) + 1, std::string());
    std::vector<char> seen(d.tokens.size(), 0);
    for (auto& [id, tok] : entries) {
        if (seen[static_cast<std::size_t>(id)])
            return r.error("model.vocab", "duplicate id " + std::to_string(id));
        seen[static_cast<std::size_t>(id)] = 1;
        ids.emplace(tok, id);
        d.tokens[static_cast<std::size_t>(id)] = std::move(tok);
    }
    d.token_types.assign(d.tokens.size(), 1);
    for (const auto& a : added) {
        d.tokens[static_cast<std::size_t>(a.id)] = a.content;
        d.token_types[static_cast<std::size_t>(a.id)] = a.special ? 3 : 4;
        ids[a.content] = a.id;
        seen[static_cast<std::size_t>(a.id)] = 1;
    }
    for (std::size_t i = 0; i < seen.size(); ++i) {
        if (!seen[i])
            d.token_types[i] = 5; // a hole in the id space: unused
    }
    d.added_tokens = std::move(added);

    // Merges: "a b" strings or [a, b] pairs, in rank order.
    if (const json* merges = r.find(*model, "merges")) {
        if (!merges->is_array())
            return r.error("model.merges", "expected an array");
        d.merges.reserve(merges->size());
        for (const json& m : *merges) {
            if (m.is_string()) {
                const std::string& s = m.get_ref<const std::string&>();
                const std::size_t sp = s.find(' ');
                if (sp == std::string::npos || sp == 0 || sp + 1 >= s.size() ||
                    s.find(' ', sp + 1) != std::string::npos)
                    return r.error("model.merges", "malformed merge '" + s + "'");
                d.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
            } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
                d.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
            } else {
                return r.error("model.merges", "entries must be \"a b\" strings or [a, b] pairs");
            }
        }
    }
    if (auto unk = r.string_or(*model, "unk_token", "model", ""); !unk) {
        return unk.error();
    } else if (!unk->empty()) {
        auto it = ids.find(*unk);
        if (it == ids.end())
            return r.error("model.unk_token", "'" + *unk + "' is not in the vocabulary");
        d.unk_id = it->second;
        d.token_types[static_cast<std::size_t>(d.unk_id)] = 2;
    }

    d.add_space_prefix = false;
    if (auto s = read_normalizer(r, root, d, p); !s)
        return s.error();
    if (auto s = read_pre_tokenizer(r, root, d, p); !s)
        return s.error();
    if (auto s = read_decoder(r, root, d, p); !s)
        return s.error();
    if (p.byte_level == p.sentencepiece)
        return r.error(
            "pre_tokenizer",
            p.byte_level
                ? "mixes ByteLevel and SentencePiece (\\u2581) components"
                : "neither ByteLevel nor SentencePiece style; cannot tell the tokenizer kind");
    d.kind =
        p.byte_level ? TokenizerData::Kind::ByteLevelBpe : TokenizerData::Kind::SentencePieceBpe;
    if (!p.general) {
        // A single Split that is a GGUF multi-step value ("gpt-4o"): named as such, so that a
        // GGUF written from this data says which split it means.
        if (std::string known = gguf_pre_tokenizer_name(p.pre_tokenizer_steps); !known.empty())
            d.pre_tokenizer = known;
    } else {
        d.normalizer_steps = std::move(p.normalizer_steps);
        d.pre_tokenizer_steps = std::move(p.pre_tokenizer_steps);
        d.pre_tokenizer_regex.clear();
        // The GGUF tokenizer.ggml.pre name when the steps are those of one (written by the
        // GGUF writer); otherwise a name no GGUF reader knows, so that such a file is refused
        // rather than split differently.
        const std::string known = gguf_pre_tokenizer_name(*d.pre_tokenizer_steps);
        d.pre_tokenizer = !known.empty() ? known : p.sentencepiece ? "default" : "sequence";
    }
    if (d.kind == TokenizerData::Kind::SentencePieceBpe) {
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            auto it = ids.find(name);
            if (it != ids.end())
                d.token_types[static_cast<std::size_t>(it->second)] = 6;
        }
    }
    if (!d.nfc)
        d.nfc = false;

    bool have_template = false;
    if (auto s = read_post_processor(r, root, d, ids, have_template); !s)
        return s.error();
    if (!tokenizer_config_path.empty()) {
        if (auto s = read_config(tokenizer_config_path, files, have_template, ids); !s)
            return s.error();
    }
    for (const char* name :
         {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|endoftext|>", "<|end_of_text|>"}) {
        auto it = ids.find(name);
        if (it != ids.end() && it->second != d.eos_id &&
            std::find(d.eot_ids.begin(), d.eot_ids.end(), it->second) == d.eot_ids.end())
            d.eot_ids.push_back(it->second);
    }
    return files;
}

} // namespace llmwb
