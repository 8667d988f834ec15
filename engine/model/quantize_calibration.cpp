#include "engine/model/quantize_calibration.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "engine/model/loaded_model.h"
#include "engine/model/quant_recipe.h"
#include "engine/model/weight_plan.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

Result<ImportanceMatrix> gather_importance(const std::string& model_path, const std::string& text,
                                           int max_tokens, int threads,
                                           const std::atomic<bool>* cancel,
                                           const std::function<void(int, int)>& progress) {
    auto m = load_model(model_path);
    if (!m)
        return m.error();
    const LoadedModel& model = *m.value();
    auto tok = Tokenizer::create(model.tokenizer);
    if (!tok)
        return tok.error();
    std::vector<int32_t> ids = tok.value()->encode(text, true);
    if (ids.size() < 2)
        return make_error("calibration text: fewer than 2 tokens");
    if (max_tokens > 0 && ids.size() > size_t(max_tokens))
        ids.resize(size_t(max_tokens));
    const int32_t chunk = std::min<int32_t>(kCalibrationChunk, model.config.max_position);

    // GGUF name of every weight matrix the transformer multiplies with, by its data pointer.
    std::map<const void*, std::string> names;
    for (const PlannedTensor& p : plan_tensors(model.config, false)) {
        const TensorView* v = planned_view(model.weights, p);
        if (v && v->present() && !p.vector && p.role != TensorRole::TokEmbd &&
            p.role != TensorRole::Output) {
            names[v->data] = p.gguf_name;
        }
    }
    ImportanceMatrix im;
    std::map<const void*, ImportanceEntry*> entries;
    for (const auto& [data, name] : names)
        entries[data] = &im.entries[name];

    kernels::ThreadPool pool(threads);
    CpuTransformer tf(model, pool);
    std::mutex mu; // the observer runs on the calling thread; the lock documents the invariant
    tf.set_matmul_observer([&](const TensorView& w, const float* x, int32_t n) {
        auto it = entries.find(w.data);
        if (it == entries.end())
            return;
        std::lock_guard<std::mutex> lock(mu);
        ImportanceEntry& e = *it->second;
        if (e.sum2.empty())
            e.sum2.assign(size_t(w.cols), 0.0f);
        // Sums over each column; per token in float, across tokens accumulated in double.
        std::vector<double> acc(size_t(w.cols), 0.0);
        for (int32_t t = 0; t < n; ++t) {
            const float* row = x + int64_t(t) * w.cols;
            for (int64_t c = 0; c < w.cols; ++c)
                acc[size_t(c)] += double(row[c]) * row[c];
        }
        for (int64_t c = 0; c < w.cols; ++c)
            e.sum2[size_t(c)] += float(acc[size_t(c)]);
        e.count += float(n);
    });

    const int32_t block = KvCacheStorage::kDefaultBlockSize;
    const int32_t n_blocks = (chunk + block - 1) / block;
    auto kv = KvCacheStorage::create(model.config, n_blocks, block);
    if (!kv)
        return kv.error();
    SequenceBlocks blocks(block, n_blocks);
    ForwardBatch batch;
    std::vector<float> logits(size_t(tf.vocab_size()));
    const int total = int(ids.size());
    for (int pos = 0; pos < total; pos += chunk) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return make_error("cancelled");
        const int len = std::min<int>(chunk, total - pos);
        if (!blocks.reserve(len))
            return make_error("calibration: the KV cache is too small");
        batch.clear();
        batch.add_sequence(std::span<const int32_t>(ids.data() + pos, size_t(len)), 0,
                           blocks.table(), block, ForwardBatch::Logits::Last);
        tf.forward(batch, *kv.value(), logits.data());
        ++im.chunk_count;
        if (progress)
            progress(pos + len, total);
    }
    im.chunk_size = chunk;
    for (auto it = im.entries.begin(); it != im.entries.end();) {
        if (it->second.sum2.empty())
            it = im.entries.erase(it); // a matrix the forward pass never reached
        else
            ++it;
    }
    return im;
}

} // namespace llmwb
