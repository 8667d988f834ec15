// llmwb generate / perplexity / info / make-model end to end over tiny random-weight models of
// every architecture (llama, qwen2, qwen3), each written twice with the same seed: as a GGUF
// file and as a safetensors folder (the same logical weights).
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "cli/cli_runner.h"

using namespace clitest;

namespace {

// One written model pair: make-model options shared by the GGUF and the safetensors version.
struct ModelSpec {
    const char* name;
    const char* arch;
    int hidden, intermediate, layers, heads, kvHeads, headDim, vocab; // headDim 0: hidden/heads
    bool tied;
    const char* ropeScaling; // "none" | "llama3"
    const char* tokenizer;   // "" = built-in demo tokenizer, else an asset tokenizer name
};

const ModelSpec kModels[] = {
    {"llama", "llama", 64, 160, 2, 4, 2, 0, 0, false, "none", ""},
    {"llama-rope3", "llama", 64, 96, 2, 4, 1, 0, 0, true, "llama3", ""},
    {"qwen2", "qwen2", 64, 128, 2, 4, 2, 0, 0, false, "none", ""},
    {"qwen3", "qwen3", 48, 96, 3, 4, 2, 24, 0, false, "none", ""},
    {"qwen3-bigvocab", "qwen3", 32, 64, 1, 2, 2, 0, 5000, true, "none", ""},
    {"qwen3-realtok", "qwen3", 32, 64, 2, 2, 1, 0, 0, true, "none", "qwen3"},
};

const char* kPrompt = "The quick brown fox jumps over the lazy dog. Once upon a time";

bool closeTo(double a, double b, double tol) {
    return std::fabs(a - b) <= tol;
}

} // namespace

class TstCliGenerate : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_;
    QMap<QString, QString> models_;          // "<name>/<format>" -> path
    QMap<QString, QJsonObject> makeReports_; // "<name>/<format>" -> make-model --json

    QString model(const QString& name, const QString& format = "gguf") const {
        return models_.value(name + "/" + format);
    }
    // Runs the command and parses its --json line; fails the test (returns false) otherwise.
    bool runJson(const QStringList& args, QJsonObject* out, QString* why) {
        CliResult r = runCli(args, xdg_);
        if (!r.ok()) {
            *why = r.describe();
            return false;
        }
        bool ok = false;
        *out = parseJsonLine(r.out, &ok);
        if (!ok)
            *why = "not one JSON line: " + QString::fromUtf8(r.out.left(400));
        return ok;
    }

    static void addModelRows(bool bothFormats) {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("format");
        for (const ModelSpec& s : kModels) {
            QTest::addRow("%s/gguf", s.name) << QString(s.name) << QString("gguf");
            if (bothFormats)
                QTest::addRow("%s/safetensors", s.name)
                    << QString(s.name) << QString("safetensors");
        }
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = tmp_.filePath("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        QVERIFY2(QFileInfo::exists(cliPath()), qPrintable("llmwb binary not found: " + cliPath()));
        for (const ModelSpec& s : kModels) {
            for (QString format : {"gguf", "safetensors"}) {
                const QString out =
                    tmp_.filePath(QString(s.name) + (format == "gguf" ? ".gguf" : "-st"));
                QStringList args{"make-model",
                                 "--out",
                                 out,
                                 "--format",
                                 format,
                                 "--arch",
                                 s.arch,
                                 "--seed",
                                 "1234",
                                 "--hidden",
                                 QString::number(s.hidden),
                                 "--intermediate",
                                 QString::number(s.intermediate),
                                 "--layers",
                                 QString::number(s.layers),
                                 "--heads",
                                 QString::number(s.heads),
                                 "--kv-heads",
                                 QString::number(s.kvHeads),
                                 "--vocab",
                                 QString::number(s.vocab),
                                 "--tie",
                                 s.tied ? "true" : "false",
                                 "--rope-scaling",
                                 s.ropeScaling,
                                 "--context",
                                 "512",
                                 "--json"};
                if (s.headDim)
                    args << "--head-dim" << QString::number(s.headDim);
                if (*s.tokenizer) {
                    const QString dir = tokenizerDir(s.tokenizer);
                    QVERIFY2(QFileInfo::exists(dir + "/tokenizer.json"),
                             qPrintable(dir + " is missing: run scripts/fetch-test-assets.sh"));
                    args << "--tokenizer" << dir << "--type"
                         << "f16";
                }
                QJsonObject report;
                QString why;
                QVERIFY2(runJson(args, &report, &why), qPrintable(why));
                models_[QString(s.name) + "/" + format] = out;
                makeReports_[QString(s.name) + "/" + format] = report;
            }
        }
    }

    // info --json reports the shapes given to make-model; parameters and KV bytes follow them.
    void infoMatchesShapes_data() { addModelRows(true); }
    void infoMatchesShapes() {
        QFETCH(QString, name);
        QFETCH(QString, format);
        const ModelSpec* spec = nullptr;
        for (const ModelSpec& s : kModels)
            if (name == s.name)
                spec = &s;
        QVERIFY(spec);
        QJsonObject j;
        QString why;
        QVERIFY2(runJson({"info", "--model", model(name, format), "--json"}, &j, &why),
                 qPrintable(why));
        const int64_t H = spec->hidden, I = spec->intermediate, L = spec->layers;
        const int64_t hd = spec->headDim ? spec->headDim : spec->hidden / spec->heads;
        const int64_t q = spec->heads * hd, kv = spec->kvHeads * hd;
        const int64_t V = j.value("vocab_size").toInteger();
        if (*spec->tokenizer)
            QVERIFY2(V >= 151643, "the Qwen3 tokenizer has ~151k tokens");
        else if (spec->vocab)
            QCOMPARE(V, int64_t(spec->vocab));
        else
            QVERIFY(V >= 256); // the demo tokenizer's size
        QCOMPARE(j.value("architecture").toString(), QString(spec->arch));
        QCOMPARE(j.value("format").toString(), format);
        QCOMPARE(j.value("hidden_size").toInteger(), H);
        QCOMPARE(j.value("intermediate_size").toInteger(), I);
        QCOMPARE(j.value("layers").toInteger(), L);
        QCOMPARE(j.value("heads").toInteger(), int64_t(spec->heads));
        QCOMPARE(j.value("kv_heads").toInteger(), int64_t(spec->kvHeads));
        QCOMPARE(j.value("head_dim").toInteger(), hd);
        QCOMPARE(j.value("context_length").toInteger(), int64_t(512));
        QCOMPARE(j.value("tied_embeddings").toBool(), spec->tied);
        // A GGUF carries llama3 rope scaling as a rope_freqs tensor (llama.cpp's convention),
        // a safetensors config.json as rope_scaling.
        const bool ropeFreqs = format == "gguf" && QString(spec->ropeScaling) == "llama3";
        QCOMPARE(j.value("tensor_types").toObject().contains("rope_freqs"), ropeFreqs);
        if (format == "safetensors" || !ropeFreqs)
            QCOMPARE(j.value("rope_scaling").toString(), QString(spec->ropeScaling));
        else
            QCOMPARE(j.value("rope_scaling").toString(), QString("llama3 (rope_freqs)"));
        QCOMPARE(j.value("chat_template").toBool(), true);

        int64_t perLayer = 2 * H                        // attn + ffn norm
                           + H * q + 2 * H * kv + q * H // q, k, v, o
                           + 3 * H * I;                 // gate, up, down
        if (QString(spec->arch) == "qwen2")
            perLayer += q + 2 * kv; // q/k/v biases
        if (QString(spec->arch) == "qwen3")
            perLayer += 2 * hd; // q/k norms
        int64_t params = V * H + L * perLayer + H + (spec->tied ? 0 : V * H);
        if (ropeFreqs)
            params += hd / 2; // rope_freqs [head_dim / 2] counts as a parameter
        QCOMPARE(j.value("parameters").toInteger(), params);
        QCOMPARE(makeReports_.value(name + "/" + format).value("parameters").toInteger(), params);
        QCOMPARE(j.value("weight_bytes").toInteger(),
                 makeReports_.value(name + "/" + format).value("weight_bytes").toInteger());

        const int64_t kvBytes = 2 * L * kv * int64_t(sizeof(float));
        QCOMPARE(j.value("kv_bytes_per_token").toInteger(), kvBytes);
        QCOMPARE(j.value("estimated_context_tokens").toInteger(), int64_t(512));
        QCOMPARE(j.value("estimated_kv_bytes").toInteger(), 512 * kvBytes);
        QCOMPARE(j.value("estimated_memory_bytes").toInteger(),
                 j.value("weight_bytes").toInteger() + 512 * kvBytes);
        // --context changes the estimate only.
        QVERIFY2(runJson({"info", "--model", model(name, format), "--json", "--context", "100"}, &j,
                         &why),
                 qPrintable(why));
        QCOMPARE(j.value("estimated_kv_bytes").toInteger(), 100 * kvBytes);
    }

    // The GGUF file and the safetensors folder of one model generate the same greedy tokens.
    void greedyGgufEqualsSafetensors_data() { addModelRows(false); }
    void greedyGgufEqualsSafetensors() {
        QFETCH(QString, name);
        QJsonObject a, b;
        QString why;
        const QStringList common{"--prompt",
                                 kPrompt,
                                 "--temperature",
                                 "0",
                                 "--max-tokens",
                                 "12",
                                 "--ignore-eos",
                                 "--seed",
                                 "5",
                                 "--json",
                                 "--threads",
                                 "2"};
        QVERIFY2(
            runJson(QStringList{"generate", "--model", model(name, "gguf")} + common, &a, &why),
            qPrintable(why));
        QVERIFY2(runJson(QStringList{"generate", "--model", model(name, "safetensors")} + common,
                         &b, &why),
                 qPrintable(why));
        QCOMPARE(a.value("prompt_tokens").toInt(), b.value("prompt_tokens").toInt());
        QCOMPARE(toIntVector(a.value("ids").toArray()), toIntVector(b.value("ids").toArray()));
        QCOMPARE(a.value("text").toString(), b.value("text").toString());
        QCOMPARE(a.value("completion_tokens").toInt(), 12);
        QCOMPARE(a.value("finish_reason").toString(), QString("length"));
        // Greedy does not depend on the seed.
        QJsonObject c;
        QStringList other = common;
        other[other.indexOf("5")] = "99";
        QVERIFY2(runJson(QStringList{"generate", "--model", model(name, "gguf")} + other, &c, &why),
                 qPrintable(why));
        QCOMPARE(toIntVector(c.value("ids").toArray()), toIntVector(a.value("ids").toArray()));
    }

    // temperature 1: the same seed gives the same tokens, another seed other tokens.
    void seedReproducible() {
        auto run = [&](const QString& seed, std::vector<int>* ids) {
            QJsonObject j;
            QString why;
            bool ok = runJson({"generate", "--model", model("qwen3-bigvocab"), "--prompt", kPrompt,
                               "--temperature", "1", "--seed", seed, "--max-tokens", "16",
                               "--ignore-eos", "--json"},
                              &j, &why);
            if (!ok)
                qWarning("%s", qPrintable(why));
            *ids = toIntVector(j.value("ids").toArray());
            return ok;
        };
        std::vector<int> a, b, c;
        QVERIFY(run("42", &a));
        QVERIFY(run("42", &b));
        QVERIFY(run("43", &c));
        QCOMPARE(a.size(), size_t(16));
        QCOMPARE(a, b);
        // 16 draws from a 5000-token vocabulary: equal sequences would mean the seed is unused.
        QVERIFY(a != c);
    }

    // --max-tokens N with --ignore-eos: exactly N tokens, finish_reason "length"; the JSON
    // fields are present and consistent with tokenize / detokenize.
    void maxTokensAndJsonFields_data() {
        QTest::addColumn<int>("n");
        QTest::addColumn<QString>("temperature");
        QTest::newRow("1-greedy") << 1 << "0";
        QTest::newRow("7-greedy") << 7 << "0";
        QTest::newRow("20-sampled") << 20 << "0.8";
    }
    void maxTokensAndJsonFields() {
        QFETCH(int, n);
        QFETCH(QString, temperature);
        const QString m = model("qwen2");
        QJsonObject j;
        QString why;
        QVERIFY2(
            runJson({"generate", "--model", m, "--prompt", kPrompt, "--temperature", temperature,
                     "--seed", "3", "--max-tokens", QString::number(n), "--ignore-eos", "--json"},
                    &j, &why),
            qPrintable(why));
        for (const char* key :
             {"ids", "text", "finish_reason", "prompt_tokens", "completion_tokens", "ttft_ms",
              "prefill_tokens_per_s", "decode_tokens_per_s", "total_ms"})
            QVERIFY2(j.contains(key), key);
        QVERIFY(!j.contains("logprobs"));
        const std::vector<int> ids = toIntVector(j.value("ids").toArray());
        QCOMPARE(int(ids.size()), n);
        QCOMPARE(j.value("completion_tokens").toInt(), n);
        QCOMPARE(j.value("finish_reason").toString(), QString("length"));
        QVERIFY(j.value("ttft_ms").toDouble() >= 0);
        QVERIFY(j.value("total_ms").toDouble() >= j.value("ttft_ms").toDouble());
        QVERIFY(j.value("prefill_tokens_per_s").toDouble() > 0);
        // prompt_tokens == the tokenized prompt.
        QJsonObject t;
        QVERIFY2(runJson({"tokenize", "--model", m, "--text", kPrompt, "--json"}, &t, &why),
                 qPrintable(why));
        QCOMPARE(j.value("prompt_tokens").toInt(), int(t.value("ids").toArray().size()));
        // text == detokenize(ids) without special tokens (no stop string, no stop token here).
        QJsonObject d;
        QVERIFY2(
            runJson({"detokenize", "--model", m, "--ids", idList(ids), "--skip-special", "--json"},
                    &d, &why),
            qPrintable(why));
        QCOMPARE(j.value("text").toString(), d.value("text").toString());
    }

    // Without --json the text is streamed to stdout (+ a newline), a summary goes to stderr.
    void plainOutputEqualsJsonText() {
        const QString m = model("llama");
        const QStringList common{"--model",      m,    "--prompt",    kPrompt, "--temperature", "0",
                                 "--max-tokens", "10", "--ignore-eos"};
        QJsonObject j;
        QString why;
        QVERIFY2(runJson(QStringList{"generate"} + common + QStringList{"--json"}, &j, &why),
                 qPrintable(why));
        CliResult r = runCli(QStringList{"generate"} + common, xdg_);
        CLI_VERIFY_OK(r);
        QCOMPARE(QString::fromUtf8(r.out), j.value("text").toString() + "\n");
        QVERIFY2(r.err.contains("10 generated") && r.err.contains("finish: length"),
                 r.err.constData());
    }

    // --stop S: the text ends right before the first occurrence of S, finish_reason "stop".
    void stopString() {
        const QString m = model("qwen2");
        const QStringList common{"--model",       m,       "--prompt",     kPrompt,
                                 "--temperature", "0",     "--max-tokens", "40",
                                 "--ignore-eos",  "--json"};
        QJsonObject full;
        QString why;
        QVERIFY2(runJson(QStringList{"generate"} + common, &full, &why), qPrintable(why));
        const QString text = full.value("text").toString();
        QVERIFY2(text.size() >= 12, qPrintable("generated text too short: " + text));
        int tried = 0;
        // A few stop strings taken from the middle of the unstopped text.
        for (int start : {int(text.size() / 3), int(text.size() / 2), int(2 * text.size() / 3)}) {
            QString stop = text.mid(start, 3);
            if (stop.contains(QChar(0xFFFD)) || stop.trimmed().isEmpty())
                continue;
            ++tried;
            QJsonObject s;
            QVERIFY2(
                runJson(QStringList{"generate"} + common + QStringList{"--stop", stop}, &s, &why),
                qPrintable(why));
            const QString got = s.value("text").toString();
            QVERIFY2(!got.contains(stop), qPrintable(got));
            QCOMPARE(got, text.left(text.indexOf(stop)));
            QCOMPARE(s.value("finish_reason").toString(), QString("stop"));
            QCOMPARE(s.value("stop").toString(), stop);
            const auto ids = toIntVector(s.value("ids").toArray());
            QCOMPARE(s.value("completion_tokens").toInt(), int(ids.size()));
            QVERIFY(int(ids.size()) <= full.value("completion_tokens").toInt());
        }
        QVERIFY(tried >= 1);
        // A stop string that never occurs changes nothing.
        QJsonObject n;
        QVERIFY2(runJson(QStringList{"generate"} + common + QStringList{"--stop", "\x01\x02zzq"},
                         &n, &why),
                 qPrintable(why));
        QCOMPARE(n.value("text").toString(), text);
        QCOMPARE(n.value("finish_reason").toString(), QString("length"));
    }

    // --stop-token-ids: generation ends with that token (kept in ids, not in the text).
    void stopTokenIds() {
        const QString m = model("qwen3");
        const QStringList common{"--model",       m,       "--prompt",     kPrompt,
                                 "--temperature", "0",     "--max-tokens", "16",
                                 "--ignore-eos",  "--json"};
        QJsonObject full;
        QString why;
        QVERIFY2(runJson(QStringList{"generate"} + common, &full, &why), qPrintable(why));
        const auto ids = toIntVector(full.value("ids").toArray());
        QCOMPARE(ids.size(), size_t(16));
        const int k = 5;
        const int stopId = ids[k];
        const size_t first = size_t(std::find(ids.begin(), ids.end(), stopId) - ids.begin());
        QJsonObject s;
        QVERIFY2(runJson(QStringList{"generate"} + common +
                             QStringList{"--stop-token-ids", QString::number(stopId)},
                         &s, &why),
                 qPrintable(why));
        const auto got = toIntVector(s.value("ids").toArray());
        QCOMPARE(got, std::vector<int>(ids.begin(), ids.begin() + first + 1));
        QCOMPARE(s.value("finish_reason").toString(), QString("stop"));
        QJsonObject d;
        QVERIFY2(runJson({"detokenize", "--model", m, "--ids",
                          idList(std::vector<int>(got.begin(), got.end() - 1)), "--skip-special",
                          "--json"},
                         &d, &why),
                 qPrintable(why));
        QCOMPARE(s.value("text").toString(), d.value("text").toString());
    }

    // --logprobs 3: three alternatives per token, best first; greedy picks the best.
    void logprobs_data() {
        QTest::addColumn<QString>("temperature");
        QTest::newRow("greedy") << "0";
        QTest::newRow("sampled") << "1";
    }
    void logprobs() {
        QFETCH(QString, temperature);
        QJsonObject j;
        QString why;
        QVERIFY2(runJson({"generate", "--model", model("qwen3-bigvocab"), "--prompt", kPrompt,
                          "--temperature", temperature, "--seed", "11", "--max-tokens", "8",
                          "--ignore-eos", "--logprobs", "3", "--json"},
                         &j, &why),
                 qPrintable(why));
        const QJsonArray lp = j.value("logprobs").toArray();
        const auto ids = toIntVector(j.value("ids").toArray());
        QCOMPARE(lp.size(), qsizetype(ids.size()));
        for (qsizetype i = 0; i < lp.size(); ++i) {
            const QJsonObject e = lp[i].toObject();
            QCOMPARE(e.value("id").toInt(), ids[size_t(i)]);
            const double chosen = e.value("logprob").toDouble();
            QVERIFY(chosen <= 0);
            const QJsonArray top = e.value("top").toArray();
            QCOMPARE(top.size(), qsizetype(3));
            double sumProb = 0;
            for (qsizetype t = 0; t < top.size(); ++t) {
                const double v = top[t].toObject().value("logprob").toDouble();
                QVERIFY(v <= 0);
                sumProb += std::exp(v);
                if (t > 0)
                    QVERIFY(v <= top[t - 1].toObject().value("logprob").toDouble());
                if (top[t].toObject().value("id").toInt() == ids[size_t(i)])
                    QVERIFY(closeTo(v, chosen, 1e-6));
            }
            QVERIFY(sumProb <= 1.0 + 1e-5);
            QVERIFY(chosen <= top[0].toObject().value("logprob").toDouble() + 1e-6);
            if (temperature == "0") {
                QCOMPARE(top[0].toObject().value("id").toInt(), ids[size_t(i)]);
                QVERIFY(closeTo(chosen, top[0].toObject().value("logprob").toDouble(), 1e-6));
            }
        }
    }

    // perplexity --json: sizes, ppl == exp(-mean), --text == --ids of its tokenization.
    void perplexityJson_data() { addModelRows(true); }
    void perplexityJson() {
        QFETCH(QString, name);
        QFETCH(QString, format);
        const QString m = model(name, format);
        QJsonObject t, p;
        QString why;
        QVERIFY2(runJson({"tokenize", "--model", m, "--text", kPrompt, "--json"}, &t, &why),
                 qPrintable(why));
        const auto ids = toIntVector(t.value("ids").toArray());
        QVERIFY(ids.size() >= 5);
        QVERIFY2(runJson({"perplexity", "--model", m, "--text", kPrompt, "--json"}, &p, &why),
                 qPrintable(why));
        QCOMPARE(p.value("tokens").toInteger(), qint64(ids.size()));
        const QJsonArray lp = p.value("logprobs").toArray();
        QCOMPARE(lp.size(), qsizetype(ids.size() - 1));
        double sum = 0;
        for (const auto& v : lp) {
            QVERIFY(v.toDouble() <= 0);
            sum += v.toDouble();
        }
        const double mean = sum / double(lp.size());
        QVERIFY(closeTo(p.value("mean_logprob").toDouble(), mean, 1e-9 + 1e-9 * std::fabs(mean)));
        const double ppl = p.value("ppl").toDouble();
        QVERIFY(closeTo(ppl, std::exp(-mean), 1e-9 * ppl));
        QVERIFY(ppl >= 1.0);
        QJsonObject q;
        QVERIFY2(runJson({"perplexity", "--model", m, "--ids", idList(ids), "--json"}, &q, &why),
                 qPrintable(why));
        QCOMPARE(q.value("logprobs").toArray(), lp);
    }

    // The logprobs generate reports for its greedy tokens are perplexity's logprobs over
    // prompt + those tokens (one forward path vs the other: prefill+decode vs one prefill).
    void generateLogprobsMatchPerplexity_data() { addModelRows(true); }
    void generateLogprobsMatchPerplexity() {
        QFETCH(QString, name);
        QFETCH(QString, format);
        const QString m = model(name, format);
        QJsonObject t, g, p;
        QString why;
        QVERIFY2(runJson({"tokenize", "--model", m, "--text", kPrompt, "--json"}, &t, &why),
                 qPrintable(why));
        std::vector<int> ids = toIntVector(t.value("ids").toArray());
        const size_t promptLen = ids.size();
        const int n = 4;
        QVERIFY2(runJson({"generate", "--model", m, "--ids", idList(ids), "--temperature", "0",
                          "--logprobs", "1", "--max-tokens", QString::number(n), "--ignore-eos",
                          "--json"},
                         &g, &why),
                 qPrintable(why));
        const auto gen = toIntVector(g.value("ids").toArray());
        QCOMPARE(int(gen.size()), n);
        QCOMPARE(g.value("prompt_tokens").toInt(), int(promptLen));
        ids.insert(ids.end(), gen.begin(), gen.end());
        QVERIFY2(runJson({"perplexity", "--model", m, "--ids", idList(ids), "--json"}, &p, &why),
                 qPrintable(why));
        const QJsonArray plp = p.value("logprobs").toArray();
        const QJsonArray glp = g.value("logprobs").toArray();
        QCOMPARE(plp.size(), qsizetype(ids.size() - 1));
        for (int i = 0; i < n; ++i) {
            const double a = glp[i].toObject().value("logprob").toDouble();
            const double b = plp[qsizetype(promptLen) - 1 + i].toDouble();
            QVERIFY2(
                closeTo(a, b, 1e-4),
                qPrintable(QString("token %1: generate %2, perplexity %3").arg(i).arg(a).arg(b)));
        }
    }

    // generate --chat renders the template with the generation prompt and tokenizes it
    // without adding special tokens.
    void generateChat() {
        const QString m = model("qwen3-realtok");
        const QString file = tmp_.filePath("chat.json");
        QVERIFY(writeFile(file, R"([{"role":"system","content":"Be brief."},)"
                                R"({"role":"user","content":"Hi there!"}])"));
        CliResult r = runCli({"render-chat", "--model", m, "--messages", file,
                              "--add-generation-prompt", "--enable-thinking", "false"},
                             xdg_);
        CLI_VERIFY_OK(r);
        QVERIFY2(r.out.endsWith("<think>\n\n</think>\n\n"), r.out.constData());
        const QString rendered = tmp_.filePath("rendered.txt");
        QVERIFY(writeFile(rendered, r.out));
        QJsonObject t, g;
        QString why;
        QVERIFY2(runJson({"tokenize", "--model", m, "--file", rendered, "--no-special", "--json"},
                         &t, &why),
                 qPrintable(why));
        QVERIFY2(runJson({"generate", "--model", m, "--chat", file, "--enable-thinking", "false",
                          "--temperature", "0", "--max-tokens", "3", "--ignore-eos", "--json"},
                         &g, &why),
                 qPrintable(why));
        QCOMPARE(g.value("prompt_tokens").toInt(), int(t.value("ids").toArray().size()));
        // Same greedy tokens as generating from those ids.
        QJsonObject h;
        QVERIFY2(runJson({"generate", "--model", m, "--ids",
                          idList(toIntVector(t.value("ids").toArray())), "--temperature", "0",
                          "--max-tokens", "3", "--ignore-eos", "--json"},
                         &h, &why),
                 qPrintable(why));
        QCOMPARE(toIntVector(g.value("ids").toArray()), toIntVector(h.value("ids").toArray()));
    }

    // Without --model the demo model is written to $XDG_DATA_HOME/llmwb/llm-workbench once.
    void demoModel() {
        const QString demo = xdg_ + "/llmwb/llm-workbench/llmwb-demo-ngram.gguf";
        QFile::remove(demo);
        QJsonObject j;
        QString why;
        QVERIFY2(runJson({"info", "--json"}, &j, &why), qPrintable(why));
        QVERIFY(QFileInfo::exists(demo));
        QCOMPARE(QFileInfo(j.value("path").toString()).canonicalFilePath(),
                 QFileInfo(demo).canonicalFilePath());
        QVERIFY2(j.value("name").toString().contains("n-gram, not a trained model"),
                 qPrintable(j.value("name").toString()));
        const QDateTime written = QFileInfo(demo).lastModified();
        QJsonObject g;
        QVERIFY2(runJson({"generate", "--prompt", "Hello", "--max-tokens", "3", "--ignore-eos",
                          "--temperature", "0", "--json"},
                         &g, &why),
                 qPrintable(why));
        QCOMPARE(g.value("completion_tokens").toInt(), 3);
        QCOMPARE(QFileInfo(demo).lastModified(), written); // reused, not rewritten
        // It speaks: a greedy chat answer with the default max_tokens is a readable sentence
        // that ends with the end of the turn (engine/model/demo_ngram.h; exactness is tested in
        // tests/engine/model/test_demo_model.cpp).
        const QString chat = tmp_.filePath("demo-chat.json");
        QVERIFY(writeFile(chat, R"([{"role":"user","content":"Hello"}])"));
        QJsonObject c;
        QVERIFY2(runJson({"generate", "--chat", chat, "--temperature", "0", "--json"}, &c, &why),
                 qPrintable(why));
        QCOMPARE(c.value("finish_reason").toString(), QStringLiteral("stop"));
        const QString text = c.value("text").toString();
        QVERIFY2(text.endsWith('.') && text.size() >= 20 && !text.contains(QChar(0xFFFD)) &&
                     !text.contains(QStringLiteral("\n\n\n")),
                 qPrintable(text));
    }
};

QTEST_GUILESS_MAIN(TstCliGenerate)
#include "tst_cli_generate.moc"
