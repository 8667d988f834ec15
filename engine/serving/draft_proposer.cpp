#include "engine/serving/draft_proposer.h"

#include <algorithm>
#include <set>

#include "engine/runtime/host_memory.h"
#include "engine/runtime/sampler.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

namespace {

constexpr int32_t kDraftBlockSize = 16;
constexpr int32_t kChunkTokens = 256; // catch-up tokens per request and forward
constexpr int32_t kBatchTokens = 512; // tokens per batched forward
// Catch-up tokens per request and step: a long prompt is caught up over several steps (no
// drafts for it meanwhile) instead of stalling one step for the whole prompt.
constexpr int32_t kMaxCatchUpPerStep = 1024;

// Texts whose token ids must be the same under both tokenizers: prose, code, digits, other
// scripts, emoji, whitespace runs and the chat markers of common templates.
const char* const kProbeTexts[] = {
    "The quick brown fox jumps over the lazy dog. It was 3:45 pm on 2024-06-01.",
    "def f(x):\n    return [i * 2 for i in range(x)]  # double\n\n\tprint(f(10))",
    "Speculative decoding verifies k draft tokens in one forward pass of the target model.",
    "12345678901234567890 3.14159 -42 0x1F 1e-9 100%",
    "\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c\xe3\x80\x82 "
    "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 \xf0\x9f\x98\x80\xf0\x9f\x9a\x80",
    "   leading and    inner   spaces\n\n\nand newlines\r\n",
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
};

std::string ids_text(const std::vector<int32_t>& ids, size_t from) {
    std::string s = "[";
    for (size_t i = from; i < ids.size() && i < from + 6; ++i)
        s += (i > from ? " " : "") + std::to_string(ids[i]);
    return s + (ids.size() > from + 6 ? " ...]" : "]");
}

// Empty when the tokenizers agree, else a message naming the first ids that differ.
std::string tokenizer_mismatch(const Tokenizer& draft, const Tokenizer& target) {
    for (const char* text : kProbeTexts) {
        const auto a = target.encode(text, false), b = draft.encode(text, false);
        if (a == b)
            continue;
        size_t i = 0;
        while (i < a.size() && i < b.size() && a[i] == b[i])
            ++i;
        std::string shown(text);
        if (shown.size() > 40)
            shown = shown.substr(0, 40) + "...";
        return "the same text gets other token ids (\"" + shown + "\": target " + ids_text(a, i) +
               ", draft " + ids_text(b, i) + " from token " + std::to_string(i) + ")";
    }
    const auto with_a = target.encode("Hello", true), with_b = draft.encode("Hello", true);
    if (with_a != with_b)
        return "they add other special tokens (\"Hello\": target " + ids_text(with_a, 0) +
               ", draft " + ids_text(with_b, 0) + ")";
    const auto sa = target.stop_ids(), sb = draft.stop_ids();
    if (std::set<int32_t>(sa.begin(), sa.end()) != std::set<int32_t>(sb.begin(), sb.end()))
        return "their end-of-sequence ids differ (target " + ids_text(sa, 0) + ", draft " +
               ids_text(sb, 0) + ")";
    return {};
}

bool is_matrix(const TensorView& t) {
    return t.present() && t.rows > 0 && t.cols > 0;
}

} // namespace

DraftModelProposer::DraftModelProposer(std::unique_ptr<LoadedModel> model,
                                       kernels::ThreadPool& pool)
    : model_(std::move(model)), pool_(pool) {}

Result<std::unique_ptr<DraftModelProposer>> DraftModelProposer::create_draft(
    std::unique_ptr<LoadedModel> draft, const Tokenizer& draft_tokenizer,
    const Tokenizer& target_tokenizer, kernels::ThreadPool& pool, int64_t kv_tokens) {
    if (!draft)
        return make_error("draft model: none given");
    if (std::string why = tokenizer_mismatch(draft_tokenizer, target_tokenizer); !why.empty())
        return make_error("draft model " + draft->path +
                          " does not share the target's vocabulary: " + why);
    std::unique_ptr<DraftModelProposer> p(new DraftModelProposer(std::move(draft), pool));
    p->weight_bytes_ = p->model_->weight_bytes;
    return finish_create(std::move(p), kv_tokens);
}

Result<std::unique_ptr<DraftModelProposer>>
DraftModelProposer::create_self_q4(const LoadedModel& target, kernels::ThreadPool& pool,
                                   int64_t kv_tokens) {
    auto m = std::make_unique<LoadedModel>();
    m->path = target.path;
    m->format = target.format;
    m->name = target.name + " (self-q4)";
    m->config = target.config;
    m->weights = target.weights; // views into the target; the matrices are replaced below
    m->parameter_count = target.parameter_count;

    std::vector<TensorView*> mats;
    for (LayerWeights& l : m->weights.layers)
        for (TensorView* t : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down})
            mats.push_back(t);
    mats.push_back(&m->weights.tok_embd);
    // Tied embeddings are bound as output = tok_embd: one copy, shared again below.
    const bool tied = m->weights.output.data == m->weights.tok_embd.data;
    if (m->weights.output.present() && !tied)
        mats.push_back(&m->weights.output);
    int64_t new_bytes = 0, held = 0;
    for (TensorView* t : mats) {
        if (!is_matrix(*t))
            continue;
        const bool convert = t->type != DType::Q4_0 && t->cols % 32 == 0;
        const int64_t rb = convert ? dtype_row_bytes(DType::Q4_0, t->cols) : t->row_bytes();
        if (convert)
            new_bytes += rb * t->rows;
        held += rb * t->rows;
    }
    const int64_t avail = available_memory_bytes();
    if (avail > 0 && new_bytes > avail / 2)
        return make_error("self-q4: the 4-bit copy of the weights needs " +
                          std::to_string(new_bytes >> 20) + " MiB; " + std::to_string(avail >> 20) +
                          " MiB are available");
    std::unique_ptr<DraftModelProposer> p(new DraftModelProposer(std::move(m), pool));
    for (TensorView* t : mats) {
        if (!is_matrix(*t) || t->type == DType::Q4_0 || t->cols % 32 != 0)
            continue;
        const int64_t rb = dtype_row_bytes(DType::Q4_0, t->cols);
        std::vector<uint8_t>& buf = p->q4_storage_.emplace_back(static_cast<size_t>(rb * t->rows));
        const TensorView src = *t;
        pool.parallel_for(src.rows, 64, [&](int64_t r0, int64_t r1) {
            std::vector<float> row(static_cast<size_t>(src.cols));
            for (int64_t r = r0; r < r1; ++r) {
                kernels::dequantize_row(src.type, src.row(r), row.data(), src.cols);
                kernels::quantize_row(DType::Q4_0, row.data(), buf.data() + r * rb, src.cols);
            }
        });
        t->type = DType::Q4_0;
        t->data = buf.data();
    }
    if (tied)
        p->model_->weights.output = p->model_->weights.tok_embd;
    p->weight_bytes_ = held;
    p->model_->weight_bytes = held;
    return finish_create(std::move(p), kv_tokens);
}

Result<std::unique_ptr<DraftModelProposer>>
DraftModelProposer::finish_create(std::unique_ptr<DraftModelProposer> p, int64_t kv_tokens) {
    const ModelConfig& c = p->model_->config;
    const int64_t blocks =
        std::max<int64_t>(2, (kv_tokens + kDraftBlockSize - 1) / kDraftBlockSize + 1);
    if (blocks > (int64_t{1} << 30))
        return make_error("draft model: a KV pool of " + std::to_string(kv_tokens) +
                          " tokens is too large");
    const int64_t bytes = KvCacheStorage::bytes_per_block(c, kDraftBlockSize) * blocks;
    const int64_t avail = available_memory_bytes();
    if (avail > 0 && bytes > avail / 2)
        return make_error("draft model: its KV cache for " + std::to_string(kv_tokens) +
                          " tokens needs " + std::to_string(bytes >> 20) + " MiB; " +
                          std::to_string(avail >> 20) + " MiB are available");
    auto kv = KvCacheStorage::create(c, static_cast<int32_t>(blocks), kDraftBlockSize);
    if (!kv)
        return make_error("draft model: " + kv.message());
    p->kv_ = std::move(kv.value());
    p->free_.resize(static_cast<size_t>(blocks));
    for (int32_t i = 0; i < static_cast<int32_t>(blocks); ++i)
        p->free_[static_cast<size_t>(i)] = static_cast<int32_t>(blocks) - 1 - i;
    p->tf_ = std::make_unique<CpuTransformer>(*p->model_, p->pool_);
    return p;
}

int32_t DraftModelProposer::num_slots_needed(int64_t tokens) const {
    return static_cast<int32_t>((tokens + kDraftBlockSize - 1) / kDraftBlockSize);
}

void DraftModelProposer::free_blocks(Seq& s) {
    free_.insert(free_.end(), s.blocks.rbegin(), s.blocks.rend());
    s.blocks.clear();
    s.held.clear();
}

bool DraftModelProposer::reserve(Seq& s, int64_t tokens, const std::vector<Seq*>& busy) {
    const auto need = static_cast<size_t>(num_slots_needed(tokens));
    while (s.blocks.size() < need) {
        if (free_.empty()) {
            Seq* victim = nullptr;
            for (auto& [id, other] : seqs_) {
                if (&other == &s || other.blocks.empty() ||
                    std::find(busy.begin(), busy.end(), &other) != busy.end())
                    continue;
                if (!victim || other.last_use < victim->last_use)
                    victim = &other;
            }
            if (!victim)
                return false;
            free_blocks(*victim);
        }
        s.blocks.push_back(free_.back());
        free_.pop_back();
    }
    return true;
}

void DraftModelProposer::release(int64_t request_id) {
    auto it = seqs_.find(request_id);
    if (it == seqs_.end())
        return;
    free_blocks(it->second);
    seqs_.erase(it);
}

void DraftModelProposer::propose(int64_t request_id, std::span<const int32_t> tokens,
                                 int32_t num_prompt_tokens, int32_t k, std::vector<int32_t>& out) {
    const Call c{request_id, tokens, num_prompt_tokens, k, &out};
    propose_batch(std::span<const Call>(&c, 1));
}

void DraftModelProposer::propose_batch(std::span<const Call> calls) {
    ++clock_;
    const int64_t max_pos = model_->config.max_position;
    const int32_t vocab = tf_->vocab_size();
    struct Active {
        const Call* call;
        Seq* seq;
    };
    std::vector<Active> act;
    std::vector<Seq*> busy;
    for (const Call& c : calls) {
        c.out->clear();
        if (c.k <= 0 || c.tokens.empty())
            continue;
        const auto len = static_cast<int64_t>(c.tokens.size());
        if (max_pos > 0 && len + c.k > max_pos)
            continue; // past the draft's context
        Seq& s = seqs_[c.request_id];
        s.last_use = clock_;
        // Keep the common prefix of what the draft holds and the request's tokens; the last
        // token is always fed again (its logits give the first draft).
        size_t common = 0;
        while (common < s.held.size() && common + 1 < c.tokens.size() &&
               s.held[common] == c.tokens[common])
            ++common;
        s.held.resize(common);
        busy.push_back(&s);
        act.push_back({&c, &s});
    }
    // Blocks for every token plus the K/V of the drafts fed back (k - 1 of them).
    std::vector<Active> fits;
    for (const Active& a : act)
        if (reserve(*a.seq, static_cast<int64_t>(a.call->tokens.size()) + a.call->k - 1, busy))
            fits.push_back(a);
    if (fits.empty())
        return;

    auto feed = [&](Seq& s, std::span<const int32_t> toks, ForwardBatch::Logits logits) {
        batch_.add_sequence(toks, static_cast<int32_t>(s.held.size()), s.blocks, kDraftBlockSize,
                            logits);
        s.held.insert(s.held.end(), toks.begin(), toks.end());
    };
    auto run = [&](std::vector<const Active*>& rows) {
        logits_.resize(std::max<size_t>(1, rows.size()) * static_cast<size_t>(vocab));
        tf_->forward(batch_, *kv_, logits_.data());
        for (size_t i = 0; i < rows.size(); ++i)
            rows[i]->call->out->push_back(argmax_first(std::span<const float>(
                logits_.data() + i * static_cast<size_t>(vocab), static_cast<size_t>(vocab))));
        batch_.clear();
        rows.clear();
    };

    // 1. Catch-up: long stretches alone in chunks (at most kMaxCatchUpPerStep tokens a step; a
    // request still behind after that drafts nothing this step), then every request's last
    // stretch together.
    batch_.clear();
    std::vector<const Active*> rows;
    std::vector<Active> ready;
    for (const Active& a : fits) {
        const auto& t = a.call->tokens;
        int32_t fed = 0;
        while (t.size() - a.seq->held.size() > static_cast<size_t>(kChunkTokens) &&
               fed < kMaxCatchUpPerStep) {
            feed(*a.seq, t.subspan(a.seq->held.size(), kChunkTokens), ForwardBatch::Logits::None);
            tf_->forward(batch_, *kv_, nullptr);
            batch_.clear();
            fed += kChunkTokens;
        }
        if (t.size() - a.seq->held.size() <= static_cast<size_t>(kChunkTokens))
            ready.push_back(a);
    }
    fits.swap(ready);
    for (const Active& a : fits) {
        const auto& t = a.call->tokens;
        const size_t n = t.size() - a.seq->held.size();
        if (batch_.n_tokens() + static_cast<int64_t>(n) > kBatchTokens && !rows.empty())
            run(rows);
        feed(*a.seq, t.subspan(a.seq->held.size()), ForwardBatch::Logits::Last);
        rows.push_back(&a);
    }
    if (!rows.empty())
        run(rows);

    // 2. k - 1 single-token steps over every request that wants more.
    for (int32_t j = 1;; ++j) {
        for (const Active& a : fits)
            if (a.call->k > j && static_cast<int32_t>(a.call->out->size()) == j) {
                const int32_t last = a.call->out->back();
                if (last < 0 || last >= vocab)
                    continue;
                feed(*a.seq, std::span<const int32_t>(&a.call->out->back(), 1),
                     ForwardBatch::Logits::Last);
                rows.push_back(&a);
            }
        if (rows.empty())
            break;
        run(rows);
    }
}

} // namespace llmwb
