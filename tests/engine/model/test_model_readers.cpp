// The readers on their own: every truncation and many random corruptions of valid files are
// rejected (or parsed) without crashing; sharded safetensors folders; the demo tokenizer and
// the demo model.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <set>

#include "engine/model/demo_model.h"
#include "engine/model/demo_tokenizer.h"
#include "engine/model/gguf_file.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/model/safetensors_file.h"
#include "engine/model/safetensors_writer.h"

using namespace llmwb;
namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

std::span<const uint8_t> span_of(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

ModelWriterSpec tiny_spec() {
    ModelWriterSpec s;
    s.arch = Architecture::Qwen3;
    s.hidden_size = 32;
    s.intermediate_size = 64;
    s.num_layers = 1;
    s.num_heads = 2;
    s.num_kv_heads = 1;
    s.weight_type = WeightType::Q8_0;
    return s;
}

bool one_line(const std::string& m) {
    return !m.empty() && m.find('\n') == std::string::npos;
}

} // namespace

class ModelReadersTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    void everyGgufTruncationIsAnError() {
        const std::string p = dir_.filePath("t.gguf").toStdString();
        QVERIFY(write_model(tiny_spec(), p).ok());
        const std::string bytes = read_file(p);
        QVERIFY(GgufFile::parse(span_of(bytes), "t").ok());
        // Every prefix up to the data section, then a stride through the data.
        auto full = GgufFile::parse(span_of(bytes), "t");
        const size_t data_start = size_t(full->data_offset);
        for (size_t n = 0; n < bytes.size(); n += (n < data_start ? 1 : 61)) {
            std::string cut = bytes.substr(0, n);
            auto r = GgufFile::parse(span_of(cut), "cut");
            QVERIFY2(!r.ok(), qPrintable(QString("prefix %1 parsed").arg(n)));
            QVERIFY(one_line(r.message()));
        }
    }

    void randomGgufCorruptionsNeverCrash() {
        const std::string p = dir_.filePath("c.gguf").toStdString();
        QVERIFY(write_model(tiny_spec(), p).ok());
        const std::string bytes = read_file(p);
        auto full = GgufFile::parse(span_of(bytes), "c");
        QVERIFY(full.ok());
        const size_t header = size_t(full->data_offset);
        uint64_t state = 42;
        auto next = [&] {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            return state >> 33;
        };
        int rejected = 0;
        for (int i = 0; i < 3000; ++i) {
            std::string b = bytes;
            const int flips = 1 + int(next() % 4);
            for (int k = 0; k < flips; ++k)
                b[next() % header] = char(next());
            auto r = GgufFile::parse(span_of(b), "c");
            if (!r.ok()) {
                ++rejected;
                QVERIFY(one_line(r.message()));
            }
        }
        QVERIFY(rejected > 100);
    }

    void everySafetensorsTruncationIsAnError() {
        ModelWriterSpec s = tiny_spec();
        s.format = ModelFileFormat::Safetensors;
        s.weight_type = WeightType::BF16;
        const std::string d = dir_.filePath("st").toStdString();
        QVERIFY(write_model(s, d).ok());
        const std::string bytes = read_file(d + "/model.safetensors");
        QVERIFY(SafetensorsFile::parse(span_of(bytes), "st").ok());
        for (size_t n = 0; n < bytes.size(); n += 7) {
            std::string cut = bytes.substr(0, n);
            auto r = SafetensorsFile::parse(span_of(cut), "cut");
            QVERIFY2(!r.ok(), qPrintable(QString("prefix %1 parsed").arg(n)));
            QVERIFY(one_line(r.message()));
        }
    }

    // A folder whose tensors are split over two shards + index.json loads the same weights.
    void shardedSafetensors() {
        ModelWriterSpec s = tiny_spec();
        s.format = ModelFileFormat::Safetensors;
        s.weight_type = WeightType::F32;
        const std::string single = dir_.filePath("single").toStdString();
        const std::string sharded = dir_.filePath("sharded").toStdString();
        QVERIFY(write_model(s, single).ok());
        fs::create_directories(sharded);
        for (const char* f : {"config.json", "tokenizer.json", "tokenizer_config.json"}) {
            fs::copy_file(single + "/" + f, sharded + "/" + f);
        }
        auto src = SafetensorsFile::open(single + "/model.safetensors");
        QVERIFY(src.ok());
        const auto& ts = src->tensors;
        std::string index = "{\"metadata\": {}, \"weight_map\": {";
        for (int shard = 0; shard < 2; ++shard) {
            SafetensorsWriter w;
            const std::string name =
                "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
            for (size_t i = shard; i < ts.size(); i += 2)
                w.add_tensor(ts[i].name, ts[i].type, ts[i].shape);
            QVERIFY(w.begin(sharded + "/" + name, {}).ok());
            for (size_t i = shard; i < ts.size(); i += 2) {
                QVERIFY(w.append(ts[i].data, size_t(ts[i].bytes)).ok());
                index +=
                    (index.back() == '{' ? "\"" : ", \"") + ts[i].name + "\": \"" + name + "\"";
            }
            QVERIFY(w.finish().ok());
        }
        index += "}}";
        std::ofstream(sharded + "/model.safetensors.index.json") << index;
        auto a = load_model(single);
        auto b = load_model(sharded);
        QVERIFY2(a.ok(), a.ok() ? "" : a.message().c_str());
        QVERIFY2(b.ok(), b.ok() ? "" : b.message().c_str());
        QCOMPARE(b.value()->mappings.size(), size_t(2));
        const TensorView& x = a.value()->weights.layers[0].w_down;
        const TensorView& y = b.value()->weights.layers[0].w_down;
        QCOMPARE(std::memcmp(x.data, y.data, size_t(x.rows * x.row_bytes())), 0);
        QCOMPARE(a.value()->weight_bytes, b.value()->weight_bytes);
    }

    void demoTokenizer() {
        TokenizerFiles a = make_demo_tokenizer();
        TokenizerFiles b = make_demo_tokenizer();
        QCOMPARE(a.data.tokens, b.data.tokens); // deterministic
        QCOMPARE(a.data.merges, b.data.merges);
        QVERIFY(a.data.merges.size() >= 200);
        std::set<std::string> merged;
        for (const auto& [x, y] : a.data.merges)
            merged.insert(x + y);
        QCOMPARE(a.data.tokens.size(), 256 + merged.size() + 3);
        std::set<std::string> unique(a.data.tokens.begin(), a.data.tokens.end());
        QCOMPARE(unique.size(), a.data.tokens.size());
        QCOMPARE(a.data.tokens[size_t('a')], std::string("a"));
        QCOMPARE(a.data.tokens[size_t(' ')], std::string("\xC4\xA0")); // GPT-2 "Ġ"
        QCOMPARE(a.data.tokens[size_t(a.data.eos_id)], std::string("<|im_end|>"));
        QCOMPARE(a.data.added_tokens.size(), size_t(3));
        for (const auto& t : a.data.added_tokens)
            QVERIFY(t.special);
        QCOMPARE(a.data.pre_tokenizer, std::string("qwen2"));
        QVERIFY(a.chat_template &&
                a.chat_template->find("add_generation_prompt") != std::string::npos);
        // Common words were learned as single tokens.
        QVERIFY(unique.count("\xC4\xA0the"));
        QVERIFY(unique.count("\xC4\xA0model"));
    }

    // The tokenizer.json written for the demo tokenizer reads back as the same tokenizer.
    void demoTokenizerFilesReadBack() {
        TokenizerFiles a = make_demo_tokenizer();
        const std::string tj = dir_.filePath("tokenizer.json").toStdString();
        const std::string tc = dir_.filePath("tokenizer_config.json").toStdString();
        std::ofstream(tj) << tokenizer_json_text(a.data);
        std::ofstream(tc) << tokenizer_config_json_text(a.data, a.chat_template);
        auto r = read_tokenizer_files(tj, tc);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(r->data.merges, a.data.merges);
        QCOMPARE(r->data.eos_id, a.data.eos_id);
        QCOMPARE(r->chat_template, a.chat_template);
        for (size_t i = 0; i < r->data.tokens.size() && i < 256 + a.data.merges.size(); ++i) {
            QCOMPARE(r->data.tokens[i], a.data.tokens[i]);
        }
        QCOMPARE(r->data.added_tokens.size(), size_t(3));
    }

    void demoModel() {
        const std::string d = dir_.filePath("demo").toStdString();
        auto p = ensure_demo_model(d);
        QVERIFY2(p.ok(), p.ok() ? "" : p.message().c_str());
        QVERIFY(p.value().find(kDemoModelFileName) != std::string::npos);
        auto m = load_model(p.value());
        QVERIFY(m.ok());
        QCOMPARE(m.value()->name, std::string(kDemoModelName));
        QCOMPARE(m.value()->config.arch, Architecture::Qwen2);
        QVERIFY(m.value()->chat_template.has_value());
        QCOMPARE(m.value()->tokenizer.tokens[size_t(m.value()->tokenizer.eos_id)],
                 std::string("<|im_end|>"));
        // Reused when it loads (not rewritten) ...
        const auto t0 = fs::last_write_time(p.value());
        auto again = ensure_demo_model(d);
        QVERIFY(again.ok());
        QCOMPARE(fs::last_write_time(again.value()), t0);
        // ... rewritten when broken; no temp files are left behind.
        std::ofstream(p.value(), std::ios::trunc) << "broken";
        auto fixed = ensure_demo_model(d);
        QVERIFY(fixed.ok());
        QVERIFY(load_model(fixed.value()).ok());
        int files = 0;
        for (auto& e : fs::directory_iterator(d)) {
            (void)e;
            ++files;
        }
        QCOMPARE(files, 1);
    }
};

QTEST_APPLESS_MAIN(ModelReadersTest)
#include "test_model_readers.moc"
