// --kv-cache-dtype end to end: every type (and the --kv-dtype alias, auto) runs generate,
// generate --prompts, perplexity, bench and kld on the CPU, and each JSON output carries the
// type; errors name the value and the choices; `llmwb kld --model M --kv-cache-dtype T` compares
// the same weights with T against an f32 KV cache (f16 closer than int8 / fp8; the same type on
// both sides gives 0); the hidden int8 experiments run; info lists the capacity per type;
// --dtype bfloat16 casts the float weights (reported, measured by kld, refused where it cannot).
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include "cli/cli_runner.h"

using namespace clitest;

namespace {

const char* kText =
    "The quick brown fox jumps over the lazy dog. Once upon a time there was a model whose "
    "keys and values were stored in eight bits, and its users wanted to know how much that "
    "changed. They ran it over the same text with a float cache and compared the next-token "
    "distributions at every position, block after block, until the end of the story.";

const QStringList kTypes{"f32", "f16", "bf16", "fp8", "fp8_e4m3", "fp8_e5m2", "int8"};

QString canonical(const QString& t) {
    return t == "fp8" ? "fp8_e4m3" : t;
}

} // namespace

class TstCliKvDtype : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_;
    QString model_;

    QString path(const QString& name) const { return tmp_.filePath(name); }

    QJsonObject json(const QStringList& args, bool* ok) {
        CliResult r = runCli(args, xdg_);
        *ok = r.ok();
        if (!r.ok()) {
            qWarning("%s", qPrintable(r.describe()));
            return {};
        }
        return parseJsonLine(r.out, ok);
    }
    QJsonObject kld(const QStringList& args, bool* ok) {
        return json(QStringList{"kld", "--model", model_, "--file", path("text.txt"), "--device",
                                "cpu", "--json"} +
                        args,
                    ok);
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = path("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        model_ = path("peaked.gguf");
        CliResult r =
            runCli({"make-model", "--out",           model_, "--type",         "f32", "--seed",
                    "3",          "--hidden",        "128",  "--intermediate", "256", "--layers",
                    "2",          "--heads",         "4",    "--kv-heads",     "2",   "--context",
                    "512",        "--embedding-std", "0.3"},
                   xdg_);
        CLI_VERIFY_OK(r);
        QVERIFY(writeFile(path("text.txt"), QByteArray(kText)));
    }

    // generate --json with each type (and the alias): kv_cache_dtype and the pool's bytes per
    // block (int8 < fp8 < f16 < f32 with int8's scales); auto is f16 on the CPU. Seeded, and
    // past EOS: the random model's sampled text may end early, which is not what this checks.
    void generateEachType() {
        QMap<QString, int> bytes;
        for (const QString& t : kTypes + QStringList{"auto"}) {
            for (const char* flag : {"--kv-cache-dtype", "--kv-dtype"}) {
                bool ok = false;
                QJsonObject j =
                    json({"generate", "--model", model_, "--prompt", kText, "--max-tokens", "4",
                          "--ignore-eos", "--seed", "1", "--device", "cpu", flag, t, "--json"},
                         &ok);
                QVERIFY2(ok, qPrintable(t));
                const QString want = t == "auto" ? "f16" : canonical(t);
                QCOMPARE(j["kv_cache_dtype"].toString(), want);
                QCOMPARE(j["completion_tokens"].toInt(), 4);
                bytes[want] = j["kv_cache"].toObject()["bytes_per_block"].toInt();
            }
        }
        QVERIFY(bytes["int8"] > bytes["fp8_e4m3"]); // the scales
        QVERIFY(bytes["int8"] < bytes["f16"]);
        QCOMPARE(bytes["f16"], bytes["bf16"]);
        QCOMPARE(bytes["f32"], 2 * bytes["f16"]);
        QCOMPARE(bytes["fp8_e5m2"], bytes["fp8_e4m3"]);
        QCOMPARE(bytes["f16"], 2 * bytes["fp8_e4m3"]);
    }

    void errors() {
        CliResult bad = runCli(
            {"generate", "--model", model_, "--prompt", "hi", "--kv-cache-dtype", "int4"}, xdg_);
        QCOMPARE(bad.exitCode, 1);
        QVERIFY(bad.out.isEmpty());
        QVERIFY2(bad.err.contains("'int4'") &&
                     bad.err.contains("auto, f32, f16, bf16, fp8, fp8_e4m3, fp8_e5m2, int8"),
                 bad.err.constData());
        for (const QStringList& cmd : {QStringList{"perplexity", "--text", "hi"},
                                       QStringList{"bench"}, QStringList{"kld", "--text", kText}}) {
            CliResult r = runCli(cmd + QStringList{"--model", model_, "--kv-dtype", "e4m3"}, xdg_);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("--kv-dtype must be one of"), r.err.constData());
        }
        CliResult scales = runCli({"generate", "--model", model_, "--prompt", "hi",
                                   "--kv-cache-dtype", "int8", "--calculate-kv-scales"},
                                  xdg_);
        QCOMPARE(scales.exitCode, 1);
        QVERIFY2(scales.err.contains("--calculate-kv-scales needs an fp8"), scales.err.constData());
        CliResult base = runCli(
            {"kld", "--model", model_, "--text", kText, "--base-kv-cache-dtype", "f64"}, xdg_);
        QCOMPARE(base.exitCode, 1);
        QVERIFY2(base.err.contains("--base-kv-cache-dtype must be one of") &&
                     base.err.contains("'f64'"),
                 base.err.constData());
    }

    // perplexity, generate --prompts and bench carry the type too; fp8 with calibrated scales
    // runs.
    void otherCommandsCarryTheType() {
        bool ok = false;
        QJsonObject p = json({"perplexity", "--model", model_, "--text", kText, "--device", "cpu",
                              "--kv-cache-dtype", "fp8", "--calculate-kv-scales", "--json"},
                             &ok);
        QVERIFY(ok);
        QCOMPARE(p["kv_cache_dtype"].toString(), QString("fp8_e4m3"));
        QVERIFY(p["ppl"].toDouble() > 1.0);

        QVERIFY(writeFile(path("prompts.jsonl"),
                          "{\"prompt\": \"Once upon a time\", \"max_tokens\": 3}\n"
                          "{\"prompt\": \"The quick brown fox\", \"max_tokens\": 2}\n"));
        CliResult g = runCli({"generate", "--model", model_, "--prompts", path("prompts.jsonl"),
                              "--device", "cpu", "--kv-cache-dtype", "bf16"},
                             xdg_);
        CLI_VERIFY_OK(g);
        const QList<QByteArray> lines = g.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        for (const QByteArray& line : lines)
            QCOMPARE(QJsonDocument::fromJson(line).object()["kv_cache_dtype"].toString(),
                     QString("bf16"));

        const QString report = path("bench.json");
        CliResult b = runCli({"bench", "--model", model_, "--num-prompts", "3", "--input-len", "12",
                              "--output-len", "3", "--device", "cpu", "--kv-cache-dtype", "int8",
                              "--quiet", "--json", report},
                             xdg_);
        CLI_VERIFY_OK(b);
        QVERIFY2(b.out.contains("KV cache: int8"), b.out.constData());
        const QJsonObject bj = QJsonDocument::fromJson(readFile(report, &ok)).object();
        QVERIFY(ok);
        QCOMPARE(bj["kv_cache_dtype"].toString(), QString("int8"));
        const QJsonObject res = bj["results"].toObject()["continuous"].toObject();
        QCOMPARE(res["kv_cache_dtype"].toString(), QString("int8"));
        QVERIFY(res["kv_cache_tokens"].toInt() > 0);
    }

    // The same weights with each KV type against an f32 cache.
    void kldAgainstF32() {
        QMap<QString, QJsonObject> r;
        for (const QString& t : QStringList{"f32", "f16", "fp8_e5m2", "int8"}) {
            bool ok = false;
            r[t] = kld({"--kv-cache-dtype", t}, &ok);
            QVERIFY2(ok, qPrintable(t));
            QCOMPARE(r[t]["kv_cache_dtype"].toString(), QString(t));
            QCOMPARE(r[t]["base_kv_cache_dtype"].toString(), QString("f32"));
            QCOMPARE(r[t]["base"].toString(), r[t]["model"].toString()); // --base defaults to M
            qInfo("%s KV vs f32 KV: mean KLD %g, top-1 %.1f %%", qPrintable(t),
                  r[t]["mean_kld"].toDouble(), r[t]["top1_agreement_pct"].toDouble());
        }
        QCOMPARE(r["f32"]["mean_kld"].toDouble(), 0.0);
        // No --kv-cache-dtype: M in f32 as its base (weights alone); auto: the CPU's own (f16).
        bool given = false;
        const QJsonObject none = kld({}, &given);
        QVERIFY(given);
        QCOMPARE(none["kv_cache_dtype"].toString(), QString("f32"));
        QCOMPARE(none["mean_kld"].toDouble(), 0.0);
        const QJsonObject autoKv = kld({"--kv-cache-dtype", "auto"}, &given);
        QVERIFY(given);
        QCOMPARE(autoKv["kv_cache_dtype"].toString(), QString("f16"));
        QCOMPARE(autoKv["mean_kld"].toDouble(), r["f16"]["mean_kld"].toDouble());
        QVERIFY(r["f16"]["mean_kld"].toDouble() > 0);
        QVERIFY(r["f16"]["mean_kld"].toDouble() < r["int8"]["mean_kld"].toDouble());
        QVERIFY(r["int8"]["mean_kld"].toDouble() < r["fp8_e5m2"]["mean_kld"].toDouble());
        QVERIFY(r["int8"]["top1_agreement_pct"].toDouble() >= 95.0);
        QVERIFY(r["int8"]["mean_kld"].toDouble() < 0.01);

        // The same type on both sides: identical.
        bool ok = false;
        QJsonObject same = kld({"--kv-cache-dtype", "int8", "--base-kv-cache-dtype", "int8"}, &ok);
        QVERIFY(ok);
        QCOMPARE(same["mean_kld"].toDouble(), 0.0);
        QCOMPARE(same["base_kv_cache_dtype"].toString(), QString("int8"));

        // fp8 with calibrated scales: reported as such; text output names both caches.
        QJsonObject cal = kld({"--kv-cache-dtype", "fp8", "--calculate-kv-scales"}, &ok);
        QVERIFY(ok);
        QCOMPARE(cal["kv_scales"].toString(), QString("calibrated"));
        QCOMPARE(cal["base_kv_scales"].toString(), QString("none"));
        CliResult text = runCli({"kld", "--model", model_, "--file", path("text.txt"), "--device",
                                 "cpu", "--kv-cache-dtype", "fp8_e4m3"},
                                xdg_);
        CLI_VERIFY_OK(text);
        QVERIFY2(text.out.contains("KV cache         model fp8_e4m3 (scales 1.0), base f32"),
                 text.out.constData());
    }

    // The hidden int8 variants (simulated on an f32 cache) run and differ from f32.
    void int8Experiments() {
        for (const QString& e : QStringList{"tokenhead", "token", "kchannel"}) {
            bool ok = false;
            QJsonObject j = kld({"--kv-int8-experiment", e}, &ok);
            QVERIFY2(ok, qPrintable(e));
            QCOMPARE(j["kv_int8_experiment"].toString(), e);
            QCOMPARE(j["kv_cache_dtype"].toString(), QString("f32"));
            QVERIFY2(j["mean_kld"].toDouble() > 0, qPrintable(e));
            qInfo("simulated int8 %s: mean KLD %g", qPrintable(e), j["mean_kld"].toDouble());
        }
    }

    // --dtype bfloat16 (vLLM's flag): the F32 matrices of this model cast to BF16 at load.
    // generate reports it (JSON key and a stderr line with what was cast), kld measures the
    // rounding against the weights as stored (small, not zero; auto: zero), other values and a
    // CPU that cannot cast (panel layout off) are refused with the reason.
    void weightDtypeBfloat16() {
        for (const char* v : {"bfloat16", "bf16"}) {
            CliResult r =
                runCli({"generate", "--model", model_, "--device", "cpu", "--dtype", v, "--prompt",
                        "Once upon a time", "--max-tokens", "8", "--temperature", "0", "--json"},
                       xdg_);
            CLI_VERIFY_OK(r);
            bool ok = false;
            const QJsonObject j = parseJsonLine(r.out, &ok);
            QVERIFY(ok);
            QCOMPARE(j["dtype"].toString(), QString("bfloat16"));
            QCOMPARE(j["completion_tokens"].toInt(), 8);
            // 2 layers x 7 matrices, the embedding and the lm_head: F32 -> BF16 halves them.
            QVERIFY2(
                r.err.contains(
                    "--dtype bfloat16: 16 F32/F16 matrices cast to BF16 at load (1.9 -> 1.0 MiB)"),
                r.err.constData());
        }
        bool ok = false;
        const QJsonObject cast = kld({"--dtype", "bfloat16"}, &ok);
        QVERIFY(ok);
        QCOMPARE(cast["dtype"].toString(), QString("bfloat16"));
        qInfo("bfloat16 weights vs f32 weights: mean KLD %g, top-1 %.1f %%",
              cast["mean_kld"].toDouble(), cast["top1_agreement_pct"].toDouble());
        QVERIFY(cast["mean_kld"].toDouble() > 0);
        QVERIFY(cast["mean_kld"].toDouble() < 0.01);
        QVERIFY(cast["top1_agreement_pct"].toDouble() >= 95.0);
        const QJsonObject asStored = kld({"--dtype", "auto"}, &ok);
        QVERIFY(ok);
        QCOMPARE(asStored["mean_kld"].toDouble(), 0.0);

        for (const char* v : {"float16", "half", "float32", ""}) {
            CliResult r = runCli({"generate", "--model", model_, "--device", "cpu", "--dtype", v,
                                  "--prompt", "x", "--max-tokens", "1"},
                                 xdg_);
            QVERIFY(!r.ok() && !r.crashed);
            QVERIFY2(r.err.contains("--dtype must be auto or bfloat16"), r.err.constData());
        }
        qputenv("LLMWB_WEIGHT_LAYOUT", "rows");
        CliResult rows = runCli({"generate", "--model", model_, "--device", "cpu", "--dtype",
                                 "bfloat16", "--prompt", "x", "--max-tokens", "1"},
                                xdg_);
        qunsetenv("LLMWB_WEIGHT_LAYOUT");
        QVERIFY(!rows.ok() && !rows.crashed);
        QVERIFY2(rows.err.contains("--dtype bfloat16: the weights could not be cast: weight "
                                   "layout rows"),
                 rows.err.constData());
    }

    // info: bytes per block and tokens per GiB of every type.
    void infoCapacity() {
        bool ok = false;
        QJsonObject j = json({"info", "--model", model_, "--json"}, &ok);
        QVERIFY(ok);
        QMap<QString, QJsonObject> rows;
        for (const QJsonValue& v : j["kv_cache_by_dtype"].toArray())
            rows[v.toObject()["kv_cache_dtype"].toString()] = v.toObject();
        QCOMPARE(rows.size(), 6);
        // K and V x layers x 16 tokens x KV heads x head dim x bytes (int8: + an fp32 scale per
        // token and KV head)
        const int rowsPerBlock = 2 * j["layers"].toInt() * 16 * j["kv_heads"].toInt();
        const int hd = j["head_dim"].toInt();
        QVERIFY(rowsPerBlock > 0 && hd > 0);
        QCOMPARE(rows["f32"]["bytes_per_block"].toInt(), rowsPerBlock * hd * 4);
        QCOMPARE(rows["bf16"]["bytes_per_block"].toInt(), rowsPerBlock * hd * 2);
        QCOMPARE(rows["fp8_e5m2"]["bytes_per_block"].toInt(), rowsPerBlock * hd);
        QCOMPARE(rows["int8"]["bytes_per_block"].toInt(), rowsPerBlock * (hd + 4));
        QVERIFY(rows["int8"]["tokens_per_gib"].toInt() > 2 * rows["f32"]["tokens_per_gib"].toInt());
        CliResult t = runCli({"info", "--model", model_}, xdg_);
        CLI_VERIFY_OK(t);
        QVERIFY2(t.out.contains("KV by type     f32 "), t.out.constData());
    }
};

QTEST_GUILESS_MAIN(TstCliKvDtype)
#include "tst_cli_kv_dtype.moc"
