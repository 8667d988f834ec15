// Unit tests of the tokenizer building blocks: UTF-8 handling, NFC, the byte-level table,
// added-token flags, invalid input, streaming of split characters, and tokenizer file errors.
#include <QtTest>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/tokenizer/added_token_matcher.h"
#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/nfc.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/streaming_decoder.h"
#include "engine/tokenizer/test_support.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_files.h"
#include "engine/tokenizer/utf8.h"

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

class TestTokenizerUnits : public QObject {
    Q_OBJECT

  private slots:
    void utf8_lossy_data() {
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<QByteArray>("expected");
        QTest::newRow("ascii") << QByteArray("abc") << QByteArray("abc");
        QTest::newRow("valid 4-byte")
            << QByteArray("\xF0\x9F\x99\x82") << QByteArray("\xF0\x9F\x99\x82");
        QTest::newRow("lone continuation") << QByteArray("a\x80z") << QByteArray("a\xEF\xBF\xBDz");
        QTest::newRow("truncated 3-byte") << QByteArray("\xE4\xB8") << QByteArray("\xEF\xBF\xBD");
        QTest::newRow("surrogate")
            << QByteArray("\xED\xA0\x80") << QByteArray("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
        QTest::newRow("overlong") << QByteArray("\xC0\xAF")
                                  << QByteArray("\xEF\xBF\xBD\xEF\xBF\xBD");
        QTest::newRow("bad second byte") << QByteArray("\xE4Z") << QByteArray("\xEF\xBF\xBDZ");
        QTest::newRow("above U+10FFFF")
            << QByteArray("\xF4\x90\x80\x80")
            << QByteArray("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    }
    void utf8_lossy() {
        QFETCH(QByteArray, input);
        QFETCH(QByteArray, expected);
        const std::string out =
            utf8::to_valid_lossy(std::string_view(input.constData(), input.size()));
        QCOMPARE(QByteArray(out.data(), static_cast<int>(out.size())), expected);
        QCOMPARE(utf8::is_valid(std::string_view(input.constData(), input.size())),
                 input == expected);
    }

    // NFC against Python's unicodedata (reference written by generate-reference.sh).
    void nfc_matches_python() {
        const std::string path = test::assets_dir() + "/reference/tokenizer/nfc.json";
        const auto ref = test::load_json(path);
        QVERIFY2(ref.is_object(), qPrintable("missing " + QString::fromStdString(path) +
                                             " (run scripts/fetch-test-assets.sh)"));
        int n = 0, ok = 0;
        for (const auto& c : ref["cases"]) {
            ++n;
            const std::string got = nfc_normalize(c["text"].get<std::string>());
            if (got == c["nfc"].get<std::string>()) {
                ++ok;
            } else if (n - ok < 5) {
                qWarning("NFC mismatch for %s", c["text"].get<std::string>().c_str());
            }
        }
        QVERIFY(n >= 1000);
        QCOMPARE(ok, n);
        QCOMPARE(nfc_normalize("e\xCC\x81"), std::string("\xC3\xA9")); // e + U+0301 -> é
        QCOMPARE(nfc_normalize("plain ascii"), std::string("plain ascii"));
        QCOMPARE(nfc_normalize("a\xFF\xCC\x81"),
                 std::string("a\xFF\xCC\x81")); // invalid byte blocks composition
    }

    void byte_level_table() {
        const auto& t = ByteLevelTable::instance();
        QCOMPARE(t.encode_byte(' '), std::string("\xC4\xA0"));  // Ġ
        QCOMPARE(t.encode_byte('\n'), std::string("\xC4\x8A")); // Ċ
        QCOMPARE(t.encode_byte('A'), std::string("A"));
        std::string all, mapped, back;
        for (int b = 0; b < 256; ++b)
            all.push_back(static_cast<char>(b));
        t.encode(all, mapped);
        QVERIFY(t.decode(mapped, back));
        QCOMPARE(back, all);
        std::string out;
        QVERIFY(!t.decode("a b", out)); // ' ' is not a mapped character
        QVERIFY(out.empty());
    }

    void bpe_merges_by_rank() {
        auto tok = Tokenizer::create(tiny_byte_level());
        QVERIFY2(tok, tok ? "" : tok.message().c_str());
        QCOMPARE(tok.value()->encode("hello", false), (std::vector<std::int32_t>{259}));
        QCOMPARE(tok.value()->encode("hello world", false),
                 (std::vector<std::int32_t>{259, 260, 'o', 'r', 'l', 'd'}));
        QCOMPARE(tok.value()->encode("he<|x|>llo", false),
                 (std::vector<std::int32_t>{256, 261, 257, 'o'}));
        QCOMPARE(tok.value()->decode(std::vector<std::int32_t>{259, 261, 260}),
                 std::string("hello<|x|> w"));
        QCOMPARE(tok.value()->decode(std::vector<std::int32_t>{259, 261, 260}, true),
                 std::string("hello w"));
        QCOMPARE(tok.value()->stop_ids(), (std::vector<std::int32_t>{262}));
    }

    // Invalid UTF-8 never crashes; byte-level BPE keeps the raw bytes (token_bytes round trip).
    void invalid_utf8_input() {
        auto tok = Tokenizer::create(tiny_byte_level());
        QVERIFY(tok);
        const std::string bad = "ok \xFF\xFE \xE4\xB8 end\x80";
        const auto ids = tok.value()->encode(bad, false);
        std::string bytes;
        for (auto id : ids)
            bytes += tok.value()->token_bytes(id);
        QCOMPARE(bytes, bad);
        const std::string text = tok.value()->decode(ids);
        QVERIFY(utf8::is_valid(text));
        QCOMPARE(text, utf8::to_valid_lossy(bad));
        std::vector<std::string_view> pieces;
        split_builtin(BuiltinPattern::Llama3, bad, pieces);
        std::string joined;
        for (auto p : pieces)
            joined += p;
        QCOMPARE(joined, bad);
    }

    // An emoji split over byte-level tokens is held back until complete.
    void streaming_holds_partial_characters() {
        auto made = Tokenizer::create(tiny_byte_level());
        QVERIFY(made);
        const Tokenizer& tok = *made.value();
        const std::string emoji = "\xF0\x9F\x99\x82";
        std::vector<std::int32_t> ids = {'a'};
        for (char c : emoji)
            ids.push_back(
                static_cast<std::uint8_t>(c) >= 0x80 ? tok.encode(std::string(1, c), false)[0] : c);
        ids.push_back('b');
        StreamingDecoder dec(tok);
        QCOMPARE(dec.push(ids[0]), std::string("a"));
        QCOMPARE(dec.push(ids[1]), std::string());
        QCOMPARE(dec.push(ids[2]), std::string());
        QCOMPARE(dec.push(ids[3]), std::string());
        QCOMPARE(dec.push(ids[4]), emoji);
        QCOMPARE(dec.push(ids[5]), std::string("b"));
        QCOMPARE(dec.push(ids[1]), std::string());
        QCOMPARE(dec.flush(), std::string("\xEF\xBF\xBD")); // an unfinished sequence at the end
    }

    void added_token_flags_data() {
        QTest::addColumn<bool>("lstrip");
        QTest::addColumn<bool>("rstrip");
        QTest::addColumn<bool>("single_word");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected"); // pieces, added token in [brackets]
        QTest::newRow("plain") << false << false << false << "a <t> b"
                               << "a |[<t>]| b";
        QTest::newRow("lstrip") << true << false << false << "a  <t> b"
                                << "a|[  <t>]| b";
        QTest::newRow("rstrip") << false << true << false << "a <t>  b"
                                << "a |[<t>  ]|b";
        QTest::newRow("both") << true << true << false << "a\t<t>\n b"
                              << "a|[\t<t>\n ]|b";
        QTest::newRow("single word ok") << false << false << true << "a <t> b"
                                        << "a |[<t>]| b";
        QTest::newRow("single word glued") << false << false << true << "a<t> b"
                                           << "a<t> b";
        QTest::newRow("single word glued right") << false << false << true << "x <t>y"
                                                 << "x <t>y";
        QTest::newRow("longest wins") << false << false << false << "<tt>"
                                      << "[<tt>]";
    }
    void added_token_flags() {
        QFETCH(bool, lstrip);
        QFETCH(bool, rstrip);
        QFETCH(bool, single_word);
        QFETCH(QString, text);
        QFETCH(QString, expected);
        std::vector<TokenizerData::AddedToken> tokens = {
            {7, "<t>", true, lstrip, rstrip, false, single_word},
            {8, "<tt>", true, false, false, false, false}};
        AddedTokenMatcher m(tokens);
        const std::string s = text.toStdString();
        std::vector<AddedTokenMatcher::Piece> pieces;
        m.split(s, pieces);
        QStringList parts;
        for (const auto& p : pieces) {
            const QString t = QString::fromStdString(s.substr(p.begin, p.end - p.begin));
            parts << (p.id >= 0 ? "[" + t + "]" : t);
        }
        QCOMPARE(parts.join("|"), expected);
    }

    void unknown_regex() {
        auto pt = PreTokenizer::create("", "[a-z]+");
        if (!pre_tokenizer_has_pcre2()) {
            QVERIFY(!pt);
            QVERIFY(pt.message().find("[a-z]+") != std::string::npos);
            return;
        }
        QVERIFY2(pt, pt ? "" : pt.message().c_str());
        std::vector<std::string_view> out;
        pt.value()->split("ab, cd\xFF"
                          "e",
                          out);
        QStringList l;
        for (auto s : out)
            l << QString::fromLatin1(s.data(), static_cast<int>(s.size()));
        QCOMPARE(l.join("|"), QString::fromLatin1("ab|, |cd|\xFF|e"));
        QVERIFY(!PreTokenizer::create("", "(unclosed"));
    }

    void broken_files_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("message"); // part of the expected error
        const QString ok_tail =
            R"(, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}})";
        QTest::newRow("not json") << "{"
                                  << "invalid JSON";
        QTest::newRow("array") << "[]"
                               << "not a JSON object";
        QTest::newRow("no model") << "{}"
                                  << "model";
        QTest::newRow("wordpiece") << R"({"model": {"type": "WordPiece", "vocab": {}}})"
                                   << "model.type";
        QTest::newRow("vocab not object") << R"({"model": {"type": "BPE", "vocab": []}})"
                                          << "model.vocab";
        QTest::newRow("negative id") << R"({"model": {"type": "BPE", "vocab": {"a": -1}}})"
                                     << "out of range";
        QTest::newRow("huge id") << R"({"model": {"type": "BPE", "vocab": {"a": 99999999999}}})"
                                 << "out of range";
        QTest::newRow("duplicate id") << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}}})"
                                      << "duplicate id";
        QTest::newRow("bad merge")
            << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]})" + ok_tail
            << "malformed merge";
        QTest::newRow("merge type")
            << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [1]})" + ok_tail
            << "model.merges";
        QTest::newRow("unk missing")
            << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "unk_token": "<unk>"})" + ok_tail
            << "unk_token";
        QTest::newRow("added id")
            << R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "added_tokens": [{"id": -5, "content": "x"}])" +
                   ok_tail
            << "added_tokens.id";
        QTest::newRow("normalizer")
            << R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "normalizer": {"type": "Lowercase"})" +
                   ok_tail
            << "normalizer";
        QTest::newRow("no kind") << R"({"model": {"type": "BPE", "vocab": {"a": 0}}})"
                                 << "cannot tell";
        QTest::newRow("split behavior")
            << R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Removed"}})"
            << "Isolated";
        QTest::newRow("bool type")
            << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "byte_fallback": "yes"})" + ok_tail
            << "byte_fallback";
    }
    void broken_files() {
        QFETCH(QString, json);
        QFETCH(QString, message);
        const std::string path = write_temp("tokenizer.json", json.toStdString());
        auto r = read_tokenizer_files(path, "");
        std::filesystem::remove(path);
        QVERIFY(!r);
        QVERIFY2(r.message().find(path) != std::string::npos, r.message().c_str());
        QVERIFY2(r.message().find(message.toStdString()) != std::string::npos, r.message().c_str());
        QVERIFY(r.message().find('\n') == std::string::npos);
    }

    void missing_file() {
        auto r = read_tokenizer_files("/nonexistent/tokenizer.json", "");
        QVERIFY(!r);
        QVERIFY(r.message().find("/nonexistent/tokenizer.json") != std::string::npos);
    }

    // Merges that refer to tokens outside the vocabulary, and bad ids, are create() errors.
    void invalid_tokenizer_data() {
        TokenizerData d = tiny_byte_level();
        d.merges.emplace_back("zz", "q");
        QVERIFY(!Tokenizer::create(d));
        d = tiny_byte_level();
        d.eos_id = 100000;
        QVERIFY(!Tokenizer::create(d));
        d = tiny_byte_level();
        d.tokens.resize(10);
        d.added_tokens.clear();
        d.merges.clear();
        auto r = Tokenizer::create(d);
        QVERIFY(!r); // byte-level vocabulary lacks most bytes
        QVERIFY(r.message().find("byte") != std::string::npos);
    }

    void config_variants() {
        const std::string tj = write_temp(
            "t.json",
            R"({"model": {"type": "BPE", "vocab": {"a": 0, "<s>": 1, "</s>": 2, "<|eot_id|>": 3}},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}})");
        const std::string cj = write_temp(
            "c.json",
            R"({"bos_token": {"content": "<s>"}, "eos_token": "</s>", "add_bos_token": true,
            "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})");
        auto r = read_tokenizer_files(tj, cj);
        QVERIFY2(r, r ? "" : r.message().c_str());
        QCOMPARE(r->data.bos_id, 1);
        QCOMPARE(r->data.eos_id, 2);
        QVERIFY(r->data.add_bos);
        QCOMPARE(r->chat_template.value_or(""), std::string("D"));
        QCOMPARE(r->data.eot_ids, (std::vector<std::int32_t>{3}));
        const std::string bad = write_temp("c2.json", R"({"eos_token": "<missing>"})");
        auto e = read_tokenizer_files(tj, bad);
        QVERIFY(!e);
        QVERIFY(e.message().find("eos_token") != std::string::npos);
        std::filesystem::remove(tj);
        std::filesystem::remove(cj);
        std::filesystem::remove(bad);
    }
};

QTEST_APPLESS_MAIN(TestTokenizerUnits)
#include "test_tokenizer_units.moc"
