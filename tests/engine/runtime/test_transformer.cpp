// The CPU forward pass against the plain double-precision reference (reference_model.h), over
// paged KV with scattered block tables, several block sizes, architectures, file formats and
// weight types; batched prefill vs token-by-token decode; a varlen batch of two sequences.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/perplexity.h"
#include "engine/runtime/transformer.h"
#include "kernels/cpu/thread_pool.h"
#include "reference_model.h"
#include "runtime_test_models.h"

using namespace llmwb;
using namespace llmwb::test;

Q_DECLARE_METATYPE(llmwb::test::Shape)
Q_DECLARE_METATYPE(llmwb::ModelFileFormat)
Q_DECLARE_METATYPE(llmwb::WeightType)

namespace {

// max |got - ref| / max |ref|
double rel_diff(const float* got, const std::vector<double>& ref) {
    double md = 0, mr = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        md = std::max(md, std::abs(static_cast<double>(got[i]) - ref[i]));
        mr = std::max(mr, std::abs(ref[i]));
    }
    return mr > 0 ? md / mr : md;
}

std::vector<int32_t> make_prompt(int n, int32_t vocab, uint32_t seed) {
    std::vector<int32_t> ids(n);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ids[i] = static_cast<int32_t>((s >> 33) % static_cast<uint64_t>(vocab));
    }
    return ids;
}

// Blocks of a sequence taken from the end of the pool backwards, so tables are never 0,1,2...
std::vector<int32_t> scattered_blocks(int32_t count, int32_t num_blocks, int32_t stride) {
    std::vector<int32_t> t;
    for (int32_t i = 0; i < count; ++i) t.push_back((num_blocks - 1 - i * stride) % num_blocks);
    return t;
}

}  // namespace

class TestTransformer : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::map<QString, std::unique_ptr<LoadedModel>> models_;
    kernels::ThreadPool pool_{2};

    const LoadedModel* model(Shape shape, ModelFileFormat format, WeightType type) {
        const QString key = QString("%1-%2-%3")
                                .arg(static_cast<int>(shape))
                                .arg(format == ModelFileFormat::Gguf ? "gguf" : "st")
                                .arg(weight_type_name(type));
        auto it = models_.find(key);
        if (it != models_.end()) return it->second.get();
        std::string err;
        auto m = write_and_load(spec_for(shape, format, type), dir_.path().toStdString(),
                                key.toStdString(), &err);
        if (!m) {
            qWarning("%s", err.c_str());
            return nullptr;
        }
        return (models_[key] = std::move(m)).get();
    }

    // Prefill `n_prompt` tokens (all-row logits), then `n_decode` decode steps, on a scattered
    // block table; returns the worst relative difference to the reference over all rows.
    double run_vs_reference(const LoadedModel& m, int32_t block_size, int n_prompt,
                            int n_decode) {
        Transformer tf(m, pool_);
        const int32_t num_blocks = (n_prompt + n_decode) / block_size + 4;
        KvCacheStorage kv(m.config, num_blocks, block_size);
        const std::vector<int32_t> table =
            scattered_blocks((n_prompt + n_decode + block_size - 1) / block_size, num_blocks, 1);
        ReferenceModel ref(m);
        const int32_t V = tf.vocab_size();
        std::vector<int32_t> ids = make_prompt(n_prompt, V, 7);

        ForwardBatch batch;
        batch.add_sequence(ids, 0, table, block_size, ForwardBatch::Logits::All);
        if (Status st = batch.validate(block_size, num_blocks); !st)
            qFatal("%s", st.message().c_str());
        std::vector<float> logits(static_cast<size_t>(n_prompt) * V);
        tf.forward(batch, kv, logits.data());
        double worst = 0;
        std::vector<double> r;
        for (int i = 0; i < n_prompt; ++i) {
            r = ref.step(ids[i]);
            worst = std::max(worst, rel_diff(logits.data() + static_cast<size_t>(i) * V, r));
        }
        for (int s = 0; s < n_decode; ++s) {
            // Next token: the reference's argmax (a plausible continuation).
            const auto next =
                static_cast<int32_t>(std::max_element(r.begin(), r.end()) - r.begin());
            ids.push_back(next);
            batch.clear();
            batch.add_sequence(std::span<const int32_t>(&ids.back(), 1),
                               static_cast<int32_t>(ids.size() - 1), table, block_size,
                               ForwardBatch::Logits::Last);
            tf.forward(batch, kv, logits.data());
            r = ref.step(next);
            worst = std::max(worst, rel_diff(logits.data(), r));
        }
        return worst;
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void forward_matches_reference_data() {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<ModelFileFormat>("format");
        QTest::addColumn<int>("block_size");
        const std::pair<const char*, Shape> shapes[] = {{"llama", Shape::Llama},
                                                        {"llama3-rope", Shape::Llama3Rope},
                                                        {"qwen2", Shape::Qwen2},
                                                        {"qwen3", Shape::Qwen3}};
        for (auto [name, shape] : shapes)
            for (auto [fname, format] : {std::pair{"gguf", ModelFileFormat::Gguf},
                                         std::pair{"safetensors", ModelFileFormat::Safetensors}})
                for (int bs : {8, 16, 32})
                    QTest::addRow("%s-%s-bs%d", name, fname, bs) << shape << format << bs;
    }
    void forward_matches_reference() {
        QFETCH(Shape, shape);
        QFETCH(ModelFileFormat, format);
        QFETCH(int, block_size);
        const LoadedModel* m = model(shape, format, WeightType::F32);
        QVERIFY(m);
        // 41 prompt tokens end mid-block for 8, 16 and 32; 6 decode steps cross a boundary.
        const double d = run_vs_reference(*m, block_size, 41, 6);
        QVERIFY2(d < 1e-4, qPrintable(QString("relative diff %1").arg(d)));
    }

    void quantized_matches_reference_data() {
        QTest::addColumn<WeightType>("type");
        QTest::addColumn<double>("tolerance");
        // Float weights: fp32 activations, tight. Integer types quantize the activations to
        // 8 bits per block, so they differ from the exact product by ~1e-3..1e-2.
        QTest::newRow("f16") << WeightType::F16 << 1e-4;
        QTest::newRow("bf16") << WeightType::BF16 << 1e-4;
        QTest::newRow("q8_0") << WeightType::Q8_0 << 3e-2;
        QTest::newRow("q4_0") << WeightType::Q4_0 << 3e-2;
        QTest::newRow("q4_k") << WeightType::Q4_K << 3e-2;
        QTest::newRow("q6_k") << WeightType::Q6_K << 3e-2;
        QTest::newRow("q4_k_m") << WeightType::Q4_K_M << 3e-2;
    }
    void quantized_matches_reference() {
        QFETCH(WeightType, type);
        QFETCH(double, tolerance);
        const LoadedModel* m = model(Shape::Quant, ModelFileFormat::Gguf, type);
        QVERIFY(m);
        // The shape fits every block size, so the requested type is really used.
        const std::map<WeightType, DType> stored = {
            {WeightType::F16, DType::F16},   {WeightType::BF16, DType::BF16},
            {WeightType::Q8_0, DType::Q8_0}, {WeightType::Q4_0, DType::Q4_0},
            {WeightType::Q4_K, DType::Q4_K}, {WeightType::Q6_K, DType::Q6_K}};
        if (stored.count(type)) {
            QCOMPARE(m->weights.layers[0].wq.type, stored.at(type));
            QCOMPARE(m->weights.layers[1].w_down.type, stored.at(type));
        }
        const double d = run_vs_reference(*m, 16, 37, 4);
        qInfo("%s: relative diff %.3g", weight_type_name(type), d);
        QVERIFY2(d < tolerance, qPrintable(QString("relative diff %1").arg(d)));
    }

    void gguf_equals_safetensors_data() {
        QTest::addColumn<Shape>("shape");
        // llama: interleaved RoPE on permuted Q/K rows vs rotate-half; llama3: rope_freqs
        // tensor vs config rope_scaling; qwen2/qwen3: rotate-half in both.
        QTest::newRow("llama") << Shape::Llama;
        QTest::newRow("llama3-rope") << Shape::Llama3Rope;
        QTest::newRow("qwen2") << Shape::Qwen2;
        QTest::newRow("qwen3") << Shape::Qwen3;
    }
    void gguf_equals_safetensors() {
        QFETCH(Shape, shape);
        const LoadedModel* g = model(shape, ModelFileFormat::Gguf, WeightType::F32);
        const LoadedModel* s = model(shape, ModelFileFormat::Safetensors, WeightType::F32);
        QVERIFY(g && s);
        if (shape == Shape::Llama || shape == Shape::Llama3Rope) {
            QCOMPARE(g->config.rope_style, RopeStyle::Interleaved);
            QCOMPARE(s->config.rope_style, RopeStyle::RotateHalf);
        }
        if (shape == Shape::Llama3Rope) QVERIFY(g->weights.rope_freqs.present());
        std::vector<std::vector<float>> out[2];
        const LoadedModel* ms[2] = {g, s};
        for (int k = 0; k < 2; ++k) {
            Transformer tf(*ms[k], pool_);
            KvCacheStorage kv(ms[k]->config, 8, 16);
            std::vector<int32_t> table = {3, 1, 6, 0};
            std::vector<int32_t> ids = make_prompt(50, tf.vocab_size(), 3);
            ForwardBatch b;
            b.add_sequence(ids, 0, table, 16, ForwardBatch::Logits::All);
            std::vector<float> logits(ids.size() * tf.vocab_size());
            tf.forward(b, kv, logits.data());
            for (size_t i = 0; i < ids.size(); ++i)
                out[k].emplace_back(logits.begin() + i * tf.vocab_size(),
                                    logits.begin() + (i + 1) * tf.vocab_size());
        }
        double worst = 0;
        for (size_t i = 0; i < out[0].size(); ++i) {
            std::vector<double> r(out[1][i].begin(), out[1][i].end());
            worst = std::max(worst, rel_diff(out[0][i].data(), r));
        }
        qInfo("gguf vs safetensors: relative diff %.3g", worst);
        QVERIFY2(worst < 1e-5, qPrintable(QString("relative diff %1").arg(worst)));
    }

    void batched_prefill_equals_token_by_token_data() {
        QTest::addColumn<WeightType>("type");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("f32") << WeightType::F32 << 1e-5;
        QTest::newRow("f16") << WeightType::F16 << 1e-5;
        // Integer types: the matrix-matrix and matrix-vector kernels sum blocks in a different
        // order; a 1e-7 difference that moves an 8-bit activation across a rounding boundary
        // downstream shows up as ~1e-3..1e-2. Same bound as against the reference.
        QTest::newRow("q8_0") << WeightType::Q8_0 << 3e-2;
        QTest::newRow("q4_k") << WeightType::Q4_K << 3e-2;
    }
    void batched_prefill_equals_token_by_token() {
        QFETCH(WeightType, type);
        QFETCH(double, tolerance);
        const LoadedModel* m = model(Shape::Quant, ModelFileFormat::Gguf, type);
        QVERIFY(m);
        Transformer tf(*m, pool_);
        const int32_t V = tf.vocab_size();
        const int n = 40;
        std::vector<int32_t> ids = make_prompt(n, V, 11);
        std::vector<int32_t> table = {2, 0, 3};
        KvCacheStorage kv_a(m->config, 4, 16), kv_b(m->config, 4, 16);

        ForwardBatch b;
        b.add_sequence(ids, 0, table, 16, ForwardBatch::Logits::All);
        std::vector<float> batched(static_cast<size_t>(n) * V);
        tf.forward(b, kv_a, batched.data());

        std::vector<float> one(V);
        double worst = 0;
        for (int i = 0; i < n; ++i) {
            b.clear();
            b.add_sequence(std::span<const int32_t>(&ids[i], 1), i, table, 16,
                           ForwardBatch::Logits::Last);
            tf.forward(b, kv_b, one.data());
            std::vector<double> r(one.begin(), one.end());
            worst = std::max(worst, rel_diff(batched.data() + static_cast<size_t>(i) * V, r));
        }
        qInfo("%s batched vs token-by-token: relative diff %.3g", weight_type_name(type), worst);
        QVERIFY2(worst < tolerance, qPrintable(QString("relative diff %1").arg(worst)));
    }

    // Two sequences in one varlen batch, then a mixed step (one decode token + a prefill chunk),
    // each checked against its own reference run.
    void varlen_batch_of_two_sequences() {
        const LoadedModel* m = model(Shape::Qwen3, ModelFileFormat::Gguf, WeightType::F32);
        QVERIFY(m);
        Transformer tf(*m, pool_);
        const int32_t V = tf.vocab_size(), bs = 8;
        KvCacheStorage kv(m->config, 12, bs);
        const std::vector<int32_t> ta = {5, 2, 9, 11}, tb = {0, 7, 3, 10, 1};
        std::vector<int32_t> a = make_prompt(21, V, 1), b = make_prompt(30, V, 2);
        ReferenceModel ra(*m), rb(*m);

        ForwardBatch batch;
        batch.add_sequence(std::span(a).first(20), 0, ta, bs, ForwardBatch::Logits::Last);
        batch.add_sequence(std::span(b).first(13), 0, tb, bs, ForwardBatch::Logits::All);
        QVERIFY(batch.validate(bs, kv.num_blocks()).ok());
        QCOMPARE(batch.max_blocks_per_seq, 5);
        std::vector<float> logits(14 * static_cast<size_t>(V));
        tf.forward(batch, kv, logits.data());
        std::vector<double> r;
        for (int i = 0; i < 20; ++i) r = ra.step(a[i]);
        QVERIFY(rel_diff(logits.data(), r) < 1e-4);
        for (int i = 0; i < 13; ++i) {
            r = rb.step(b[i]);
            QVERIFY2(rel_diff(logits.data() + static_cast<size_t>(1 + i) * V, r) < 1e-4,
                     qPrintable(QString("row %1").arg(i)));
        }

        batch.clear();
        batch.add_sequence(std::span(a).subspan(20, 1), 20, ta, bs, ForwardBatch::Logits::Last);
        batch.add_sequence(std::span(b).subspan(13, 17), 13, tb, bs, ForwardBatch::Logits::Last);
        QVERIFY(batch.validate(bs, kv.num_blocks()).ok());
        tf.forward(batch, kv, logits.data());
        r = ra.step(a[20]);
        QVERIFY(rel_diff(logits.data(), r) < 1e-4);
        for (int i = 13; i < 30; ++i) r = rb.step(b[i]);
        QVERIFY(rel_diff(logits.data() + V, r) < 1e-4);
    }

    void perplexity_matches_reference() {
        const LoadedModel* m = model(Shape::Llama, ModelFileFormat::Gguf, WeightType::F32);
        QVERIFY(m);
        Transformer tf(*m, pool_);
        KvCacheStorage kv(m->config, 8, 16);
        std::vector<int32_t> ids = make_prompt(45, tf.vocab_size(), 5);
        PerplexityOptions opt;
        opt.chunk = 16;  // 3 chunks
        auto res = perplexity(tf, kv, ids, opt);
        QVERIFY2(res.ok(), res.ok() ? "" : res.message().c_str());
        QCOMPARE(res->logprobs.size(), ids.size() - 1);
        ReferenceModel ref(*m);
        double sum = 0;
        for (size_t i = 0; i + 1 < ids.size(); ++i) {
            std::vector<double> r = ref.step(ids[i]);
            double mx = *std::max_element(r.begin(), r.end()), z = 0;
            for (double v : r) z += std::exp(v - mx);
            const double lp = r[ids[i + 1]] - mx - std::log(z);
            sum += lp;
            QVERIFY2(std::abs(res->logprobs[i] - lp) < 1e-4,
                     qPrintable(QString("token %1: %2 vs %3").arg(i).arg(res->logprobs[i]).arg(lp)));
        }
        QVERIFY(std::abs(res->ppl - std::exp(-sum / (ids.size() - 1))) < 1e-3 * res->ppl);

        auto too_short = perplexity(tf, kv, std::span(ids).first(1));
        QVERIFY(!too_short.ok());
        QVERIFY(too_short.message().find("at least 2") != std::string::npos);
        std::vector<int32_t> bad = {1, tf.vocab_size()};
        QVERIFY(!perplexity(tf, kv, bad).ok());
        std::vector<int32_t> long_ids = make_prompt(129, tf.vocab_size(), 9);  // > 8 * 16 slots
        auto too_long = perplexity(tf, kv, long_ids);
        QVERIFY(!too_long.ok());
        QVERIFY(too_long.message().find("context") != std::string::npos);
    }

    void forward_batch_validate_data() {
        QTest::addColumn<int>("corruption");
        QTest::addColumn<QString>("keyword");
        QTest::newRow("valid") << 0 << "";
        QTest::newRow("slot") << 1 << "slot";
        QTest::newRow("position") << 2 << "position";
        QTest::newRow("block id") << 3 << "out of range";
        QTest::newRow("context") << 4 << "exceeds";
        QTest::newRow("logits row") << 5 << "logits row";
        QTest::newRow("lengths") << 6 << "length";
    }
    void forward_batch_validate() {
        QFETCH(int, corruption);
        QFETCH(QString, keyword);
        ForwardBatch b;
        const std::vector<int32_t> t = {1, 2, 3}, blocks = {4, 1, 3};
        b.add_sequence(t, 14, blocks, 8, ForwardBatch::Logits::Last);  // positions 14..16
        QCOMPARE(b.slot_mapping[0], int64_t{1 * 8 + 6});  // position 14: block 1, offset 6
        QCOMPARE(b.slot_mapping[2], int64_t{3 * 8 + 0});  // position 16: block 3, offset 0
        QCOMPARE(b.context_lens[0], 17);
        QCOMPARE(b.logits_rows, std::vector<int32_t>{2});
        switch (corruption) {
        case 1: b.slot_mapping[1] += 1; break;
        case 2: b.positions[1] = 3; break;
        case 3: b.block_tables[2] = 7; break;
        case 4: b.context_lens[0] = 25; break;
        case 5: b.logits_rows.push_back(3); break;
        case 6: b.positions.pop_back(); break;
        }
        Status st = b.validate(8, 5);
        if (corruption == 0) {
            QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        } else {
            QVERIFY(!st.ok());
            QVERIFY2(st.message().find(keyword.toStdString()) != std::string::npos,
                     st.message().c_str());
        }
    }

    void kv_cache_storage() {
        ModelConfig c;
        c.num_layers = 3;
        c.num_kv_heads = 2;
        c.head_dim = 16;
        QCOMPARE(KvCacheStorage::bytes_per_block(c, 16), int64_t{2 * 3 * 2 * 16 * 16 * 4});
        auto kv = KvCacheStorage::create(c, 10, 16);
        QVERIFY(kv.ok());
        QCOMPARE((*kv)->total_bytes(), 10 * KvCacheStorage::bytes_per_block(c, 16));
        QCOMPARE((*kv)->v_slot(2, 17) - (*kv)->v(2), std::ptrdiff_t{17 * 32});
        auto bad = KvCacheStorage::create(c, 10, 12);
        QVERIFY(!bad.ok());
        QVERIFY(bad.message().find("block_size") != std::string::npos);
        QVERIFY(!KvCacheStorage::create(c, 0, 16).ok());

        SequenceBlocks sb(16, 3);
        QVERIFY(sb.reserve(17));
        QCOMPARE(sb.table().size(), size_t{2});
        QVERIFY(sb.reserve(48));
        QVERIFY(!sb.reserve(49));
    }
};

QTEST_GUILESS_MAIN(TestTransformer)
#include "test_transformer.moc"
