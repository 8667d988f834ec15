// The writer with real Hugging Face tokenizer folders (fetched test assets): GGUF files carry
// the tokenizer as tokenizer.ggml.* metadata, safetensors folders copy the files; both load
// back with the same vocabulary, special tokens and chat template.
#include <QTemporaryDir>
#include <QtTest>
#include <cstdlib>
#include <filesystem>

#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/tokenizer/tokenizer_files.h"

using namespace llmwb;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(llmwb::Architecture)

class RealTokenizersTest : public QObject {
    Q_OBJECT

  private slots:
    void writeAndLoad_data() {
        QTest::addColumn<QString>("tokenizer");
        QTest::addColumn<Architecture>("arch");
        QTest::addColumn<bool>("spm");
        QTest::newRow("qwen3") << "qwen3" << Architecture::Qwen3 << false;
        QTest::newRow("llama2") << "llama2" << Architecture::Llama << true;
        QTest::newRow("llama3_1") << "llama3_1" << Architecture::Llama << false;
    }

    void writeAndLoad() {
        QFETCH(QString, tokenizer);
        QFETCH(Architecture, arch);
        QFETCH(bool, spm);
        const char* env = std::getenv("LLMWB_TEST_ASSETS");
        const std::string assets =
            env && *env ? env : std::string(std::getenv("HOME")) + "/.cache/llmwb/test-assets";
        const std::string tok_dir = assets + "/tokenizers/" + tokenizer.toStdString();
        QVERIFY2(fs::exists(tok_dir + "/tokenizer.json"),
                 qPrintable(QString::fromStdString(tok_dir) +
                            " missing: run scripts/fetch-test-assets.sh"));
        auto ref =
            read_tokenizer_files(tok_dir + "/tokenizer.json", tok_dir + "/tokenizer_config.json");
        QVERIFY2(ref.ok(), ref.ok() ? "" : ref.message().c_str());

        QTemporaryDir dir;
        ModelWriterSpec spec;
        spec.arch = arch;
        spec.tokenizer_dir = tok_dir;
        spec.hidden_size = 32;
        spec.intermediate_size = 64;
        spec.num_layers = 1;
        spec.num_heads = 2;
        spec.num_kv_heads = 1;
        spec.tie_word_embeddings = true;
        spec.weight_type = WeightType::F16;
        const std::string gp = dir.filePath("m.gguf").toStdString();
        const std::string hp = dir.filePath("hf").toStdString();
        Status s = write_model(spec, gp);
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        spec.format = ModelFileFormat::Safetensors;
        s = write_model(spec, hp);
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QVERIFY(fs::exists(hp + "/tokenizer.json") && fs::exists(hp + "/tokenizer_config.json"));

        auto g = load_model(gp);
        auto h = load_model(hp);
        QVERIFY2(g.ok(), g.ok() ? "" : g.message().c_str());
        QVERIFY2(h.ok(), h.ok() ? "" : h.message().c_str());
        const TokenizerData& gt = g.value()->tokenizer;
        const TokenizerData& ht = h.value()->tokenizer;
        const TokenizerData& rt = ref->data;
        QCOMPARE(g.value()->config.vocab_size, h.value()->config.vocab_size);
        QCOMPARE(gt.kind,
                 spm ? TokenizerData::Kind::SentencePieceBpe : TokenizerData::Kind::ByteLevelBpe);
        QCOMPARE(ht.kind, rt.kind);
        QCOMPARE(gt.kind, rt.kind);
        QCOMPARE(gt.bos_id, rt.bos_id);
        QCOMPARE(gt.eos_id, rt.eos_id);
        QCOMPARE(gt.add_bos, rt.add_bos);
        QCOMPARE(gt.add_eos, rt.add_eos);
        QCOMPARE(gt.merges, rt.merges);
        if (!spm)
            QCOMPARE(gt.pre_tokenizer, rt.pre_tokenizer);
        for (size_t i = 0; i < rt.tokens.size(); ++i) {
            if (gt.tokens[i] != rt.tokens[i] && !rt.tokens[i].empty()) {
                QFAIL(qPrintable(QString("token %1 differs").arg(i)));
            }
        }
        // Every added token of tokenizer.json is an added token of the GGUF, same id/special.
        for (const auto& a : rt.added_tokens) {
            bool found = false;
            for (const auto& b : gt.added_tokens) {
                if (b.id == a.id) {
                    found = true;
                    QCOMPARE(b.content, a.content);
                    QCOMPARE(b.special, a.special);
                }
            }
            QVERIFY2(found, a.content.c_str());
        }
        // End-of-turn tokens known to the GGUF loader (the HF reader may list more).
        for (int32_t id : gt.eot_ids)
            QVERIFY(id != gt.eos_id);
        QCOMPARE(g.value()->chat_template, ref->chat_template);
        QCOMPARE(h.value()->chat_template, ref->chat_template);
        QCOMPARE(g.value()->config.rope_style,
                 arch == Architecture::Llama ? RopeStyle::Interleaved : RopeStyle::RotateHalf);
    }
};

QTEST_APPLESS_MAIN(RealTokenizersTest)
#include "test_model_real_tokenizers.moc"
