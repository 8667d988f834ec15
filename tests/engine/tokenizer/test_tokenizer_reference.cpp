// Token ids, decoded text and streamed text against the real Hugging Face tokenizers, for the
// Qwen3, Llama 2 and Llama 3.1 tokenizer.json files (references: generate-reference.sh).
#include <QtTest>

#include <chrono>
#include <map>
#include <memory>

#include "engine/tokenizer/streaming_decoder.h"
#include "engine/tokenizer/test_support.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_files.h"
#include "engine/tokenizer/utf8.h"

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
    const bool variant = model != "qwen3" && model != "llama2" && model != "llama3_1";
    const std::string dir = variant ? test::assets_dir() + "/reference/tokenizer/variants/" + model
                                    : test::assets_dir() + "/tokenizers/" + model;
    const auto t0 = std::chrono::steady_clock::now();
    auto files = read_tokenizer_files(dir + "/tokenizer.json",
                                      variant ? "" : dir + "/tokenizer_config.json");
    if (!files) {
        qWarning("%s", files.message().c_str());
        return nullptr;
    }
    const auto t1 = std::chrono::steady_clock::now();
    auto tok = Tokenizer::create(files->data);
    if (!tok) {
        qWarning("%s", tok.message().c_str());
        return nullptr;
    }
    const auto t2 = std::chrono::steady_clock::now();
    slot = std::make_unique<Loaded>();
    slot->files = std::move(files.value());
    slot->tokenizer = std::move(tok.value());
    slot->load_ms = std::chrono::duration<double, std::milli>(t2 - t0).count();
    qInfo("%s: read_tokenizer_files %.0f ms, Tokenizer::create %.0f ms", model.c_str(),
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

QString show(const std::vector<std::int32_t>& ids) {
    QStringList l;
    for (auto i : ids)
        l << QString::number(i);
    return "[" + l.join(",") + "]";
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

class TestTokenizerReference : public QObject {
    Q_OBJECT

  private slots:
    void hf_reference_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("qwen3") << "qwen3";
        QTest::newRow("llama2") << "llama2";
        QTest::newRow("llama3_1") << "llama3_1";
        QTest::newRow("llama2_metaspace_first") << "llama2_metaspace_first";
        QTest::newRow("llama2_metaspace_always_split") << "llama2_metaspace_always_split";
        QTest::newRow("qwen3_gpt2_prefix_space") << "qwen3_gpt2_prefix_space";
    }
    void real_models_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("qwen3") << "qwen3";
        QTest::newRow("llama2") << "llama2";
        QTest::newRow("llama3_1") << "llama3_1";
    }

    // Every corpus case: ids with and without special tokens, decode (with and without
    // skipping specials), round trip, and streaming decode.
    void hf_reference() {
        QFETCH(QString, model);
        const std::string m = model.toStdString();
        const std::string ref_path = test::assets_dir() + "/reference/tokenizer/" + m + ".json";
        const nlohmann::json ref = test::load_json(ref_path);
        QVERIFY2(ref.is_object() && ref.contains("cases"),
                 qPrintable("missing reference " + QString::fromStdString(ref_path) +
                            " (run scripts/fetch-test-assets.sh)"));
        Loaded* l = load(m);
        QVERIFY2(l, "tokenizer did not load");
        const Tokenizer& tok = *l->tokenizer;

        int total = 0, ids_ok = 0, special_ok = 0, decode_ok = 0, skip_ok = 0, roundtrip = 0,
            stream_ok = 0;
        QStringList failures;
        for (const auto& c : ref["cases"]) {
            ++total;
            const std::string text = c["text"].get<std::string>();
            const auto want = ids_of(c["ids"]);
            const auto want_special = ids_of(c["ids_special"]);
            const auto got = tok.encode(text, false);
            const auto got_special = tok.encode(text, true);
            if (got == want) {
                ++ids_ok;
            } else if (failures.size() < 10) {
                failures << QString("ids %1: want %2 got %3")
                                .arg(QString::fromStdString(text).toHtmlEscaped(), show(want),
                                     show(got));
            }
            if (got_special == want_special) {
                ++special_ok;
            } else if (failures.size() < 10) {
                failures << QString("ids+special %1: want %2 got %3")
                                .arg(QString::fromStdString(text), show(want_special),
                                     show(got_special));
            }
            const std::string decoded = tok.decode(want, false);
            if (decoded == c["decoded"].get<std::string>()) {
                ++decode_ok;
            } else if (failures.size() < 10) {
                failures << QString("decode %1: want '%2' got '%3'")
                                .arg(QString::fromStdString(text),
                                     QString::fromStdString(c["decoded"].get<std::string>()),
                                     QString::fromStdString(decoded));
            }
            const std::string decoded_skip = tok.decode(want_special, true);
            if (decoded_skip == c["decoded_skip"].get<std::string>()) {
                ++skip_ok;
            } else if (failures.size() < 10) {
                failures << QString("decode skip %1: want '%2' got '%3'")
                                .arg(QString::fromStdString(text),
                                     QString::fromStdString(c["decoded_skip"].get<std::string>()),
                                     QString::fromStdString(decoded_skip));
            }
            // Where Hugging Face round-trips, so must we.
            if (c["decoded"].get<std::string>() == text) {
                if (tok.decode(got, false) == text) {
                    ++roundtrip;
                } else if (failures.size() < 10) {
                    failures << QString("round trip %1").arg(QString::fromStdString(text));
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
                failures << QString("streaming %1").arg(QString::fromStdString(text));
            }
        }
        qInfo("%s: %d cases: ids %d, ids+special %d, decode %d, decode skip-special %d, round trip "
              "%d, streaming %d",
              m.c_str(), total, ids_ok, special_ok, decode_ok, skip_ok, roundtrip, stream_ok);
        for (const auto& f : failures)
            qWarning("%s", qPrintable(f));
        QVERIFY(total > 500);
        QCOMPARE(ids_ok, total);
        QCOMPARE(special_ok, total);
        QCOMPARE(decode_ok, total);
        QCOMPARE(skip_ok, total);
        QCOMPARE(roundtrip, total);
        QCOMPARE(stream_ok, total);
    }

    void files_metadata() {
        Loaded* q = load("qwen3");
        Loaded* l2 = load("llama2");
        Loaded* l3 = load("llama3_1");
        QVERIFY(q && l2 && l3);
        const auto& qd = q->files.data;
        QCOMPARE(qd.kind, TokenizerData::Kind::ByteLevelBpe);
        QCOMPARE(qd.pre_tokenizer, std::string("qwen2"));
        QVERIFY(qd.nfc.value_or(false));
        QVERIFY(!qd.add_bos);
        QCOMPARE(qd.tokens[static_cast<std::size_t>(qd.eos_id)], std::string("<|im_end|>"));
        QVERIFY(q->files.chat_template &&
                q->files.chat_template->find("<|im_start|>") != std::string::npos);
        const auto stops = q->tokenizer->stop_ids();
        QVERIFY(std::find(stops.begin(), stops.end(), 151645) != stops.end()); // <|im_end|>
        QVERIFY(std::find(stops.begin(), stops.end(), 151643) != stops.end()); // <|endoftext|>

        const auto& ld = l2->files.data;
        QCOMPARE(ld.kind, TokenizerData::Kind::SentencePieceBpe);
        QVERIFY(ld.add_bos && !ld.add_eos);
        QCOMPARE(ld.bos_id, 1);
        QCOMPARE(ld.eos_id, 2);
        QCOMPARE(ld.unk_id, 0);
        QVERIFY(l2->tokenizer->uses_byte_fallback());
        QVERIFY(!l2->files.chat_template.has_value());
        QCOMPARE(ld.token_types[3], 6); // <0x00>

        const auto& l3d = l3->files.data;
        QCOMPARE(l3d.pre_tokenizer, std::string("llama3"));
        QVERIFY(l3d.add_bos);
        QCOMPARE(l3d.bos_id, 128000);
        QCOMPARE(l3d.tokens[static_cast<std::size_t>(l3d.eos_id)], std::string("<|eot_id|>"));
        QVERIFY(l3d.ignore_merges.value_or(false));
        const auto s3 = l3->tokenizer->stop_ids();
        QCOMPARE(l3d.eos_id, 128009);                                 // <|eot_id|>
        QVERIFY(std::find(s3.begin(), s3.end(), 128001) != s3.end()); // <|end_of_text|>
        QVERIFY(l3->tokenizer->is_special(128000));
        QVERIFY(!l3->tokenizer->is_special(1000));
    }

    // The GGUF loader provides tokens + merges + token_types (no added_tokens, no decoder, no
    // tokenizer.json options): the same ids must come out.
    void gguf_style_tokenizer_data() { real_models_data(); }
    void gguf_style_tokenizer() {
        QFETCH(QString, model);
        const std::string m = model.toStdString();
        Loaded* l = load(m);
        QVERIFY(l);
        const TokenizerData& full = l->files.data;
        TokenizerData g;
        g.kind = full.kind;
        g.tokens = full.tokens;
        g.merges = full.merges;
        g.token_types =
            full.token_types; // 3 control / 4 user-defined / 6 byte, as GGUF stores them
        g.pre_tokenizer = full.pre_tokenizer; // tokenizer.ggml.pre
        g.add_bos = full.add_bos;
        g.add_eos = full.add_eos;
        g.add_space_prefix = full.kind == TokenizerData::Kind::SentencePieceBpe;
        g.bos_id = full.bos_id;
        g.eos_id = full.eos_id;
        g.unk_id = full.unk_id;
        g.pad_id = full.pad_id;
        auto made = Tokenizer::create(g);
        QVERIFY2(made, made ? "" : made.message().c_str());
        const Tokenizer& gt = *made.value();
        const nlohmann::json ref =
            test::load_json(test::assets_dir() + "/reference/tokenizer/" + m + ".json");
        QVERIFY(ref.is_object());
        int total = 0, same = 0, dec_same = 0;
        for (const auto& c : ref["cases"]) {
            ++total;
            const std::string text = c["text"].get<std::string>();
            const auto want = ids_of(c["ids_special"]);
            if (gt.encode(text, true) == want)
                ++same;
            else if (same + 5 > total)
                qWarning("gguf-style %s differs: %s", m.c_str(), text.c_str());
            if (gt.decode(want, false) == c["decoded"].get<std::string>() ||
                want != ids_of(c["ids"]))
                ++dec_same;
        }
        qInfo("%s gguf-style: %d/%d ids equal to Hugging Face", m.c_str(), same, total);
        QCOMPARE(same, total);
    }

    // A figure, not an assertion on time: encode throughput on ~1 MB of mixed text.
    void throughput_data() { real_models_data(); }
    void throughput() {
        QFETCH(QString, model);
        Loaded* l = load(model.toStdString());
        QVERIFY(l);
        const nlohmann::json ref = test::load_json(test::assets_dir() + "/reference/tokenizer/" +
                                                   model.toStdString() + ".json");
        QVERIFY(ref.is_object());
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
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const auto t1 = std::chrono::steady_clock::now();
        const std::string back = l->tokenizer->decode(ids);
        const double ds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
        qInfo("%s: encode %.2f MB in %.3f s = %.1f MB/s (%zu tokens); decode %.1f MB/s",
              qPrintable(model), text.size() / 1e6, s, text.size() / 1e6 / s, ids.size(),
              back.size() / 1e6 / ds);
        QVERIFY(!ids.empty());
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
        const double ws =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count();
        qInfo("%s: encode %.2f MB of random words in %.3f s = %.1f MB/s (%zu tokens)",
              qPrintable(model), words.size() / 1e6, ws, words.size() / 1e6 / ws, wids.size());
        QCOMPARE(l->tokenizer->decode(wids), words);
    }
};

QTEST_APPLESS_MAIN(TestTokenizerReference)
#include "test_tokenizer_reference.moc"
