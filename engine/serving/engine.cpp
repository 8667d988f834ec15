#include "engine/serving/engine.h"

#include <algorithm>
#include <cassert>

#include "engine/runtime/cpu_executor.h"
#include "engine/tokenizer/tokenizer.h"

namespace llmwb {

const char* finish_reason_name(FinishReason r) {
    switch (r) {
    case FinishReason::None:
        return "";
    case FinishReason::Stop:
        return "stop";
    case FinishReason::Length:
        return "length";
    case FinishReason::Aborted:
        return "abort";
    case FinishReason::Context:
        return "context";
    case FinishReason::KvPool:
        return "kv_pool";
    case FinishReason::Error:
        return "error";
    }
    return "";
}

Engine::Engine(ModelExecutor& exec, const Tokenizer& tokenizer, const EngineConfig& config)
    : exec_(exec), tokenizer_(tokenizer), config_(config),
      outputs_(tokenizer, config.skip_special_tokens) {}

Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::create(CpuTransformer& model, const Tokenizer& tokenizer,
                                               const EngineConfig& config) {
    auto exec = std::make_unique<CpuExecutor>(model);
    auto e = create(*exec, tokenizer, config);
    if (!e)
        return e.error();
    e.value()->owned_exec_ = std::move(exec);
    return e;
}

KvPoolShape Engine::pool_shape(int64_t workspace) const {
    KvPoolShape shape;
    shape.model = &exec_.config();
    shape.device = exec_.kind();
    shape.weight_bytes = exec_.weight_bytes();
    shape.kv_dtype = exec_.kv_dtype();
    shape.block_size = config_.block_size;
    shape.workspace_bytes = workspace;
    shape.max_num_seqs = config_.max_num_seqs;
    const DeviceMemory mem = exec_.memory();
    shape.total_bytes = mem.total_bytes;
    shape.available_bytes = mem.free_bytes;
    shape.weight_cache_candidates = exec_.weight_cache_candidates();
    shape.weight_cache_bytes = exec_.weight_cache_bytes();
    shape.weight_cache_matrices = exec_.weight_cache_matrices();
    shape.panel_matrices = exec_.panel_matrices();
    shape.panel_bytes = exec_.panel_bytes();
    if (exec_.num_blocks() > 0)
        shape.reusable_bytes =
            static_cast<int64_t>(exec_.num_blocks()) *
            kv_bytes_per_block(exec_.config(), exec_.block_size(), exec_.kv_dtype());
    return shape;
}

Result<std::unique_ptr<Engine>> Engine::create(ModelExecutor& exec, const Tokenizer& tokenizer,
                                               const EngineConfig& config) {
    if (Status st = check_kv_block_size(config.block_size, "engine: block size"); !st)
        return st.error();
    if (config.max_num_seqs < 1)
        return make_error("engine: max_num_seqs must be >= 1");
    if (config.max_num_batched_tokens < 1)
        return make_error("engine: max_num_batched_tokens must be >= 1");
    if (Status st = config.speculative.validate(); !st)
        return make_error("engine: " + st.message());
    const ModelConfig& mc = exec.config();
    // The estimate, or what the backend already holds for its step buffers when that is more.
    const int64_t workspace =
        std::max(estimate_workspace_bytes(mc, config.max_num_batched_tokens, config.max_num_seqs),
                 exec.workspace_bytes());
    std::unique_ptr<Engine> e(new Engine(exec, tokenizer, config));
    e->ngram_ =
        NgramProposer(config.speculative.prompt_lookup_min, config.speculative.prompt_lookup_max);
    KvPoolShape shape = e->pool_shape(workspace);
    shape.choose_weight_cache = true; // the bf16 weight cache is chosen once, here
    auto plan = plan_memory(shape, config.memory);
    if (!plan)
        return plan.error();
    if (!plan->weight_cache.empty()) {
        if (Status st = exec.set_weight_cache(plan->weight_cache); !st) {
            // Not fatal: plan again without a cache, with the reason in the plan's note.
            shape.choose_weight_cache = false;
            plan = plan_memory(shape, config.memory);
            if (!plan)
                return plan.error();
            plan->note = "bf16 weight cache not made: " + st.message();
        }
    }
    if (Status st = exec.resize_kv(plan->num_blocks, config.block_size, {}); !st)
        return make_error("engine: KV cache of " + std::to_string(plan->num_blocks) +
                          " blocks: " + st.message());
    e->memory_plan_ = *plan;
    e->kv_mgr_ = std::make_unique<KvCacheManager>(plan->num_blocks, config.block_size,
                                                  config.enable_prefix_caching, config.cache_key);
    if (mc.sliding_window > 0 && mc.layer_sliding.empty() && !config.keep_window_blocks)
        e->kv_mgr_->set_sliding_window(mc.sliding_window); // every layer slides (mistral)
    SchedulerConfig sc;
    sc.max_num_seqs = config.max_num_seqs;
    sc.max_num_batched_tokens = config.max_num_batched_tokens;
    sc.policy = config.policy;
    sc.context_limit = e->context_limit();
    e->scheduler_ = std::make_unique<Scheduler>(sc, *e->kv_mgr_);
    return e;
}

int64_t Engine::context_limit() const {
    int64_t limit = static_cast<int64_t>(kv_mgr_->pool().num_blocks()) * config_.block_size;
    // A sliding window frees what no query sees: a request holds at most window_blocks() (+ a
    // prefill chunk, which the scheduler caps), so the pool no longer bounds its length.
    if (kv_mgr_->sliding_window() > 0 && kv_mgr_->window_chunk_limit() > 0 &&
        exec_.config().max_position > 0)
        limit = exec_.config().max_position;
    if (exec_.config().max_position > 0)
        limit = std::min<int64_t>(limit, exec_.config().max_position);
    return limit;
}

Request* Engine::find(RequestId id) const {
    auto it = requests_.find(id);
    return it == requests_.end() ? nullptr : it->second.get();
}

Result<RequestId> Engine::add_request(std::string_view prompt, const SamplingParams& params) {
    return add_request(tokenizer_.encode(prompt, true), params);
}

Result<SamplingParams> Engine::check_request(const std::vector<int32_t>& prompt_ids,
                                             const SamplingParams& params) const {
    if (weights_lost_)
        return make_error("add_request: " + last_error_);
    if (Status st = params.validate(exec_.vocab_size()); !st)
        return st.error();
    if (prompt_ids.empty())
        return make_error("add_request: the prompt has no tokens");
    if (params.thinking_budget && (outputs_.think_open_id() < 0 || outputs_.think_close_id() < 0))
        return make_error("add_request: thinking_budget needs a model with <think> and </think> "
                          "tokens; this tokenizer has none");
    const int32_t vocab = exec_.vocab_size();
    for (int32_t id : prompt_ids)
        if (id < 0 || id >= vocab)
            return make_error("add_request: prompt token id " + std::to_string(id) +
                              " is outside the vocabulary (size " + std::to_string(vocab) + ")");
    // The length rule against the model's context (sampling_params.h), then room in the pool:
    // a request longer than the pool's token slots stops there (finish "context").
    const auto prompt_tokens = static_cast<int64_t>(prompt_ids.size());
    auto max_tokens = resolve_max_tokens(params, prompt_tokens, exec_.config().max_position);
    if (!max_tokens)
        return make_error("add_request: " + max_tokens.message());
    const int64_t limit = context_limit();
    if (prompt_tokens >= limit)
        return make_error("add_request: prompt (" + std::to_string(prompt_tokens) +
                          " tokens) leaves no room in the KV cache's context of " +
                          std::to_string(limit) + " tokens");
    SamplingParams resolved = params;
    resolved.max_tokens = *max_tokens;
    return resolved;
}

Result<RequestId> Engine::add_request(std::vector<int32_t> prompt_ids,
                                      const SamplingParams& params) {
    auto resolved = check_request(prompt_ids, params);
    if (!resolved)
        return resolved.error();
    const RequestId id = next_id_++;
    auto r = std::make_unique<Request>(id, std::move(prompt_ids), *resolved);
    r->arrival = EngineClock::now();
    outputs_.add(*r);
    scheduler_->add(r.get());
    requests_.emplace(id, std::move(r));
    return id;
}

Request& Engine::fork_as(Request& src, RequestId id, const SamplingParams& params) {
    // The child's prompt is everything up to the fork point; its outputs start there.
    auto child = std::make_unique<Request>(id, src.tokens, params);
    child->num_computed = src.num_computed;
    child->prefill_end = src.prefill_end;
    child->num_cached_tokens = src.num_cached_tokens;
    child->score_top_k = src.score_top_k;
    child->arrival = child->scheduled = EngineClock::now(); // it runs from the fork on
    kv_mgr_->fork(src.id, id);
    outputs_.fork(src.id, *child);
    scheduler_->add_running(child.get());
    Request& ref = *child;
    requests_.emplace(id, std::move(child));
    return ref;
}

Result<RequestId> Engine::fork(RequestId src_id, const SamplingParams& params) {
    if (Status st = params.validate(exec_.vocab_size()); !st)
        return st.error();
    Request* src = find(src_id);
    if (!src || src->status != RequestStatus::Running || !kv_mgr_->has_table(src_id) ||
        is_group_prefill(src_id))
        return make_error("fork: request " + std::to_string(src_id) + " is not running");
    return fork_as(*src, next_id_++, params).id;
}

Result<RequestId> Engine::add_scoring_request(std::vector<int32_t> prompt_ids,
                                              const SamplingParams& params, int32_t top_k) {
    if (top_k < 1 || top_k > exec_.vocab_size())
        return make_error("add_request: scoring top_k must be in [1, " +
                          std::to_string(exec_.vocab_size()) + "], got " + std::to_string(top_k));
    auto id = add_request(std::move(prompt_ids), params);
    if (id)
        find(*id)->score_top_k = top_k;
    return id;
}

Status Engine::append_token(RequestId id, int32_t token, RequestOutput& o) {
    Request* r = find(id);
    if (!r || r->score_top_k == 0 || r->status != RequestStatus::Running ||
        r->num_computed != r->num_tokens())
        return make_error("append_token: request " + std::to_string(id) +
                          " is not a scoring request waiting for its token");
    if (token < 0 || token >= exec_.vocab_size())
        return make_error("append_token: token id " + std::to_string(token) +
                          " is outside the vocabulary");
    o = RequestOutput{};
    o.id = id;
    outputs_.append_chosen(*r, token, context_limit(), o);
    ++total_generated_;
    if (o.finished) {
        finish_request(*r, o.finish); // r is gone
        o.metrics = finished_.back();
    } else {
        o.metrics = metrics_of(*r, EngineClock::now());
    }
    return ok_status();
}

bool Engine::abort(RequestId id) {
    Request* r = find(id);
    if (!r)
        return abort_group_choice(id);
    if (is_group_prefill(id))
        return false; // the prefill of a group is no caller's request: abort its choices
    finish_request(*r, FinishReason::Aborted);
    aborted_.push_back(finished_.back());
    return true;
}

void Engine::finish_request(Request& r, FinishReason why) {
    r.finish = why;
    if (custom_proposer_)
        custom_proposer_->release(r.id);
    scheduler_->remove(&r);
    r.status = RequestStatus::Finished;
    finished_.push_back(metrics_of(r, EngineClock::now()));
    outputs_.remove(r.id);
    requests_.erase(r.id); // r is gone after this line
}

Status Engine::set_memory_budget(const MemoryBudget& budget) {
    KvPoolShape shape = pool_shape(memory_plan_.workspace_bytes);
    if (pending_kv_)
        shape.kv_dtype = pending_kv_->first;
    auto plan = plan_memory(shape, budget);
    if (!plan)
        return plan.error();
    config_.memory = budget;
    pending_memory_plan_ = *plan;
    return ok_status();
}

Status Engine::set_kv_dtype(KvDtype dtype, const KvScales& scales) {
    if (!exec_.supports_kv_dtype(dtype))
        return make_error(std::string("the ") + device_kind_name(exec_.kind()) +
                          " backend cannot store the KV cache as " + kv_dtype_name(dtype));
    const int32_t layers = exec_.config().num_layers;
    if (kv_dtype_is_fp8(dtype) &&
        ((!scales.k.empty() && static_cast<int32_t>(scales.k.size()) != layers) ||
         (!scales.v.empty() && static_cast<int32_t>(scales.v.size()) != layers)))
        return make_error("KV scales: expected one per layer (" + std::to_string(layers) + ")");
    KvPoolShape shape = pool_shape(memory_plan_.workspace_bytes);
    shape.kv_dtype = dtype;
    auto plan = plan_memory(shape, config_.memory);
    if (!plan)
        return plan.error();
    pending_kv_.emplace(dtype, kv_dtype_is_fp8(dtype) ? scales : KvScales{});
    pending_memory_plan_ = *plan;
    return ok_status();
}

Status Engine::set_num_blocks(int32_t num_blocks) {
    MemoryBudget b = config_.memory;
    b.num_blocks = num_blocks;
    return set_memory_budget(b);
}

Status Engine::set_speculative(const SpeculativeConfig& config) {
    if (Status st = config.validate(); !st)
        return st;
    config_.speculative = config;
    ngram_ = NgramProposer(config.prompt_lookup_min, config.prompt_lookup_max);
    if (!config.enabled())
        for (const auto& [id, r] : requests_)
            r->draft_tokens.clear();
    return ok_status();
}

void Engine::set_limits(int32_t max_num_seqs, int32_t max_num_batched_tokens) {
    config_.max_num_seqs = std::max(1, max_num_seqs);
    config_.max_num_batched_tokens = std::max(1, max_num_batched_tokens);
    SchedulerConfig sc = scheduler_->config();
    sc.max_num_seqs = config_.max_num_seqs;
    sc.max_num_batched_tokens = config_.max_num_batched_tokens;
    scheduler_->set_config(sc);
    // The step buffers follow the limits now (on failure the step that needs them tries again
    // and reports it), and the memory plan counts the new workspace: the KV pool is re-planned
    // at the next step.
    (void)exec_.reserve_step(config_.max_num_batched_tokens, config_.max_num_seqs);
    const int64_t ws =
        std::max(estimate_workspace_bytes(exec_.config(), config_.max_num_batched_tokens,
                                          config_.max_num_seqs),
                 exec_.workspace_bytes());
    if (ws != memory_plan_.workspace_bytes) {
        const int64_t old_ws = memory_plan_.workspace_bytes;
        memory_plan_.workspace_bytes = ws;
        if (Status st = set_memory_budget(config_.memory); !st)
            memory_plan_.workspace_bytes = old_ws; // the pool stays as planned
    }
}

int32_t Engine::min_blocks_for_live() const {
    // The longest live request must still fit alone up to its maximum length.
    int64_t longest = 1;
    for (const auto& [id, r] : requests_) {
        int64_t whole = static_cast<int64_t>(r->num_prompt_tokens) + r->params.max_tokens;
        if (exec_.config().max_position > 0)
            whole = std::min<int64_t>(whole, exec_.config().max_position);
        longest = std::max<int64_t>(longest, std::max<int64_t>(whole, r->num_tokens() + 1));
    }
    return static_cast<int32_t>((longest + config_.block_size - 1) / config_.block_size);
}

void Engine::apply_pending_plan() {
    if (!pending_memory_plan_)
        return;
    MemoryPlan plan = *pending_memory_plan_;
    pending_memory_plan_.reset();
    const int32_t n = std::max(plan.num_blocks, min_blocks_for_live());
    if (n != plan.num_blocks) {
        plan.num_blocks = n;
        plan.kv_bytes = static_cast<int64_t>(n) * plan.bytes_per_block;
        plan.limit = KvPoolLimit::Live;
    }
    std::optional<std::pair<KvDtype, KvScales>> old_kv;
    if (pending_kv_) {
        // A new element type: nothing of the old pool is kept (set_kv_dtype).
        old_kv.emplace(exec_.kv_dtype(), exec_.kv_scales());
        while (scheduler_->preempt_newest(&replan_preempted_)) {
        }
        (void)exec_.set_kv_dtype(pending_kv_->first,
                                 pending_kv_->second); // checked in set_kv_dtype
        pending_kv_.reset();
    } else if (n == kv_mgr_->pool().num_blocks()) {
        memory_plan_ = plan;
        return;
    }
    const int32_t old_n = kv_mgr_->pool().num_blocks();
    while (kv_mgr_->pool().num_used() > n && scheduler_->preempt_newest(&replan_preempted_)) {
    }
    std::vector<BlockCopy> moves;
    kv_mgr_->resize(n, &moves);
    if (Status st = exec_.resize_kv(n, config_.block_size, moves); !st) {
        // The backend kept its old pool: drop every live request's K/V (they are recomputed)
        // and return the manager to the old size, with nothing to move.
        last_error_ = "re-planning the KV cache: " + st.message();
        if (old_kv)
            (void)exec_.set_kv_dtype(old_kv->first, old_kv->second);
        while (scheduler_->preempt_newest(&replan_preempted_)) {
        }
        kv_mgr_->resize(old_n, &moves);
        SchedulerConfig sc = scheduler_->config();
        sc.context_limit = context_limit();
        scheduler_->set_config(sc);
        return;
    }
    memory_plan_ = plan;
    SchedulerConfig sc = scheduler_->config();
    sc.context_limit = context_limit();
    scheduler_->set_config(sc);
}

StepOutputs Engine::step() {
    StepOutputs out;
    step(out);
    return out;
}

// One engine step: three calls (DESIGN.md "One engine step").
void Engine::step(StepOutputs& out) {
    const auto t0 = EngineClock::now();
    if (!schedule(out)) // -> step_plan_; nothing to run: out.step_index stays -1
        return;
    if (execute())   // -> logits (or the ids the device picked)
        update(out); // -> computed tokens, step records, outputs
    else
        fail_step(out);
    last_step_ms_ = ms_between(t0, EngineClock::now());
    tuner_.observe_step(out.num_prefill_tokens + out.num_decode_tokens, last_logits_rows_,
                        last_step_ms_);
    out.step_index = step_index_++;
    out.step_ms = last_step_ms_;
}

bool Engine::schedule(StepOutputs& out) {
    out.outputs.clear();
    out.scheduled.clear();
    out.preempted.clear();
    out.step_index = -1;
    out.num_prefill_tokens = out.num_decode_tokens = out.batch_size = 0;
    out.aborted.assign(aborted_.begin(), aborted_.end());
    aborted_.clear();
    finished_.clear();
    replan_preempted_.clear();
    apply_pending_plan();
    scheduler_->schedule(step_plan_);
    if (!step_plan_.admitted.empty()) {
        const auto now = EngineClock::now();
        for (RequestId id : step_plan_.admitted)
            if (Request* r = find(id); r && r->scheduled == EngineClock::time_point{})
                r->scheduled = now; // the first admission: the end of its queue time
    }
    if (!replan_preempted_.empty())
        step_plan_.preempted.insert(step_plan_.preempted.begin(), replan_preempted_.begin(),
                                    replan_preempted_.end());
    out.preempted.assign(step_plan_.preempted.begin(), step_plan_.preempted.end());
    if (step_plan_.empty()) {
        last_scheduled_.clear();
        return false;
    }
    account_step();
    out.scheduled.assign(step_plan_.scheduled.begin(), step_plan_.scheduled.end());
    out.num_prefill_tokens = step_plan_.num_prefill_tokens;
    out.num_decode_tokens = step_plan_.num_decode_tokens;
    out.batch_size = static_cast<int32_t>(step_plan_.scheduled.size());
    return true;
}

void Engine::update(StepOutputs& out) {
    out.time = EngineClock::now();
    commit_computed();
    record_step();
    process_outputs(out);
}

void Engine::account_step() {
    const int32_t bs = config_.block_size;
    const int64_t limit = context_limit();
    for (const ScheduledRequest& s : step_plan_.scheduled) {
        const Request* r = find(s.id);
        accounting_.allocated_slot_steps +=
            static_cast<int64_t>(kv_mgr_->live_blocks(s.id).size()) * bs;
        accounting_.used_slot_steps += s.num_computed + s.num_scheduled;
        accounting_.contiguous_slot_steps +=
            std::min<int64_t>(limit, r->num_prompt_tokens + r->params.max_tokens);
    }
    const BlockPool& pool = kv_mgr_->pool();
    accounting_.peak_used_blocks = std::max<int64_t>(accounting_.peak_used_blocks, pool.num_used());
    accounting_.usage_sum += static_cast<double>(pool.num_used()) / pool.num_blocks();
    ++accounting_.steps;
}

bool Engine::execute() {
    for (const BlockCopy& c : step_plan_.copies)
        exec_.copy_block(c.src, c.dst);
    batch_.clear();
    int32_t n_logits = 0;
    for (const ScheduledRequest& s : step_plan_.scheduled) {
        const Request* r = find(s.id);
        if (s.num_draft > 0) {
            // The last token and its drafts: a logits row for each (k + 1 verify positions).
            spec_tokens_.assign(r->tokens.end() - 1, r->tokens.end());
            spec_tokens_.insert(spec_tokens_.end(), r->draft_tokens.begin(),
                                r->draft_tokens.begin() + s.num_draft);
            n_logits += s.num_draft + 1;
            batch_.add_sequence(spec_tokens_, s.num_computed, kv_mgr_->blocks(s.id),
                                config_.block_size, ForwardBatch::Logits::All);
            continue;
        }
        const bool last = s.wants_logits();
        n_logits += last ? 1 : 0;
        batch_.add_sequence(
            std::span<const int32_t>(r->tokens).subspan(static_cast<size_t>(s.num_computed),
                                                        static_cast<size_t>(s.num_scheduled)),
            s.num_computed, kv_mgr_->blocks(s.id), config_.block_size,
            last ? ForwardBatch::Logits::Last : ForwardBatch::Logits::None);
    }
    last_logits_rows_ = n_logits;
    step_greedy_ = step_is_device_greedy();
    Status st = ok_status();
    if (step_greedy_) {
        greedy_ids_.assign(static_cast<size_t>(std::max(1, n_logits)), -1);
        st = exec_.forward_greedy(batch_, greedy_ids_.data());
    } else {
        logits_.resize(static_cast<size_t>(std::max(1, n_logits)) *
                       static_cast<size_t>(exec_.vocab_size()));
        st = exec_.forward(batch_, logits_.data());
    }
    if (!st) {
        last_error_ = st.message();
        return false;
    }
    // The model file shrank under its mapping (mapped_file.h): this forward read zeros.
    if (Status w = exec_.check_weights(); !w) {
        last_error_ = w.message();
        weights_lost_ = true;
        return false;
    }
    return true;
}

void Engine::commit_computed() {
    for (const ScheduledRequest& s : step_plan_.scheduled) {
        Request& r = *find(s.id);
        r.num_computed += s.num_scheduled - s.num_draft; // drafts count once verified
        if (s.prefill)
            total_prompt_computed_ += s.num_scheduled;
        kv_mgr_->commit_computed(r.id, r.tokens, r.num_computed);
        // Sliding window: blocks no future query of r can see go back to the pool (its next
        // query is at num_computed; accepted drafts only move it further).
        kv_mgr_->release_outside_window(r.id, r.num_computed);
    }
}

void Engine::record_step() {
    if (!config_.record_steps) {
        last_scheduled_.clear();
        return;
    }
    last_scheduled_.resize(step_plan_.scheduled.size());
    for (size_t i = 0; i < step_plan_.scheduled.size(); ++i) {
        const ScheduledRequest& s = step_plan_.scheduled[i];
        SnapshotScheduled& rec = last_scheduled_[i];
        rec.id = s.id;
        rec.prefill = s.prefill;
        rec.num_scheduled = s.num_scheduled;
        rec.num_computed = s.num_computed + s.num_scheduled - s.num_draft;
        rec.num_total = s.num_total + (s.wants_logits() ? 1 : 0);
        rec.num_draft = s.num_draft;
        rec.num_accepted = 0; // process_outputs() counts them
        auto table = kv_mgr_->live_blocks(s.id);
        rec.blocks.assign(table.begin(), table.end());
    }
}

void Engine::process_outputs(StepOutputs& out) {
    const int32_t vocab = exec_.vocab_size();
    const int64_t limit = context_limit();
    size_t row = 0;
    to_propose_.clear();
    for (size_t i = 0; i < step_plan_.scheduled.size(); ++i) {
        const ScheduledRequest& s = step_plan_.scheduled[i];
        if (!s.wants_logits())
            continue;
        Request& r = *find(s.id);
        if (is_group_prefill(r.id)) { // parallel sampling: the prompt is in; fork the choices
            fork_group(r,
                       step_greedy_ ? nullptr : logits_.data() + row * static_cast<size_t>(vocab),
                       step_greedy_ ? greedy_ids_[row] : -1, out);
            row += 1;
            continue;
        }
        if (r.score_top_k > 0) { // beam search: the caller chooses the token (append_token)
            RequestOutput& o = out.outputs.emplace_back();
            o.id = r.id;
            SampledToken& scores = o.logprobs.emplace_back();
            scores.top = top_logprobs(
                std::span<const float>(logits_.data() + row * static_cast<size_t>(vocab),
                                       static_cast<size_t>(vocab)),
                r.score_top_k);
            o.metrics = metrics_of(r, out.time);
            row += 1;
            continue;
        }
        RequestOutput& o = out.outputs.emplace_back();
        o.id = r.id;
        const bool had_output = r.num_output() > 0;
        const EngineClock::time_point prev_last = r.last_token;
        auto logits_row = [&](size_t k) {
            return step_greedy_ ? nullptr : logits_.data() + k * static_cast<size_t>(vocab);
        };
        auto device_id = [&](size_t k) { return step_greedy_ ? greedy_ids_[k] : -1; };
        int32_t accepted = 0;
        bool rejected = false;
        for (int32_t j = 0; j < s.num_draft && !o.finished && !rejected; ++j) {
            const size_t k = row + static_cast<size_t>(j);
            if (outputs_.append_verified(r, logits_row(k), vocab, device_id(k),
                                         r.draft_tokens[static_cast<size_t>(j)], limit, o)) {
                ++accepted;
                ++r.num_computed; // the draft's K/V, written this step, is the sequence's now
            } else {
                rejected = true;
            }
        }
        if (!o.finished && !rejected) { // every draft accepted (or none): the target's next token
            const size_t k = row + static_cast<size_t>(s.num_draft);
            outputs_.append_token(r, logits_row(k), vocab, device_id(k), limit, o);
        }
        row += static_cast<size_t>(s.num_draft) + 1;
        total_generated_ += static_cast<int64_t>(o.new_token_ids.size());
        r.output_gap_ms =
            had_output && !o.new_token_ids.empty() ? ms_between(prev_last, r.last_token) : 0;
        if (s.num_draft > 0) {
            count_verified(r, s.num_draft, accepted);
            if (config_.record_steps && i < last_scheduled_.size()) {
                SnapshotScheduled& rec = last_scheduled_[i];
                rec.num_accepted = accepted;
                rec.num_computed += accepted;
                rec.num_total += accepted;
            }
            r.draft_tokens.clear();
            if (!o.finished) {
                // Accepted drafts enter the prefix cache only now; rejected slots go back.
                kv_mgr_->commit_computed(r.id, r.tokens, r.num_computed);
                kv_mgr_->trim(r.id, r.num_tokens());
            }
        }
        if (o.finished) {
            finish_request(r, o.finish); // r is gone
            o.metrics = finished_.back();
        } else {
            o.metrics = metrics_of(r, out.time);
            to_propose_.push_back(r.id);
        }
    }
    propose_drafts();
}

void Engine::count_verified(Request& r, int32_t drafts, int32_t accepted) {
    tuner_.observe_verify(r.spec, drafts, accepted);
    r.num_draft_verified += drafts;
    r.num_draft_accepted += accepted;
    SpeculativeStats& st = spec_stats_;
    ++st.num_drafts;
    st.num_draft_tokens += drafts;
    st.num_accepted_tokens += accepted;
    if (st.accepted_per_pos.size() < static_cast<size_t>(drafts))
        st.accepted_per_pos.resize(static_cast<size_t>(drafts), 0);
    for (int32_t j = 0; j < accepted; ++j)
        ++st.accepted_per_pos[static_cast<size_t>(j)];
}

void Engine::propose_drafts() {
    const SpeculativeConfig& sc = config_.speculative;
    if (!sc.enabled())
        return;
    if (!custom_proposer_ && sc.method != SpeculativeMethod::Ngram)
        return; // a model method without its model attached
    DraftProposer& proposer = custom_proposer_ ? *custom_proposer_ : ngram_;
    const int32_t vocab = exec_.vocab_size();
    const int64_t limit = context_limit();
    spec_requests_.clear();
    spec_candidates_.clear();
    spec_calls_.clear();
    for (RequestId id : to_propose_) {
        Request* r = find(id);
        if (!r || r->num_tokens() - r->num_computed != 1)
            continue;
        // Accepted drafts plus the target's own token never pass max_tokens or the context.
        const int64_t room =
            std::min<int64_t>(r->params.max_tokens - r->num_output(), limit - r->num_tokens()) - 1;
        auto k = static_cast<int32_t>(std::min<int64_t>(sc.num_speculative_tokens, room));
        if (sc.auto_k)
            k = tuner_.drafts_to_ask(r->spec, k);
        if (k <= 0)
            continue;
        spec_requests_.push_back(r);
        spec_calls_.push_back({r->id, r->tokens, r->num_prompt_tokens, k, &r->draft_tokens});
    }
    proposer.propose_batch(spec_calls_);
    for (size_t i = 0; i < spec_requests_.size(); ++i) {
        Request* r = spec_requests_[i];
        const auto k = static_cast<size_t>(spec_calls_[i].k);
        // Never more than asked, and only ids of the vocabulary (up to the first that is not).
        if (r->draft_tokens.size() > k)
            r->draft_tokens.resize(k);
        const auto bad = std::find_if(r->draft_tokens.begin(), r->draft_tokens.end(),
                                      [&](int32_t t) { return t < 0 || t >= vocab; });
        r->draft_tokens.erase(bad, r->draft_tokens.end());
        if (sc.auto_k) // every asked request is a candidate (a probe too)
            spec_candidates_.push_back({&r->spec, static_cast<int32_t>(r->draft_tokens.size()), 0});
    }
    if (!sc.auto_k || spec_candidates_.empty())
        return;
    // The next step without drafts: every running request's next chunk (decode tokens and
    // prefill chunks) within the token budget.
    int64_t base_tokens = 0;
    int32_t base_decodes = 0;
    for (const Request* r : scheduler_->running()) {
        const int64_t n = r->num_tokens() - r->num_computed;
        base_tokens += n;
        base_decodes += n == 1 ? 1 : 0;
    }
    base_tokens = std::min<int64_t>(base_tokens, config_.max_num_batched_tokens);
    tuner_.choose(spec_candidates_, static_cast<int32_t>(base_tokens), base_decodes);
    for (size_t i = 0; i < spec_requests_.size(); ++i)
        spec_requests_[i]->draft_tokens.resize(static_cast<size_t>(spec_candidates_[i].chosen));
}

void Engine::fail_step(StepOutputs& out) {
    // A device failure: finish what was scheduled (nothing sampled) rather than retrying a step
    // that may fail forever. Weights lost (the model file changed): every request fails with
    // the error, and the engine takes no more (add_request refuses) until it is rebuilt.
    std::vector<RequestId> ids;
    for (const ScheduledRequest& s : step_plan_.scheduled)
        ids.push_back(s.id);
    if (weights_lost_)
        for (const auto& [id, r] : requests_)
            if (std::find(ids.begin(), ids.end(), id) == ids.end())
                ids.push_back(id);
    const FinishReason why = weights_lost_ ? FinishReason::Error : FinishReason::Aborted;
    for (RequestId id : ids) {
        Request* r = find(id);
        if (!r)
            continue;
        if (is_group_prefill(id)) { // its choices fail, not the prefill no one asked for
            drop_group(id, why, &out);
            continue;
        }
        RequestOutput& o = out.outputs.emplace_back();
        o.id = id;
        o.finished = true;
        o.finish = why;
        finish_request(*r, why);
        o.metrics = finished_.back();
    }
    last_scheduled_.clear();
}

bool Engine::step_is_device_greedy() const {
    if (!config_.device_greedy || !exec_.device_greedy())
        return false;
    for (const ScheduledRequest& s : step_plan_.scheduled) {
        if (!s.wants_logits())
            continue;
        if (find(s.id)->score_top_k > 0)
            return false; // beam search reads the whole row
        if (is_group_prefill(s.id) ? !group_is_plain_greedy(s.id)
                                   : !find(s.id)->params.is_plain_greedy())
            return false;
    }
    return true;
}

} // namespace llmwb
