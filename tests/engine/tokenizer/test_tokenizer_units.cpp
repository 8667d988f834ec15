// Unit tests of the tokenizer building blocks: UTF-8 handling, NFC, the byte-level table,
// added-token flags, invalid input, streaming of split characters, tokenizer file errors, and
// the general pipeline's pieces (Split behaviours, regex rewriting, GGUF pre values).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h> // getpid

#include "engine/tokenizer/added_token_matcher.h"
#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/hf_regex.h"
#include "engine/tokenizer/nfc.h"
#include "engine/tokenizer/normalizer.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/pre_tokenizer_sequence.h"
#include "engine/tokenizer/streaming_decoder.h"
#include "engine/tokenizer/test_support.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_files.h"
#include "engine/tokenizer/utf8.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

// A tiny byte-level tokenizer: all 256 byte characters plus a few merges.
TokenizerData tiny_byte_level() {
    TokenizerData d;
    d.kind = TokenizerData::Kind::ByteLevelBpe;
    const auto& table = ByteLevelTable::instance();
    for (int b = 0; b < 256; ++b)
        d.tokens.push_back(table.encode_byte(static_cast<std::uint8_t>(b)));
    auto add = [&](const std::string& a, const std::string& b) {
        d.merges.emplace_back(a, b);
        d.tokens.push_back(a + b);
    };
    add("h", "e");               // 256
    add("l", "l");               // 257
    add("he", "ll");             // 258
    add("hell", "o");            // 259
    add("\xC4\xA0", "w");        // "Ġw" 260
    d.tokens.push_back("<|x|>"); // 261
    d.tokens.push_back("<eos>"); // 262
    d.added_tokens.push_back({261, "<|x|>", true, false, false, false, false});
    d.added_tokens.push_back({262, "<eos>", true, false, false, false, false});
    d.eos_id = 262;
    d.pre_tokenizer = "gpt2";
    return d;
}

std::string write_temp(const std::string& name, const std::string& content) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("llmwb-tok-" + std::to_string(::getpid()) + "-" + name);
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
}

} // namespace

namespace {

struct Utf8Row {
    std::string name;
    std::string input;
    std::string expected;
};

std::vector<Utf8Row> utf8_lossy_rows() {
    return {
        {"ascii", "abc", "abc"},
        {"valid 4-byte", "\xF0\x9F\x99\x82", "\xF0\x9F\x99\x82"},
        {"lone continuation", "a\x80z", "a\xEF\xBF\xBDz"},
        {"truncated 3-byte", "\xE4\xB8", "\xEF\xBF\xBD"},
        {"surrogate", "\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
        {"overlong", "\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},
        {"bad second byte", "\xE4Z", "\xEF\xBF\xBDZ"},
        {"above U+10FFFF", "\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
    };
}

struct AddedTokenRow {
    std::string name;
    bool lstrip;
    bool rstrip;
    bool single_word;
    std::string text;
    std::string expected; // pieces, added token in [brackets]
};

std::vector<AddedTokenRow> added_token_flag_rows() {
    return {
        {"plain", false, false, false, "a <t> b", "a |[<t>]| b"},
        {"lstrip", true, false, false, "a  <t> b", "a|[  <t>]| b"},
        {"rstrip", false, true, false, "a <t>  b", "a |[<t>  ]|b"},
        {"both", true, true, false, "a\t<t>\n b", "a|[\t<t>\n ]|b"},
        {"single word ok", false, false, true, "a <t> b", "a |[<t>]| b"},
        {"single word glued", false, false, true, "a<t> b", "a<t> b"},
        {"single word glued right", false, false, true, "x <t>y", "x <t>y"},
        {"longest wins", false, false, false, "<tt>", "[<tt>]"},
    };
}

struct BrokenFileRow {
    std::string name;
    std::string json;
    std::string message; // part of the expected error
};

std::vector<BrokenFileRow> broken_file_rows() {
    const std::string ok_tail =
        R"(, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}})";
    return {
        {"not json", "{", "invalid JSON"},
        {"a million levels deep", std::string(1000000, '[') + std::string(1000000, ']'),
         "nested deeper than 128 levels"},
        {"array", "[]", "not a JSON object"},
        {"no model", "{}", "model"},
        {"wordpiece", R"({"model": {"type": "WordPiece", "vocab": {}}})", "model.type"},
        {"vocab not object", R"({"model": {"type": "BPE", "vocab": []}})", "model.vocab"},
        {"negative id", R"({"model": {"type": "BPE", "vocab": {"a": -1}}})", "out of range"},
        {"huge id", R"({"model": {"type": "BPE", "vocab": {"a": 99999999999}}})", "out of range"},
        {"duplicate id", R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}}})",
         "duplicate id"},
        {"bad merge", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]})" + ok_tail,
         "malformed merge"},
        {"merge type", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [1]})" + ok_tail,
         "model.merges"},
        {"unk missing",
         R"({"model": {"type": "BPE", "vocab": {"a": 0}, "unk_token": "<unk>"})" + ok_tail,
         "unk_token"},
        {"added id",
         R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "added_tokens": [{"id": -5, "content": "x"}])" +
             ok_tail,
         "added_tokens.id"},
        {"normalizer",
         R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "normalizer": {"type": "Precompiled"})" +
             ok_tail,
         "unsupported normalizer type 'Precompiled'"},
        {"replace without pattern",
         R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "normalizer": {"type": "Replace", "content": "x"})" +
             ok_tail,
         "normalizer.Replace.pattern"},
        {"pre-tokenizer type",
         R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "UnicodeScripts"}]}})",
         "unsupported pre-tokenizer type 'UnicodeScripts'"},
        {"no kind", R"({"model": {"type": "BPE", "vocab": {"a": 0}}})", "cannot tell"},
        {"split behavior",
         R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways"}})",
         "pre_tokenizer.Split.behavior: unknown value 'Sideways'"},
        {"bool type",
         R"({"model": {"type": "BPE", "vocab": {"a": 0}, "byte_fallback": "yes"})" + ok_tail,
         "byte_fallback"},
    };
}

} // namespace

MT_TEST_TABLE(utf8_lossy, Utf8Row, utf8_lossy_rows()) {
    const std::string& input = row.input;
    const std::string& expected = row.expected;
    const std::string out = utf8::to_valid_lossy(std::string_view(input));
    MT_COMPARE(out, expected);
    MT_COMPARE(utf8::is_valid(std::string_view(input)), input == expected);
}

// NFC against Python's unicodedata (reference written by generate-reference.sh).
MT_TEST(nfc_matches_python) {
    const std::string path = test::assets_dir() + "/reference/tokenizer/nfc.json";
    const auto ref = test::load_json(path);
    MT_REQUIRE_MSG(ref.is_object(), "missing " + path + " (run scripts/fetch-test-assets.sh)");
    int n = 0, ok = 0;
    for (const auto& c : ref["cases"]) {
        ++n;
        const std::string got = nfc_normalize(c["text"].get<std::string>());
        if (got == c["nfc"].get<std::string>()) {
            ++ok;
        } else if (n - ok < 5) {
            std::fprintf(stderr, "NFC mismatch for %s\n", c["text"].get<std::string>().c_str());
        }
    }
    MT_CHECK(n >= 1000);
    MT_COMPARE(ok, n);
    MT_COMPARE(nfc_normalize("e\xCC\x81"), std::string("\xC3\xA9")); // e + U+0301 -> é
    MT_COMPARE(nfc_normalize("plain ascii"), std::string("plain ascii"));
    MT_COMPARE(nfc_normalize("a\xFF\xCC\x81"),
               std::string("a\xFF\xCC\x81")); // invalid byte blocks composition
}

MT_TEST(byte_level_table) {
    const auto& t = ByteLevelTable::instance();
    MT_COMPARE(t.encode_byte(' '), std::string("\xC4\xA0"));  // Ġ
    MT_COMPARE(t.encode_byte('\n'), std::string("\xC4\x8A")); // Ċ
    MT_COMPARE(t.encode_byte('A'), std::string("A"));
    std::string all, mapped, back;
    for (int b = 0; b < 256; ++b)
        all.push_back(static_cast<char>(b));
    t.encode(all, mapped);
    MT_CHECK(t.decode(mapped, back));
    MT_COMPARE(back, all);
    std::string out;
    MT_CHECK(!t.decode("a b", out)); // ' ' is not a mapped character
    MT_CHECK(out.empty());
}

MT_TEST(bpe_merges_by_rank) {
    auto tok = Tokenizer::create(tiny_byte_level());
    MT_REQUIRE_MSG(tok, tok ? "" : tok.message());
    MT_COMPARE(tok.value()->encode("hello", false), (std::vector<std::int32_t>{259}));
    MT_COMPARE(tok.value()->encode("hello world", false),
               (std::vector<std::int32_t>{259, 260, 'o', 'r', 'l', 'd'}));
    MT_COMPARE(tok.value()->encode("he<|x|>llo", false),
               (std::vector<std::int32_t>{256, 261, 257, 'o'}));
    MT_COMPARE(tok.value()->decode(std::vector<std::int32_t>{259, 261, 260}),
               std::string("hello<|x|> w"));
    MT_COMPARE(tok.value()->decode(std::vector<std::int32_t>{259, 261, 260}, true),
               std::string("hello w"));
    MT_COMPARE(tok.value()->stop_ids(), (std::vector<std::int32_t>{262}));
}

// Invalid UTF-8 never crashes; byte-level BPE keeps the raw bytes (token_bytes round trip).
MT_TEST(invalid_utf8_input) {
    auto tok = Tokenizer::create(tiny_byte_level());
    MT_REQUIRE(tok);
    const std::string bad = "ok \xFF\xFE \xE4\xB8 end\x80";
    const auto ids = tok.value()->encode(bad, false);
    std::string bytes;
    for (auto id : ids)
        bytes += tok.value()->token_bytes(id);
    MT_COMPARE(bytes, bad);
    const std::string text = tok.value()->decode(ids);
    MT_CHECK(utf8::is_valid(text));
    MT_COMPARE(text, utf8::to_valid_lossy(bad));
    std::vector<std::string_view> pieces;
    split_builtin(BuiltinPattern::Llama3, bad, pieces);
    std::string joined;
    for (auto p : pieces)
        joined += p;
    MT_COMPARE(joined, bad);
}

// An emoji split over byte-level tokens is held back until complete.
MT_TEST(streaming_holds_partial_characters) {
    auto made = Tokenizer::create(tiny_byte_level());
    MT_REQUIRE(made);
    const Tokenizer& tok = *made.value();
    const std::string emoji = "\xF0\x9F\x99\x82";
    std::vector<std::int32_t> ids = {'a'};
    for (char c : emoji)
        ids.push_back(static_cast<std::uint8_t>(c) >= 0x80 ? tok.encode(std::string(1, c), false)[0]
                                                           : c);
    ids.push_back('b');
    StreamingDecoder dec(tok);
    MT_COMPARE(dec.push(ids[0]), std::string("a"));
    MT_COMPARE(dec.push(ids[1]), std::string());
    MT_COMPARE(dec.push(ids[2]), std::string());
    MT_COMPARE(dec.push(ids[3]), std::string());
    MT_COMPARE(dec.push(ids[4]), emoji);
    MT_COMPARE(dec.push(ids[5]), std::string("b"));
    MT_COMPARE(dec.push(ids[1]), std::string());
    MT_COMPARE(dec.flush(), std::string("\xEF\xBF\xBD")); // an unfinished sequence at the end
}

MT_TEST_TABLE(added_token_flags, AddedTokenRow, added_token_flag_rows()) {
    std::vector<TokenizerData::AddedToken> tokens = {
        {7, "<t>", true, row.lstrip, row.rstrip, false, row.single_word},
        {8, "<tt>", true, false, false, false, false}};
    AddedTokenMatcher m(tokens);
    const std::string& s = row.text;
    std::vector<AddedTokenMatcher::Piece> pieces;
    m.split(s, pieces);
    std::string parts;
    for (size_t i = 0; i < pieces.size(); ++i) {
        const auto& p = pieces[i];
        const std::string t = s.substr(p.begin, p.end - p.begin);
        parts += (i ? "|" : "") + (p.id >= 0 ? "[" + t + "]" : t);
    }
    MT_COMPARE(parts, row.expected);
}

MT_TEST(unknown_regex) {
    auto pt = PreTokenizer::create("", "[a-z]+");
    if (!pre_tokenizer_has_pcre2()) {
        MT_CHECK(!pt);
        MT_CHECK(pt.message().find("[a-z]+") != std::string::npos);
        return;
    }
    MT_REQUIRE_MSG(pt, pt ? "" : pt.message());
    std::vector<std::string_view> out;
    pt.value()->split("ab, cd\xFF"
                      "e",
                      out);
    std::string joined;
    for (size_t i = 0; i < out.size(); ++i)
        joined += (i ? "|" : "") + std::string(out[i]);
    MT_COMPARE(joined, std::string("ab|, |cd|\xFF|e"));
    MT_CHECK(!PreTokenizer::create("", "(unclosed"));
}

MT_TEST_TABLE(broken_files, BrokenFileRow, broken_file_rows()) {
    const std::string path = write_temp("tokenizer.json", row.json);
    auto r = read_tokenizer_files(path, "");
    std::filesystem::remove(path);
    MT_REQUIRE(!r);
    MT_CHECK_MSG(r.message().find(path) != std::string::npos, r.message());
    MT_CHECK_MSG(r.message().find(row.message) != std::string::npos, r.message());
    MT_CHECK(r.message().find('\n') == std::string::npos);
}

MT_TEST(missing_file) {
    auto r = read_tokenizer_files("/nonexistent/tokenizer.json", "");
    MT_REQUIRE(!r);
    MT_CHECK(r.message().find("/nonexistent/tokenizer.json") != std::string::npos);
}

// Merges that refer to tokens outside the vocabulary, and bad ids, are create() errors.
// (Under Qt Test this never ran: a slot named *_data is taken for a data function.)
MT_TEST(invalid_tokenizer_data) {
    TokenizerData d = tiny_byte_level();
    d.merges.emplace_back("zz", "q");
    MT_CHECK(!Tokenizer::create(d));
    d = tiny_byte_level();
    d.eos_id = 100000;
    MT_CHECK(!Tokenizer::create(d));
    d = tiny_byte_level();
    d.tokens.resize(10);
    d.added_tokens.clear();
    d.merges.clear();
    d.eos_id = -1; // was cut off with the tokens: an id error would come first
    auto r = Tokenizer::create(d);
    MT_REQUIRE(!r); // byte-level vocabulary lacks most bytes
    MT_CHECK_MSG(r.message().find("byte") != std::string::npos, r.message());
}

MT_TEST(config_variants) {
    const std::string tj = write_temp(
        "t.json",
        R"({"model": {"type": "BPE", "vocab": {"a": 0, "<s>": 1, "</s>": 2, "<|eot_id|>": 3}},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}})");
    const std::string cj =
        write_temp("c.json",
                   R"({"bos_token": {"content": "<s>"}, "eos_token": "</s>", "add_bos_token": true,
            "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})");
    auto r = read_tokenizer_files(tj, cj);
    MT_REQUIRE_MSG(r, r ? "" : r.message());
    MT_COMPARE(r->data.bos_id, 1);
    MT_COMPARE(r->data.eos_id, 2);
    MT_CHECK(r->data.add_bos);
    MT_COMPARE(r->chat_template.value_or(""), std::string("D"));
    MT_COMPARE(r->data.eot_ids, (std::vector<std::int32_t>{3}));
    const std::string bad = write_temp("c2.json", R"({"eos_token": "<missing>"})");
    auto e = read_tokenizer_files(tj, bad);
    MT_REQUIRE(!e);
    MT_CHECK(e.message().find("eos_token") != std::string::npos);
    std::filesystem::remove(tj);
    std::filesystem::remove(cj);
    std::filesystem::remove(bad);
}

namespace {

struct BehaviorRow {
    std::string name;
    TokenizerData::PreTokenizerStep::Behavior behavior;
    bool invert;
    std::string expected; // pieces joined with '|'
};

std::vector<BehaviorRow> behavior_rows() {
    using B = TokenizerData::PreTokenizerStep::Behavior;
    // The example of the tokenizers documentation (SplitDelimiterBehavior): "the-final--countdown"
    // split on "-".
    return {{"Removed", B::Removed, false, "the|final|countdown"},
            {"Isolated", B::Isolated, false, "the|-|final|-|-|countdown"},
            {"MergedWithPrevious", B::MergedWithPrevious, false, "the-|final-|-|countdown"},
            {"MergedWithNext", B::MergedWithNext, false, "the|-final|-|-countdown"},
            {"Contiguous", B::Contiguous, false, "the|-|final|--|countdown"},
            // invert: the words are the matches, the dashes what lies between them.
            {"Removed inverted", B::Removed, true, "the|final|countdown"},
            {"MergedWithNext inverted", B::MergedWithNext, true, "the|-final|--countdown"}};
}

std::string split_joined(const std::vector<TokenizerData::PreTokenizerStep>& steps,
                         std::string_view text) {
    auto seq = PreTokenizerSequence::create(steps);
    if (!seq)
        return "error: " + seq.message();
    std::vector<std::string> out;
    seq.value()->split(text, true, out);
    std::string joined;
    for (std::size_t i = 0; i < out.size(); ++i)
        joined += (i ? "|" : "") + out[i];
    return joined;
}

} // namespace

MT_TEST_TABLE(split_behaviors, BehaviorRow, behavior_rows()) {
    for (bool regex : {false, true}) {
        TokenizerData::PreTokenizerStep s;
        s.type = TokenizerData::PreTokenizerStep::Type::Split;
        s.pattern = row.invert ? (regex ? "[a-z]+" : "") : "-";
        if (row.invert && !regex)
            continue; // a String pattern cannot match the words
        s.regex = regex;
        s.behavior = row.behavior;
        s.invert = row.invert;
        MT_COMPARE(split_joined({s}, "the-final--countdown"), row.expected);
    }
}

// Steps apply in order, each to every piece of the previous one; Metaspace "first" prepends
// only to the piece at offset 0 of the text.
MT_TEST(sequence_of_steps) {
    using S = TokenizerData::PreTokenizerStep;
    S digits;
    digits.type = S::Type::Digits;
    digits.individual_digits = true;
    S ws;
    ws.type = S::Type::WhitespaceSplit;
    S meta;
    meta.type = S::Type::Metaspace;
    meta.prepend_scheme = TokenizerData::PrependScheme::First;
    MT_COMPARE(split_joined({ws, digits}, " ab12  c3 "), std::string("ab|1|2|c|3"));
    MT_COMPARE(split_joined({digits, meta}, "a 12 b"), std::string("\xE2\x96\x81"
                                                                   "a|\xE2\x96\x81|1|2|\xE2\x96\x81"
                                                                   "b"));
    digits.individual_digits = false;
    MT_COMPARE(split_joined({digits}, "x123y45"), std::string("x|123|y|45"));
    S punct;
    punct.type = S::Type::Punctuation;
    MT_COMPARE(split_joined({punct}, "a,,b!\xC2\xBF"), std::string("a|,|,|b|!|\xC2\xBF"));
    S white;
    white.type = S::Type::Whitespace;
    MT_COMPARE(split_joined({white}, "hi, you_2!! "), std::string("hi|,|you_2|!!"));
    // Nothing of the text is lost or duplicated by Isolated steps (only reordered into pieces).
    S byte_level;
    byte_level.type = S::Type::ByteLevel;
    byte_level.add_prefix_space = true;
    byte_level.use_regex = true;
    MT_COMPARE(split_joined({digits, byte_level}, "ab12 cd"), std::string(" ab| 12| cd"));
}

MT_TEST(regex_space_rewrite) {
    MT_COMPARE(rewrite_space_escapes(R"(\s+(?!\S)|[^\s\p{L}]|\\s)"),
               std::string(R"(\p{White_Space}+(?!\P{White_Space})|[^\p{White_Space}\p{L}]|\\s)"));
    if (!pre_tokenizer_has_pcre2())
        return;
    // U+180E is not White_Space (Oniguruma's \s); PCRE2's own \s would take it.
    TokenizerData::PreTokenizerStep s;
    s.pattern = R"(\s+)";
    MT_COMPARE(split_joined({s}, "a \xE1\xA0\x8E b"), std::string("a| |\xE1\xA0\x8E| |b"));
    s.pattern = "(unclosed";
    const std::string err = split_joined({s}, "x");
    MT_CHECK_MSG(err.find("pre_tokenizer.Split") != std::string::npos &&
                     err.find("(unclosed") != std::string::npos,
                 err);
}

// GGUF tokenizer.ggml.pre: the multi-step values map to steps; an unknown value is refused by
// name (no silent fallback to another split).
MT_TEST(gguf_pre_values) {
    MT_CHECK(gguf_pre_tokenizer_steps("deepseek-v3").has_value());
    MT_COMPARE(gguf_pre_tokenizer_steps("deepseek-v3")->size(), std::size_t(4));
    MT_CHECK(gguf_pre_tokenizer_steps("gpt-4o").has_value());
    MT_CHECK(!gguf_pre_tokenizer_steps("llama3").has_value());
    MT_COMPARE(gguf_pre_tokenizer_name(*gguf_pre_tokenizer_steps("deepseek-v3")),
               std::string("deepseek-v3"));
    TokenizerData d = tiny_byte_level();
    d.pre_tokenizer = "deepseek-v3";
    auto ok = Tokenizer::create(d);
    MT_REQUIRE_MSG(ok, ok ? "" : ok.message());
    d.pre_tokenizer = "mystery-pre";
    auto bad = Tokenizer::create(d);
    MT_REQUIRE(!bad);
    MT_CHECK_MSG(bad.message().find("mystery-pre") != std::string::npos, bad.message());
}

MT_TEST(normalizer_steps) {
    using N = TokenizerData::NormalizerStep;
    std::vector<N> steps(4);
    steps[0].type = N::Type::Strip;
    steps[0].left = steps[0].right = true;
    steps[1].type = N::Type::Replace;
    steps[1].pattern = "a";
    steps[1].content = "bb";
    steps[2].type = N::Type::Prepend;
    steps[2].content = "<";
    steps[3].type = N::Type::NFC;
    auto n = Normalizer::create(steps);
    MT_REQUIRE(n);
    MT_COMPARE(n.value()->normalize("\xE3\x80\x80 cafe\xCC\x81 a\n"),
               std::string("<cbbf\xC3\xA9 bb"));
    MT_COMPARE(n.value()->normalize(" \t "), std::string()); // empty: nothing prepended
    // Hostile chains: too many steps are refused; a doubling chain stops growing.
    MT_CHECK(!Normalizer::create(std::vector<N>(Normalizer::kMaxSteps + 1)));
    std::vector<N> doubling(40);
    for (N& d : doubling) {
        d.type = N::Type::Replace;
        d.pattern = "a";
        d.content = "aa";
    }
    auto blowup = Normalizer::create(doubling);
    MT_REQUIRE(blowup);
    const std::string grown = blowup.value()->normalize("aaaa");
    MT_CHECK(grown.size() <= 2 * (Normalizer::kMaxGrowth * 4 + Normalizer::kMaxExtraBytes));
    MT_CHECK(grown.size() > Normalizer::kMaxExtraBytes);
    MT_CHECK(!PreTokenizerSequence::create(
        std::vector<TokenizerData::PreTokenizerStep>(PreTokenizerSequence::kMaxSteps + 1)));
    if (!normalizer_has_icu())
        return;
    std::string out;
    MT_CHECK(unicode_normalize("\xEF\xAC\x81\xE2\x91\xA0", NormalForm::NFKC, out)); // ﬁ①
    MT_COMPARE(out, std::string("fi1"));
    MT_CHECK(unicode_lowercase("\xC4\xB0\xCE\xA3X\xFF", out)); // İΣX + an invalid byte
    MT_COMPARE(out, std::string("i\xCC\x87\xCF\x83x\xFF"));
}

MINI_TEST_MAIN()
