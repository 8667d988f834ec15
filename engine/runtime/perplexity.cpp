#include "engine/runtime/perplexity.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/runtime/cpu_executor.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/sampler.h"

namespace llmwb {

Result<PerplexityResult> perplexity(CpuTransformer& model, KvCacheStorage& kv,
                                    std::span<const int32_t> ids,
                                    const PerplexityOptions& options) {
    CpuExecutor exec(model, kv);
    return perplexity(exec, ids, options);
}

Result<PerplexityResult> perplexity(ModelExecutor& exec, std::span<const int32_t> ids,
                                    const PerplexityOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto n = static_cast<int64_t>(ids.size());
    if (n < 2)
        return make_error("perplexity: needs at least 2 tokens, got " + std::to_string(n));
    const int32_t vocab = exec.vocab_size();
    for (int32_t id : ids)
        if (id < 0 || id >= vocab)
            return make_error("perplexity: token id " + std::to_string(id) +
                              " is outside the vocabulary (size " + std::to_string(vocab) + ")");
    int64_t ctx_limit = static_cast<int64_t>(exec.num_blocks()) * exec.block_size();
    if (exec.config().max_position > 0)
        ctx_limit = std::min<int64_t>(ctx_limit, exec.config().max_position);
    if (n > ctx_limit)
        return make_error("perplexity: " + std::to_string(n) + " tokens do not fit a context of " +
                          std::to_string(ctx_limit));

    int64_t chunk = options.chunk > 0 ? options.chunk
                                      : std::clamp<int64_t>((int64_t{32} << 20) / vocab, 1, 512);
    SequenceBlocks blocks(exec.block_size(), exec.num_blocks());
    ForwardBatch batch;
    std::vector<float> logits(static_cast<size_t>(std::min(chunk, n) * vocab)); // [chunk][vocab]

    PerplexityResult res;
    res.tokens = n;
    res.logprobs.reserve(n - 1);
    // Positions 0 .. n-2 predict the next token; the last token needs no logits.
    for (int64_t pos = 0; pos < n - 1; pos += chunk) {
        const int64_t len = std::min(chunk, n - 1 - pos);
        blocks.reserve(pos + len);
        batch.clear();
        batch.add_sequence(ids.subspan(pos, len), static_cast<int32_t>(pos), blocks.table(),
                           exec.block_size(), ForwardBatch::Logits::All);
        if (Status st = exec.forward(batch, logits.data()); !st)
            return st.error();
        for (int64_t i = 0; i < len; ++i) {
            std::span<const float> row(logits.data() + i * vocab, vocab);
            res.logprobs.push_back(log_softmax_at(row, ids[pos + i + 1]));
        }
    }
    double sum = 0;
    for (double lp : res.logprobs)
        sum += lp;
    res.mean_logprob = sum / static_cast<double>(res.logprobs.size());
    res.ppl = std::exp(-res.mean_logprob);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0)
        res.tokens_per_s = static_cast<double>(n - 1) / s;
    return res;
}

} // namespace llmwb
