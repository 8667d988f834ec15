// DraftModelProposer: speculative drafts from a model — a second, smaller model with the same
// vocabulary (method `draft`) or the target's own weights re-quantized to 4 bits at load
// (`self-q4`). Each step it proposes the draft model's greedy continuation (one-hot q, so the
// engine's rejection sampling stays exact for sampled requests too):
//
//   catch-up   one varlen forward over every request's tokens the draft has not seen (the
//              token the target just sampled, or a whole prompt), logits of the last one
//   k - 1      single-token forwards of all requests together, each feeding the previous draft
//
// The draft keeps its own paged KV cache (CPU), per request a block list and the tokens whose
// K/V it holds. Before each proposal the held tokens are compared with the request's tokens:
// the common prefix is kept and the rest rolled back (rejected drafts, preemption, a fork), so
// the draft never needs to hear about them. A request that finishes is released. When the pool
// is full the least recently used request's blocks are taken (it catches up again later); a
// request that still does not fit gets no drafts that step. The pool is sized by the caller
// (e.g. to the target pool's token capacity) and allocated only when the machine has the memory.
// Runs on the CPU, on the caller's thread pool, whatever backend the target uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/model/loaded_model.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/serving/speculative.h"
#include "engine/util/result.h"

namespace llmwb {

class Tokenizer;

class DraftModelProposer final : public DraftProposer {
  public:
    // `draft` must use the target's token ids: decided by the tokenizers (the same ids for a set
    // of probe texts and the same special tokens), not by embedding row counts, which differ by
    // padding within a family. The error names the ids that differ. kv_tokens: token slots of
    // the draft's KV pool. `pool` must outlive the proposer.
    static Result<std::unique_ptr<DraftModelProposer>>
    create_draft(std::unique_ptr<LoadedModel> draft, const Tokenizer& draft_tokenizer,
                 const Tokenizer& target_tokenizer, kernels::ThreadPool& pool, int64_t kv_tokens);
    // The target's matrices re-quantized to Q4_0 (those whose rows are not a multiple of 32
    // elements keep their type); norms and biases are shared with `target`, which must outlive
    // the proposer.
    static Result<std::unique_ptr<DraftModelProposer>>
    create_self_q4(const LoadedModel& target, kernels::ThreadPool& pool, int64_t kv_tokens);

    void propose(int64_t request_id, std::span<const int32_t> tokens, int32_t num_prompt_tokens,
                 int32_t k, std::vector<int32_t>& out) override;
    void propose_batch(std::span<const Call> calls) override;
    void release(int64_t request_id) override;

    int64_t weight_bytes() const { return weight_bytes_; } // as the draft holds them
    int64_t kv_bytes() const { return kv_->total_bytes(); }
    int32_t num_used_blocks() const { return num_blocks() - static_cast<int32_t>(free_.size()); }
    int32_t num_blocks() const { return kv_->num_blocks(); }
    const LoadedModel& model() const { return *model_; }

  private:
    struct Seq {
        std::vector<int32_t> held;   // tokens whose K/V the draft holds, from position 0
        std::vector<int32_t> blocks; // the draft pool's blocks, in position order
        uint64_t last_use = 0;
    };

    DraftModelProposer(std::unique_ptr<LoadedModel> model, kernels::ThreadPool& pool);
    static Result<std::unique_ptr<DraftModelProposer>>
    finish_create(std::unique_ptr<DraftModelProposer> p, int64_t kv_tokens);
    int32_t num_slots_needed(int64_t tokens) const;
    // Gives `s` blocks for `tokens` positions, evicting least recently used requests outside
    // `busy`; false when the pool cannot hold them.
    bool reserve(Seq& s, int64_t tokens, const std::vector<Seq*>& busy);
    void free_blocks(Seq& s);

    std::unique_ptr<LoadedModel> model_;
    std::vector<std::vector<uint8_t>> q4_storage_; // self-q4: the re-quantized matrices
    kernels::ThreadPool& pool_;
    std::unique_ptr<CpuTransformer> tf_;
    std::unique_ptr<KvCacheStorage> kv_;
    std::vector<int32_t> free_;
    std::unordered_map<int64_t, Seq> seqs_;
    uint64_t clock_ = 0;
    int64_t weight_bytes_ = 0;
    ForwardBatch batch_;
    std::vector<float> logits_;
};

} // namespace llmwb
