// Engine: the serving engine. Many requests at once over one model executor and a paged KV
// cache. Every generation path (the CLI's generate and bench, the app, the tests) runs here:
//
//   step():  schedule()  -> StepPlan       which requests run, how many tokens, blocks
//            execute()   -> logits         one varlen forward for all of them, through the
//                                          backend's ModelExecutor (CPU or CUDA)
//            update()    -> StepOutputs    commit computed tokens and full blocks, then
//                                          sample -> detokenize -> stop -> finish (the
//                                          OutputProcessor), and step records if asked
//   snapshot()           -> EngineSnapshot what the UI draws
//
// A single request from prompt to finish is generate() (engine/serving/generation.h), a loop
// over step(). Not thread safe: one thread drives it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_block_size.h"
#include "engine/runtime/model_executor.h"
#include "engine/runtime/sampler.h"
#include "engine/serving/engine_snapshot.h"
#include "engine/serving/kv_cache_manager.h"
#include "engine/serving/memory_plan.h"
#include "engine/serving/output_processor.h"
#include "engine/serving/request.h"
#include "engine/serving/scheduler.h"
#include "engine/serving/speculative.h"
#include "engine/serving/speculative_tuner.h"
#include "engine/serving/step_plan.h"
#include "engine/util/result.h"

namespace llmwb {

class Tokenizer;

struct EngineConfig {
    int32_t block_size = kDefaultKvBlockSize; // kv_block_size.h: 8, 16 or 32
    int32_t max_num_seqs = 64;
    int32_t max_num_batched_tokens = 512;
    SchedulerPolicy policy = SchedulerPolicy::Continuous;
    bool enable_prefix_caching = true;
    // Sliding-window models: keep the blocks no query can see any more (tests compare against
    // this; by default they are released as requests advance).
    bool keep_window_blocks = false;
    MemoryBudget memory;             // the KV pool's budget (memory_plan.h)
    bool skip_special_tokens = true; // leave special tokens out of the streamed text
    uint64_t cache_key = 0;          // extra key of every block hash (model/adapter id)
    // On backends that can (CUDA, CPU): when every request of a step is plain greedy
    // (temperature 0, no penalties, no logprobs), the backend takes the argmaxes (CUDA: on the
    // device instead of copying logits back; CPU: rows in parallel on its thread pool).
    bool device_greedy = true;
    // Step records for snapshots (EngineSnapshot::scheduled, with copies of the block tables):
    // built only for a consumer that draws them (the app), not for CLI runs.
    bool record_steps = false;
    SpeculativeConfig speculative; // off by default (speculative.h)
};

struct StepOutputs {
    int64_t step_index = -1;        // -1: nothing was scheduled
    EngineClock::time_point time{}; // when the step's tokens were sampled
    double step_ms = 0;
    int32_t num_prefill_tokens = 0, num_decode_tokens = 0, batch_size = 0;
    std::vector<ScheduledRequest> scheduled; // what ran, in batch order
    std::vector<RequestId> preempted;        // moved back to waiting before the step ran
    std::vector<RequestOutput> outputs;      // scheduled requests that sampled or finished
    // Requests Engine::abort removed since the previous step, with their final metrics (the
    // step's own finishes are in `outputs`).
    std::vector<SnapshotRequest> aborted;
};

// Slot accounting over all steps (per running request: allocated = blocks x block size, used =
// tokens with K/V, contiguous = what preallocation to its maximum length would reserve).
struct KvAccounting {
    int64_t allocated_slot_steps = 0;
    int64_t used_slot_steps = 0;
    int64_t contiguous_slot_steps = 0;
    int64_t peak_used_blocks = 0;
    double usage_sum = 0; // sum over steps of kv usage (for the mean)
    int64_t steps = 0;
};

class Engine {
  public:
    // `model` and `tokenizer` must outlive the engine. Runs on the CPU (a CpuExecutor the engine
    // owns).
    static Result<std::unique_ptr<Engine>> create(CpuTransformer& model, const Tokenizer& tokenizer,
                                                  const EngineConfig& config);
    // Runs on any backend. `executor` and `tokenizer` must outlive the engine; the engine sizes
    // the executor's KV pool (resize_kv) from its memory plan. With config.memory.device_bytes
    // == 0 the plan uses the executor's device memory (RAM on the CPU, cudaMemGetInfo on CUDA).
    static Result<std::unique_ptr<Engine>>
    create(ModelExecutor& executor, const Tokenizer& tokenizer, const EngineConfig& config);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // The one validation of a request: invalid params, an empty prompt, ids outside the
    // vocabulary, the length rule (resolve_max_tokens: prompt + a given max_tokens beyond the
    // model's context is refused, a default max_tokens is lowered to the room left), a prompt
    // that leaves no room in the KV pool's token slots. The request keeps the resolved
    // max_tokens.
    Result<RequestId> add_request(std::vector<int32_t> prompt_ids, const SamplingParams& params);
    // Tokenizes with the model's special tokens (BOS) as Hugging Face does.
    Result<RequestId> add_request(std::string_view prompt, const SamplingParams& params);

    // A copy of running request `src` (same tokens, computed K/V shared block by block,
    // copy-on-write on the first write to a shared partial block) that continues with
    // `params` (n > 1 sampling). The child's prompt is src's tokens at the fork point: its
    // outputs (and max_tokens) count from there. Errors: unknown or not running request, bad
    // params.
    Result<RequestId> fork(RequestId src, const SamplingParams& params);

    // Parallel sampling (n > 1; engine/serving/parallel_sampling.cpp): one sequence per entry
    // of `choices` over one prompt, prefilled once. The engine prefills the prompt as one
    // internal request; the step that computes its last token forks a sequence per choice from
    // it (prompt blocks shared, copy-on-write on the first divergent write), each samples its
    // first token from that one logits row with its own sampler, and the internal request goes
    // away. Returns the choices' ids, in order; their outputs come from step() as any request's.
    // Each choice is validated as add_request does (errors name the choice). One choice is
    // add_request. Aborting a choice before the fork drops it; aborting them all drops the
    // prefill.
    Result<std::vector<RequestId>> add_request_group(std::vector<int32_t> prompt_ids,
                                                     std::span<const SamplingParams> choices);

    // Beam search (engine/serving/beam_search.h drives it). A scoring request: each time its
    // next token's logits are computed its step output carries, instead of a token, one
    // logprobs entry (id -1) with the top `top_k` raw logprobs (best first, lowest id first on
    // ties); the caller then appends the token it chooses with append_token, forks it first
    // (fork: the children are scoring requests too) or aborts it, before the next step.
    // Errors: add_request's, top_k outside [1, vocabulary].
    Result<RequestId> add_scoring_request(std::vector<int32_t> prompt_ids,
                                          const SamplingParams& params, int32_t top_k);
    // Appends `token` to a scoring request that reported its logprobs; `o` is filled as a step's
    // output (new_token_ids, text, finish on a stop token, max_tokens or the context; a
    // finished request is gone). Errors: not a scoring request waiting for its token, a token
    // outside the vocabulary.
    Status append_token(RequestId id, int32_t token, RequestOutput& o);
    // Whether `token` would stop request `id` (its stop ids); false for an unknown id.
    bool is_stop_token(RequestId id, int32_t token) const {
        return outputs_.is_stop_token(id, token);
    }
    const Tokenizer& tokenizer() const { return tokenizer_; }

    // Runs one step: schedules, runs one forward over all scheduled requests, samples.
    StepOutputs step();
    void step(StepOutputs& out); // refills `out`, reusing its buffers

    // Removes a request at any time; its blocks return to the pool. False: unknown id.
    bool abort(RequestId id);
    bool has_unfinished() const { return scheduler_->has_unfinished(); }
    int32_t num_unfinished() const { return static_cast<int32_t>(requests_.size()); }
    // Sequences waiting to be scheduled: a group whose prompt is not prefilled yet counts its
    // unforked choices (the server's waiting limit counts sequences, not requests).
    int32_t num_waiting_sequences() const;

    void snapshot(EngineSnapshot& out) const;
    EngineSnapshot snapshot() const;

    // Re-planning: takes effect before the next step (after the current one). Requests that no
    // longer fit are preempted and resumed later; none fail. The pool never shrinks below what
    // the longest live request needs
    // (its prompt + max_tokens), so a shrink never cuts a request short.
    Status set_memory_budget(const MemoryBudget& budget);
    Status set_num_blocks(int32_t num_blocks);
    // Switches the KV cache's element type (and fp8 scales: stored = x / scale per layer) before
    // the next step: every running request is preempted and its K/V recomputed in the new type
    // (tokens already produced are kept), blocks cached in the old type are dropped (a cache of
    // another type is never mixed in), and the pool is re-planned from the current budget at the
    // new block size (more or fewer blocks for the same bytes). Errors: a type the backend
    // cannot store, or a plan that does not fit.
    Status set_kv_dtype(KvDtype dtype, const KvScales& scales = {});
    // The type the pool has after pending changes apply.
    KvDtype pending_kv_dtype() const { return pending_kv_ ? pending_kv_->first : exec_.kv_dtype(); }
    // Speculative decoding (method, k 0..16, prompt lookup); effective from the next step:
    // drafts already proposed are kept unless speculation is turned off.
    Status set_speculative(const SpeculativeConfig& config);
    const SpeculativeStats& speculative_stats() const { return spec_stats_; }
    // The proposer of drafts while speculation is enabled: a model proposer (draft, self-q4;
    // draft_proposer.h), or one of a benchmark or a test. Replaces the built-in prompt lookup.
    // Not owned (it must outlive the engine or be detached first); nullptr restores prompt
    // lookup for ngram (draft and self-q4 then draft nothing).
    void set_draft_proposer(DraftProposer* proposer) { custom_proposer_ = proposer; }
    const SpeculationTuner& speculation_tuner() const { return tuner_; }
    SpeculationTuner& speculation_tuner() { return tuner_; }
    // Scheduler limits (sliders); effective from the next step.
    void set_limits(int32_t max_num_seqs, int32_t max_num_batched_tokens);

    const MemoryPlan& memory_plan() const { return memory_plan_; }
    const ModelExecutor& executor() const { return exec_; }
    // The last backend failure (CUDA errors; empty: none). A step whose forward fails samples
    // nothing and finishes every request it scheduled with FinishReason::Aborted.
    const std::string& last_error() const { return last_error_; }
    // The model file changed or was truncated under the engine (ModelExecutor::check_weights):
    // the step that found it finished every request with FinishReason::Error, last_error()
    // says "model file changed or was truncated while in use: PATH", and add_request refuses
    // from then on. Reload the model (a new executor and engine) to go on.
    bool weights_lost() const { return weights_lost_; }
    int64_t context_limit() const;
    const EngineConfig& config() const { return config_; }
    const KvCacheManager& kv_manager() const { return *kv_mgr_; }
    const Scheduler& scheduler() const { return *scheduler_; }
    const KvAccounting& kv_accounting() const { return accounting_; }
    int64_t steps() const { return step_index_; }

    // Every consistency check of the pool and the block tables, plus: tables exactly for the
    // running requests, each large enough for its computed tokens. For tests.
    Status check_consistency() const;

    // What a memory plan for this engine is made from now (the app checks a utilization with it
    // before applying one), and the fewest blocks a new plan may have: the longest live request
    // must still fit alone (a re-plan is raised to it).
    KvPoolShape pool_shape(int64_t workspace) const;
    int32_t min_blocks_for_live() const;

  private:
    Engine(ModelExecutor& exec, const Tokenizer& tokenizer, const EngineConfig& config);
    void apply_pending_plan();
    // step() = schedule(), execute(), update().
    bool schedule(StepOutputs& out); // false: nothing to run
    bool execute();                  // false: the backend failed (last_error_)
    void update(StepOutputs& out);
    // update()'s three parts.
    void commit_computed();                 // advance computed tokens, commit full blocks
    void record_step();                     // step records for snapshots (record_steps only)
    void process_outputs(StepOutputs& out); // sample -> detokenize -> stop -> finish
    void fail_step(StepOutputs& out);       // a backend failure: finish what was scheduled
    void count_verified(Request& r, int32_t drafts, int32_t accepted);
    void propose_drafts(); // drafts for the next step of the requests in to_propose_
    bool step_is_device_greedy() const;
    void finish_request(Request& r, FinishReason why);
    SnapshotRequest metrics_of(const Request& r, EngineClock::time_point now) const;
    Request* find(RequestId id) const;
    // add_request's checks; the params with max_tokens resolved.
    Result<SamplingParams> check_request(const std::vector<int32_t>& prompt_ids,
                                         const SamplingParams& params) const;
    // A copy of running `src` under id `id` (fork and parallel sampling).
    Request& fork_as(Request& src, RequestId id, const SamplingParams& params);
    // Parallel sampling (parallel_sampling.cpp).
    struct GroupChoice {
        RequestId id;
        SamplingParams params;
    };
    bool is_group_prefill(RequestId id) const { return groups_.count(id) > 0; }
    // The prefill of a group got its logits row: fork every choice, sample their first tokens
    // into `out`, drop the prefill request.
    void fork_group(Request& prefill, const float* logits, int32_t device_id, StepOutputs& out);
    // Aborts a choice not forked yet; false: `id` is none.
    bool abort_group_choice(RequestId id);
    // Takes a group's prefill request out without a finish record (it is no one's request);
    // finishes its unforked choices with `why` into `out` when given.
    void drop_group(RequestId prefill, FinishReason why, StepOutputs* out);
    bool group_is_plain_greedy(RequestId prefill) const;
    void account_step();

    std::unique_ptr<ModelExecutor> owned_exec_; // set by create(CpuTransformer&, ...)
    ModelExecutor& exec_;
    const Tokenizer& tokenizer_;
    EngineConfig config_;
    MemoryPlan memory_plan_;
    std::optional<MemoryPlan> pending_memory_plan_;
    std::optional<std::pair<KvDtype, KvScales>> pending_kv_; // set_kv_dtype
    std::string last_error_;
    bool weights_lost_ = false;
    std::unique_ptr<KvCacheManager> kv_mgr_;
    std::unique_ptr<Scheduler> scheduler_;
    OutputProcessor outputs_;
    std::unordered_map<RequestId, std::unique_ptr<Request>> requests_;
    // Parallel sampling: a group's prefill request -> its choices not forked yet.
    std::unordered_map<RequestId, std::vector<GroupChoice>> groups_;
    RequestId next_id_ = 0;

    // Per-step state, reused.
    StepPlan step_plan_;
    std::vector<RequestId> replan_preempted_;
    ForwardBatch batch_;
    std::vector<float> logits_;
    std::vector<int32_t> greedy_ids_;  // per logits row, when the step ran greedy on the device
    std::vector<int32_t> spec_tokens_; // a request's last token + its drafts (execute)
    SpeculativeStats spec_stats_;
    NgramProposer ngram_{2, 5};
    DraftProposer* custom_proposer_ = nullptr;
    SpeculationTuner tuner_;
    std::vector<RequestId> to_propose_;
    std::vector<Request*> spec_requests_;
    std::vector<SpeculationTuner::Candidate> spec_candidates_;
    std::vector<DraftProposer::Call> spec_calls_;
    bool step_greedy_ = false;
    int32_t last_logits_rows_ = 0; // of the last step (the speculation tuner's cost fit)
    std::vector<SnapshotScheduled> last_scheduled_; // record_steps only
    std::vector<SnapshotRequest> finished_; // finished (or aborted) since the last step began
    std::vector<SnapshotRequest> aborted_;  // aborted since the last step began (StepOutputs)
    int64_t step_index_ = 0;
    double last_step_ms_ = 0;
    int64_t total_prompt_computed_ = 0, total_generated_ = 0;
    KvAccounting accounting_;
};

} // namespace llmwb
