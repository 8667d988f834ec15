#include "engine/model/demo_tokenizer.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <vector>

#include "engine/model/demo_ngram_text.h"
#include "engine/model/demo_tokenizer_text.h"

namespace llmwb {

namespace {

constexpr int kMaxMerges = 1000;

const char* const kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kGpt2Regex =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

const char* const kChatMlTemplate =
    "{%- for message in messages -%}\n"
    "{%- if message['role'] not in ['system', 'user', 'assistant'] -%}\n"
    "{{- raise_exception('Only system, user and assistant roles are supported') -}}\n"
    "{%- endif -%}\n"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "{{- '<|im_start|>assistant\\n' -}}\n"
    "{%- endif -%}\n";

// GPT-2's reversible byte -> code point mapping, as UTF-8 strings.
std::vector<std::string> byte_symbols() {
    std::vector<int> cp(256, -1);
    for (int b = 0; b < 256; ++b) {
        if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255))
            cp[b] = b;
    }
    int next = 256;
    for (int b = 0; b < 256; ++b) {
        if (cp[b] < 0)
            cp[b] = next++;
    }
    std::vector<std::string> out(256);
    for (int b = 0; b < 256; ++b) {
        int c = cp[b];
        std::string s;
        if (c < 0x80) {
            s += char(c);
        } else {
            s += char(0xC0 | (c >> 6));
            s += char(0x80 | (c & 0x3F));
        }
        out[b] = s;
    }
    return out;
}

bool is_letter(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}
bool is_space(unsigned char c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

// A simple ASCII approximation of the qwen2 split (enough to learn merges): an optional
// leading space + letters, single digits, an optional space + punctuation, whitespace runs.
std::vector<std::string> split_words(std::string_view text) {
    std::vector<std::string> words;
    size_t i = 0;
    while (i < text.size()) {
        size_t j = i;
        unsigned char c = text[i];
        if (c == ' ' && i + 1 < text.size() && is_letter(text[i + 1])) {
            j = i + 1;
            while (j < text.size() && is_letter(text[j]))
                ++j;
        } else if (is_letter(c)) {
            while (j < text.size() && is_letter(text[j]))
                ++j;
        } else if (is_digit(c)) {
            j = i + 1;
        } else if (is_space(c)) {
            while (j < text.size() && is_space(text[j]))
                ++j;
        } else {
            while (j < text.size() && !is_space(text[j]) && !is_letter(text[j]) &&
                   !is_digit(text[j])) {
                ++j;
            }
        }
        words.emplace_back(text.substr(i, j - i));
        i = j;
    }
    return words;
}

// Learns merges on symbol sequences: the most frequent adjacent pair (ties: smallest pair)
// is merged, until kMaxMerges or no pair occurs twice.
std::vector<std::pair<std::string, std::string>> learn_merges(const std::vector<std::string>& words,
                                                              const std::vector<std::string>& sym) {
    std::map<std::vector<std::string>, int> counts;
    for (const auto& w : words) {
        std::vector<std::string> s;
        for (unsigned char b : w)
            s.push_back(sym[b]);
        ++counts[s];
    }
    std::vector<std::pair<std::vector<std::string>, int>> seqs(counts.begin(), counts.end());
    std::vector<std::pair<std::string, std::string>> merges;
    while (int(merges.size()) < kMaxMerges) {
        std::map<std::pair<std::string, std::string>, int> pairs;
        for (const auto& [s, n] : seqs) {
            for (size_t k = 0; k + 1 < s.size(); ++k)
                pairs[{s[k], s[k + 1]}] += n;
        }
        const std::pair<std::string, std::string>* best = nullptr;
        int best_n = 1;
        for (const auto& [p, n] : pairs) {
            if (n > best_n) {
                best = &p;
                best_n = n;
            }
        }
        if (!best)
            break;
        const auto m = *best;
        merges.push_back(m);
        for (auto& [s, n] : seqs) {
            std::vector<std::string> out;
            for (size_t k = 0; k < s.size(); ++k) {
                if (k + 1 < s.size() && s[k] == m.first && s[k + 1] == m.second) {
                    out.push_back(m.first + m.second);
                    ++k;
                } else {
                    out.push_back(s[k]);
                }
            }
            s = std::move(out);
        }
    }
    return merges;
}

std::string regex_for(const TokenizerData& d) {
    if (!d.pre_tokenizer_regex.empty())
        return d.pre_tokenizer_regex;
    if (d.pre_tokenizer == "llama3")
        return kLlama3Regex;
    if (d.pre_tokenizer == "gpt2")
        return kGpt2Regex;
    return kQwen2Regex;
}

} // namespace

namespace {

TokenizerFiles build_demo_tokenizer() {
    TokenizerFiles f;
    TokenizerData& d = f.data;
    d.kind = TokenizerData::Kind::ByteLevelBpe;
    const auto sym = byte_symbols();
    for (int b = 0; b < 256; ++b)
        d.tokens.push_back(sym[b]);
    d.merges = learn_merges(split_words(std::string(kDemoTokenizerCorpus) + kDemoNgramCorpus), sym);
    std::set<std::string> seen(d.tokens.begin(), d.tokens.end());
    for (const auto& [a, b] : d.merges) {
        if (seen.insert(a + b).second)
            d.tokens.push_back(a + b);
    }
    d.token_types.assign(d.tokens.size(), 1);
    for (const char* s : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
        TokenizerData::AddedToken a;
        a.id = int32_t(d.tokens.size());
        a.content = s;
        a.special = true;
        d.added_tokens.push_back(a);
        d.tokens.push_back(s);
        d.token_types.push_back(3);
    }
    d.pre_tokenizer = "qwen2";
    d.pre_tokenizer_regex = kQwen2Regex;
    d.add_bos = false;
    d.add_eos = false;
    d.add_space_prefix = false;
    d.eos_id = d.added_tokens[2].id; // <|im_end|>
    d.pad_id = d.added_tokens[0].id; // <|endoftext|>
    d.eot_ids = {d.added_tokens[0].id};
    f.chat_template = kChatMlTemplate;
    return f;
}

} // namespace

TokenizerFiles make_demo_tokenizer() {
    static const TokenizerFiles demo = build_demo_tokenizer(); // learned once per process
    return demo;
}

std::string tokenizer_json_text(const TokenizerData& d) {
    using nlohmann::ordered_json;
    std::set<int32_t> added_ids;
    ordered_json added = ordered_json::array();
    for (const auto& a : d.added_tokens) {
        added_ids.insert(a.id);
        added.push_back({{"id", a.id},
                         {"content", a.content},
                         {"single_word", a.single_word},
                         {"lstrip", a.lstrip},
                         {"rstrip", a.rstrip},
                         {"normalized", a.normalized},
                         {"special", a.special}});
    }
    ordered_json vocab = ordered_json::object();
    for (size_t i = 0; i < d.tokens.size(); ++i) {
        if (!added_ids.count(int32_t(i)))
            vocab[d.tokens[i]] = i;
    }
    ordered_json merges = ordered_json::array();
    for (const auto& [a, b] : d.merges)
        merges.push_back(a + " " + b);
    const ordered_json byte_level = {{"type", "ByteLevel"},
                                     {"add_prefix_space", false},
                                     {"trim_offsets", false},
                                     {"use_regex", false}};
    ordered_json j = {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer",
         {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"},
             {"pattern", {{"Regex", regex_for(d)}}},
             {"behavior", "Isolated"},
             {"invert", false}},
            byte_level}}}},
        {"post_processor", byte_level},
        {"decoder", byte_level},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", ""},
          {"end_of_word_suffix", ""},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", false},
          {"vocab", vocab},
          {"merges", merges}}},
    };
    return j.dump(2);
}

std::string tokenizer_config_json_text(const TokenizerData& d,
                                       const std::optional<std::string>& chat_template) {
    using nlohmann::ordered_json;
    auto tok = [&](int32_t id) -> ordered_json {
        if (id < 0 || size_t(id) >= d.tokens.size())
            return nullptr;
        return d.tokens[size_t(id)];
    };
    ordered_json decoder = ordered_json::object();
    for (const auto& a : d.added_tokens) {
        decoder[std::to_string(a.id)] = {{"content", a.content},         {"lstrip", a.lstrip},
                                         {"normalized", a.normalized},   {"rstrip", a.rstrip},
                                         {"single_word", a.single_word}, {"special", a.special}};
    }
    ordered_json j = {{"add_bos_token", d.add_bos},
                      {"add_eos_token", d.add_eos},
                      {"add_prefix_space", false},
                      {"added_tokens_decoder", decoder},
                      {"bos_token", tok(d.bos_id)},
                      {"eos_token", tok(d.eos_id)},
                      {"pad_token", tok(d.pad_id)},
                      {"unk_token", tok(d.unk_id)},
                      {"clean_up_tokenization_spaces", false},
                      {"model_max_length", 32768},
                      {"tokenizer_class", "PreTrainedTokenizerFast"}};
    if (chat_template)
        j["chat_template"] = *chat_template;
    return j.dump(2);
}

} // namespace llmwb
