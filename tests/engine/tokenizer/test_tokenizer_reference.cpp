// Token ids, decoded text and streamed text against the real Hugging Face tokenizers, for the
// Qwen3, Llama 2, Llama 3.1, Gemma 3 and DeepSeek-V3 tokenizer.json files and the variants
// gen-reference.js writes (references: generate-reference.sh).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/tokenizer/streaming_decoder.h"
#include "engine/tokenizer/test_support.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_files.h"
#include "engine/tokenizer/utf8.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

struct Loaded {
    TokenizerFiles files;
    std::unique_ptr<Tokenizer> tokenizer;
    double load_ms = 0;
};

// Loads each tokenizer once per process (tokenizer.json parsing is the slow part).
Loaded* load(const std::string& model) {
    static std::map<std::string, std::unique_ptr<Loaded>> cache;
    auto& slot = cache[model];
    if (slot)
        return slot.get();
    // The real files have a tokenizer_config.json; the variants written by gen-reference.js
    // (other pre-tokenizer / decoder / added-token settings) have none.
    const bool variant = model != "qwen3" && model != "llama2" && model != "llama3_1" &&
                         model != "gemma3" && model != "deepseek_v3";
    const std::string dir = variant ? test::assets_dir() + "/reference/tokenizer/variants/" + model
                                    : test::assets_dir() + "/tokenizers/" + model;
    const auto t0 = std::chrono::steady_clock::now();
    auto files = read_tokenizer_files(dir + "/tokenizer.json",
                                      variant ? "" : dir + "/tokenizer_config.json");
    if (!files) {
        std::fprintf(stderr, "%s\n", files.message().c_str());
        return nullptr;
    }
    const auto t1 = std::chrono::steady_clock::now();
    auto tok = Tokenizer::create(files->data);
    if (!tok) {
        std::fprintf(stderr, "%s\n", tok.message().c_str());
        return nullptr;
    }
    const auto t2 = std::chrono::steady_clock::now();
    slot = std::make_unique<Loaded>();
    slot->files = std::move(files.value());
    slot->tokenizer = std::move(tok.value());
    slot->load_ms = std::chrono::duration<double, std::milli>(t2 - t0).count();
    std::printf("%s: read_tokenizer_files %.0f ms, Tokenizer::create %.0f ms\n", model.c_str(),
                std::chrono::duration<double, std::milli>(t1 - t0).count(),
                std::chrono::duration<double, std::milli>(t2 - t1).count());
    return slot.get();
}

std::vector<std::int32_t> ids_of(const nlohmann::json& a) {
    std::vector<std::int32_t> v;
    for (const auto& x : a)
        v.push_back(x.get<std::int32_t>());
    return v;
}

std::string show(const std::vector<std::int32_t>& ids) {
    std::string s;
    for (auto i : ids)
        s += (s.empty() ? "" : ",") + std::to_string(i);
    return "[" + s + "]";
}

// Decodes one id at a time; checks every chunk is complete UTF-8; returns the concatenation.
std::string stream_decode(const Tokenizer& tok, const std::vector<std::int32_t>& ids, bool skip,
                          bool& chunks_valid) {
    StreamingDecoder dec(tok, skip);
    std::string all;
    chunks_valid = true;
    for (auto id : ids) {
        const std::string chunk = dec.push(id);
        chunks_valid = chunks_valid && utf8::is_valid(chunk);
        all += chunk;
    }
    const std::string rest = dec.flush();
    chunks_valid = chunks_valid && utf8::is_valid(rest);
    return all + rest;
}

} // namespace

namespace {

struct ModelRow {
    std::string name; // the tokenizer: a real model's, or a variant written by gen-reference.js
    // tokenizer_config.json asks for bos (add_bos_token) where tokenizer.json's post-processor
    // does not add it (DeepSeek-V3): transformers then adds it, the bare tokenizers library does
    // not, so the expected ids with special tokens are bos + the reference's.
    bool config_adds_bos = false;
};

std::vector<ModelRow> hf_reference_rows() {
    return {{"qwen3"},
            {"llama2"},
            {"llama3_1"},
            {"gemma3"},
            {"deepseek_v3", true},
            {"llama2_metaspace_first"},
            {"llama2_metaspace_always_split"},
            {"qwen3_gpt2_prefix_space"},
            {"phi3_style"},
            {"phi4_mini_style"},
            {"qwen3_nfkc_lower_strip_replace"},
            {"qwen3_lowercase_normalized_added"},
            {"qwen3_nfd_wssplit_digits_punct"},
            {"qwen3_nfkd_whitespace"},
            {"qwen3_split_behaviors"},
            {"llama2_lower_digits_metaspace"}};
}

std::vector<ModelRow> real_models_rows() {
    return {{"qwen3"}, {"llama2"}, {"llama3_1"}, {"gemma3"}, {"deepseek_v3", true}};
}

std::vector<std::int32_t> with_config_bos(const ModelRow& row, const Tokenizer& tok,
                                          std::vector<std::int32_t> ids) {
    if (row.config_adds_bos)
        ids.insert(ids.begin(), tok.bos_id());
    return ids;
}

} // namespace

// Every corpus case: ids with and without special tokens, decode (with and without
// skipping specials), round trip, and streaming decode.
MT_TEST_TABLE(hf_reference, ModelRow, hf_reference_rows()) {
    const std::string m = row.name;
    const std::string ref_path = test::assets_dir() + "/reference/tokenizer/" + m + ".json";
    const nlohmann::json ref = test::load_json(ref_path);
    MT_REQUIRE_MSG(ref.is_object() && ref.contains("cases"),
                   "missing reference " + ref_path + " (run scripts/fetch-test-assets.sh)");
    Loaded* l = load(m);
    MT_REQUIRE_MSG(l, "tokenizer did not load");
    const Tokenizer& tok = *l->tokenizer;

    int total = 0, ids_ok = 0, special_ok = 0, decode_ok = 0, skip_ok = 0, roundtrip = 0,
        stream_ok = 0;
    std::vector<std::string> failures;
    for (const auto& c : ref["cases"]) {
        ++total;
        const std::string text = c["text"].get<std::string>();
        const auto want = ids_of(c["ids"]);
        const auto want_special = with_config_bos(row, tok, ids_of(c["ids_special"]));
        const auto got = tok.encode(text, false);
        const auto got_special = tok.encode(text, true);
        if (got == want) {
            ++ids_ok;
        } else if (failures.size() < 10) {
            failures.push_back("ids " + text + ": want " + show(want) + " got " + show(got));
        }
        if (got_special == want_special) {
            ++special_ok;
        } else if (failures.size() < 10) {
            failures.push_back("ids+special " + text + ": want " + show(want_special) + " got " +
                               show(got_special));
        }
        const std::string decoded = tok.decode(want, false);
        if (decoded == c["decoded"].get<std::string>()) {
            ++decode_ok;
        } else if (failures.size() < 10) {
            failures.push_back("decode " + text + ": want '" + c["decoded"].get<std::string>() +
                               "' got '" + decoded + "'");
        }
        const std::string decoded_skip = tok.decode(want_special, true);
        if (decoded_skip == c["decoded_skip"].get<std::string>()) {
            ++skip_ok;
        } else if (failures.size() < 10) {
            failures.push_back("decode skip " + text + ": want '" +
                               c["decoded_skip"].get<std::string>() + "' got '" + decoded_skip +
                               "'");
        }
        // Where Hugging Face round-trips, so must we.
        if (c["decoded"].get<std::string>() == text) {
            if (tok.decode(got, false) == text) {
                ++roundtrip;
            } else if (failures.size() < 10) {
                failures.push_back("round trip " + text);
            }
        } else {
            ++roundtrip;
        }
        bool valid1 = false, valid2 = false;
        const bool s1 =
            stream_decode(tok, want_special, false, valid1) == tok.decode(want_special, false);
        const bool s2 = stream_decode(tok, want_special, true, valid2) == decoded_skip;
        if (s1 && s2 && valid1 && valid2) {
            ++stream_ok;
        } else if (failures.size() < 10) {
            failures.push_back("streaming " + text);
        }
    }
    std::printf("%s: %d cases: ids %d, ids+special %d, decode %d, decode skip-special %d, round "
                "trip %d, streaming %d\n",
                m.c_str(), total, ids_ok, special_ok, decode_ok, skip_ok, roundtrip, stream_ok);
    for (const auto& f : failures)
        std::fprintf(stderr, "%s\n", f.c_str());
    MT_CHECK(total > 500);
    MT_COMPARE(ids_ok, total);
    MT_COMPARE(special_ok, total);
    MT_COMPARE(decode_ok, total);
    MT_COMPARE(skip_ok, total);
    MT_COMPARE(roundtrip, total);
    MT_COMPARE(stream_ok, total);
}

MT_TEST(files_metadata) {
    Loaded* q = load("qwen3");
    Loaded* l2 = load("llama2");
    Loaded* l3 = load("llama3_1");
    MT_REQUIRE(q && l2 && l3);
    const auto& qd = q->files.data;
    MT_COMPARE(qd.kind, TokenizerData::Kind::ByteLevelBpe);
    MT_COMPARE(qd.pre_tokenizer, std::string("qwen2"));
    MT_CHECK(qd.nfc.value_or(false));
    MT_CHECK(!qd.add_bos);
    MT_COMPARE(qd.tokens[static_cast<std::size_t>(qd.eos_id)], std::string("<|im_end|>"));
    MT_CHECK(q->files.chat_template &&
             q->files.chat_template->find("<|im_start|>") != std::string::npos);
    const auto stops = q->tokenizer->stop_ids();
    MT_CHECK(std::find(stops.begin(), stops.end(), 151645) != stops.end()); // <|im_end|>
    MT_CHECK(std::find(stops.begin(), stops.end(), 151643) != stops.end()); // <|endoftext|>

    const auto& ld = l2->files.data;
    MT_COMPARE(ld.kind, TokenizerData::Kind::SentencePieceBpe);
    MT_CHECK(ld.add_bos && !ld.add_eos);
    MT_COMPARE(ld.bos_id, 1);
    MT_COMPARE(ld.eos_id, 2);
    MT_COMPARE(ld.unk_id, 0);
    MT_CHECK(l2->tokenizer->uses_byte_fallback());
    MT_CHECK(!l2->files.chat_template.has_value());
    MT_COMPARE(ld.token_types[3], 6); // <0x00>

    const auto& l3d = l3->files.data;
    MT_COMPARE(l3d.pre_tokenizer, std::string("llama3"));
    MT_CHECK(l3d.add_bos);
    MT_COMPARE(l3d.bos_id, 128000);
    MT_COMPARE(l3d.tokens[static_cast<std::size_t>(l3d.eos_id)], std::string("<|eot_id|>"));
    MT_CHECK(l3d.ignore_merges.value_or(false));
    const auto s3 = l3->tokenizer->stop_ids();
    MT_COMPARE(l3d.eos_id, 128009);                                // <|eot_id|>
    MT_CHECK(std::find(s3.begin(), s3.end(), 128001) != s3.end()); // <|end_of_text|>
    MT_CHECK(l3->tokenizer->is_special(128000));
    MT_CHECK(!l3->tokenizer->is_special(1000));
}

// Gemma 3 (SentencePiece, Replace " " -> "▁" without a prefix, byte fallback) and DeepSeek-V3
// (three Splits + ByteLevel: the general pipeline, named as its GGUF tokenizer.ggml.pre).
MT_TEST(new_families_metadata) {
    Loaded* g = load("gemma3");
    Loaded* ds = load("deepseek_v3");
    Loaded* phi4 = load("phi4_mini_style");
    MT_REQUIRE(g && ds && phi4);
    const auto& gd = g->files.data;
    MT_COMPARE(gd.kind, TokenizerData::Kind::SentencePieceBpe);
    MT_CHECK(!gd.add_space_prefix);
    MT_CHECK(gd.add_bos && !gd.add_eos);
    MT_COMPARE(gd.tokens[static_cast<std::size_t>(gd.bos_id)], std::string("<bos>"));
    MT_COMPARE(gd.tokens[static_cast<std::size_t>(gd.eos_id)], std::string("<end_of_turn>"));
    MT_CHECK(g->tokenizer->uses_byte_fallback());
    MT_CHECK(gd.pre_tokenizer_steps.has_value()); // Split on " ", MergedWithPrevious
    MT_CHECK(g->files.chat_template &&
             g->files.chat_template->find("<start_of_turn>") != std::string::npos);
    const auto& dd = ds->files.data;
    MT_COMPARE(dd.kind, TokenizerData::Kind::ByteLevelBpe);
    MT_COMPARE(dd.pre_tokenizer, std::string("deepseek-v3"));
    MT_REQUIRE(dd.pre_tokenizer_steps.has_value());
    MT_COMPARE(dd.pre_tokenizer_steps->size(), std::size_t(4));
    MT_CHECK(dd.add_bos); // tokenizer_config.json add_bos_token
    MT_COMPARE(dd.bos_id, 0);
    MT_COMPARE(dd.eos_id, 1);
    MT_CHECK(ds->files.chat_template.has_value());
    MT_COMPARE(phi4->files.data.pre_tokenizer, std::string("gpt-4o"));
}

// The GGUF loader provides tokens + merges + token_types (no added_tokens, no decoder, no
// tokenizer.json options): the same ids must come out.
std::vector<ModelRow> gguf_rows() {
    auto rows = real_models_rows();
    rows.push_back({"phi4_mini_style"}); // tokenizer.ggml.pre "gpt-4o"
    return rows;
}

MT_TEST_TABLE(gguf_style_tokenizer, ModelRow, gguf_rows()) {
    const std::string m = row.name;
    Loaded* l = load(m);
    MT_REQUIRE(l);
    const TokenizerData& full = l->files.data;
    TokenizerData g;
    g.kind = full.kind;
    g.tokens = full.tokens;
    g.merges = full.merges;
    g.token_types = full.token_types; // 3 control / 4 user-defined / 6 byte, as GGUF stores them
    g.pre_tokenizer = full.pre_tokenizer; // tokenizer.ggml.pre
    g.add_bos = full.add_bos;
    g.add_eos = full.add_eos;
    // tokenizer.ggml.add_space_prefix: true for Llama 2, false for Gemma.
    g.add_space_prefix =
        full.kind == TokenizerData::Kind::SentencePieceBpe && full.add_space_prefix;
    g.bos_id = full.bos_id;
    g.eos_id = full.eos_id;
    g.unk_id = full.unk_id;
    g.pad_id = full.pad_id;
    auto made = Tokenizer::create(g);
    MT_REQUIRE_MSG(made, made ? "" : made.message());
    const Tokenizer& gt = *made.value();
    const nlohmann::json ref =
        test::load_json(test::assets_dir() + "/reference/tokenizer/" + m + ".json");
    MT_REQUIRE(ref.is_object());
    int total = 0, same = 0, dec_same = 0;
    for (const auto& c : ref["cases"]) {
        ++total;
        const std::string text = c["text"].get<std::string>();
        const auto want = with_config_bos(row, gt, ids_of(c["ids_special"]));
        if (gt.encode(text, true) == want)
            ++same;
        else if (same + 5 > total)
            std::fprintf(stderr, "gguf-style %s differs: %s\n", m.c_str(), text.c_str());
        if (gt.decode(want, false) == c["decoded"].get<std::string>() || want != ids_of(c["ids"]))
            ++dec_same;
    }
    std::printf("%s gguf-style: %d/%d ids equal to Hugging Face\n", m.c_str(), same, total);
    MT_COMPARE(same, total);
}

// A figure, not an assertion on time: encode throughput on ~1 MB of mixed text.
MT_TEST_TABLE(throughput, ModelRow, real_models_rows()) {
    const std::string model = row.name;
    Loaded* l = load(model);
    MT_REQUIRE(l);
    const nlohmann::json ref =
        test::load_json(test::assets_dir() + "/reference/tokenizer/" + model + ".json");
    MT_REQUIRE(ref.is_object());
    std::string text;
    std::vector<std::int32_t> expected;
    while (text.size() < (1u << 20)) {
        for (const auto& c : ref["cases"]) {
            text += c["text"].get<std::string>();
            text += "\n";
        }
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto ids = l->tokenizer->encode(text, false);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto t1 = std::chrono::steady_clock::now();
    const std::string back = l->tokenizer->decode(ids);
    const double ds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    std::printf("%s: encode %.2f MB in %.3f s = %.1f MB/s (%zu tokens); decode %.1f MB/s\n",
                model.c_str(), text.size() / 1e6, s, text.size() / 1e6 / s, ids.size(),
                back.size() / 1e6 / ds);
    MT_CHECK(!ids.empty());
    // Cold cache: ~1 MB of random words (almost all distinct), mixed scripts.
    std::string words;
    std::uint32_t x = 2463534242u;
    const char* alphabets[] = {"abcdefghijklmnopqrstuvwxyz",
                               "\xD0\xB0\xD0\xB1\xD0\xB2\xD0\xB3\xD0\xB4\xD0\xB5"};
    while (words.size() < (1u << 20)) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        const int len = 3 + static_cast<int>(x % 10);
        const bool cyr = (x >> 8) % 5 == 0;
        for (int i = 0; i < len; ++i) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            if (cyr) {
                words.append(alphabets[1] + 2 * (x % 6), 2);
            } else {
                words.push_back(alphabets[0][x % 26]);
            }
        }
        words.push_back((x >> 4) % 9 == 0 ? '\n' : ' ');
    }
    const auto t2 = std::chrono::steady_clock::now();
    const auto wids = l->tokenizer->encode(words, false);
    const double ws = std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count();
    std::printf("%s: encode %.2f MB of random words in %.3f s = %.1f MB/s (%zu tokens)\n",
                model.c_str(), words.size() / 1e6, ws, words.size() / 1e6 / ws, wids.size());
    MT_COMPARE(l->tokenizer->decode(wids), words);
}

MINI_TEST_MAIN()
