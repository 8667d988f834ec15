#include "engine/serving/engine.h"

#include <algorithm>
#include <cassert>

#include "engine/runtime/cpu_executor.h"
#include "engine/tokenizer/tokenizer.h"

namespace llmwb {

namespace {

double ms_between(EngineClock::time_point a, EngineClock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

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
    }
    return "";
}

Engine::Engine(ModelExecutor& exec, const Tokenizer& tokenizer, const EngineConfig& config)
    : exec_(exec), tokenizer_(tokenizer), config_(config) {}

Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::create(Transformer& model, const Tokenizer& tokenizer,
                                               const EngineConfig& config) {
    auto exec = std::make_unique<CpuExecutor>(model);
    auto e = create(*exec, tokenizer, config);
    if (!e)
        return e.error();
    e.value()->owned_exec_ = std::move(exec);
    return e;
}

MemoryBudget Engine::budget_with_device(MemoryBudget budget) const {
    if (budget.device_bytes <= 0)
        budget.device_bytes = exec_.memory().total_bytes;
    return budget;
}

Result<MemoryPlan> Engine::plan_for(const MemoryBudget& budget, int64_t workspace) const {
    return plan_memory(exec_.config(), exec_.weight_bytes(), config_.block_size, workspace,
                       budget_with_device(budget), 1, kv_dtype_bytes(exec_.kv_dtype()));
}

Result<std::unique_ptr<Engine>> Engine::create(ModelExecutor& exec, const Tokenizer& tokenizer,
                                               const EngineConfig& config) {
    const int32_t bs = config.block_size;
    if (bs != 8 && bs != 16 && bs != 32)
        return make_error("engine: block size must be 8, 16 or 32, got " + std::to_string(bs));
    if (config.max_num_seqs < 1)
        return make_error("engine: max_num_seqs must be >= 1");
    if (config.max_num_batched_tokens < 1)
        return make_error("engine: max_num_batched_tokens must be >= 1");
    const ModelConfig& mc = exec.config();
    const int64_t workspace =
        estimate_workspace_bytes(mc, config.max_num_batched_tokens, config.max_num_seqs);
    std::unique_ptr<Engine> e(new Engine(exec, tokenizer, config));
    MemoryBudget budget = config.memory;
    if (config.num_blocks) {
        if (*config.num_blocks < 1)
            return make_error("engine: num_blocks must be >= 1");
        budget.kv_bytes = static_cast<int64_t>(*config.num_blocks) *
                          kv_bytes_per_block(mc, bs, kv_dtype_bytes(exec.kv_dtype()));
    }
    auto plan = e->plan_for(budget, workspace);
    if (!plan)
        return plan.error();
    if (Status st = exec.resize_kv(plan->num_blocks, bs, {}); !st)
        return make_error("engine: KV cache of " + std::to_string(plan->num_blocks) +
                          " blocks: " + st.message());
    e->plan_ = *plan;
    e->kv_mgr_ = std::make_unique<KvCacheManager>(plan->num_blocks, bs,
                                                  config.enable_prefix_caching, config.cache_key);
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

Result<RequestId> Engine::add_request(std::vector<int32_t> prompt_ids,
                                      const SamplingParams& params) {
    if (Status st = params.validate(); !st)
        return st.error();
    if (prompt_ids.empty())
        return make_error("add_request: the prompt has no tokens");
    const int32_t vocab = exec_.vocab_size();
    for (int32_t id : prompt_ids)
        if (id < 0 || id >= vocab)
            return make_error("add_request: prompt token id " + std::to_string(id) +
                              " is outside the vocabulary (size " + std::to_string(vocab) + ")");
    const int64_t limit = context_limit();
    if (static_cast<int64_t>(prompt_ids.size()) >= limit)
        return make_error("add_request: prompt of " + std::to_string(prompt_ids.size()) +
                          " tokens leaves no room in a context of " + std::to_string(limit) +
                          " tokens");
    const RequestId id = next_id_++;
    auto r = std::make_unique<Request>(id, std::move(prompt_ids), params, tokenizer_,
                                       config_.skip_special_tokens);
    r->stop_ids = params.stop_token_ids;
    if (!params.ignore_eos)
        for (int32_t s : tokenizer_.stop_ids())
            if (std::find(r->stop_ids.begin(), r->stop_ids.end(), s) == r->stop_ids.end())
                r->stop_ids.push_back(s);
    r->arrival = EngineClock::now();
    scheduler_->add(r.get());
    requests_.emplace(id, std::move(r));
    return id;
}

Result<RequestId> Engine::fork(RequestId src_id, const SamplingParams& params) {
    if (Status st = params.validate(); !st)
        return st.error();
    Request* src = find(src_id);
    if (!src || src->status != RequestStatus::Running || !kv_mgr_->has_table(src_id))
        return make_error("fork: request " + std::to_string(src_id) + " is not running");
    const RequestId id = next_id_++;
    // The child's prompt is everything up to the fork point; its outputs start there.
    auto child = std::make_unique<Request>(*src);
    child->id = id;
    child->params = params;
    child->num_prompt_tokens = src->num_tokens();
    child->sampler = Sampler(params);
    child->sampler.set_prompt(child->tokens);
    child->matcher = StopStringMatcher(params.stop);
    child->arrival = EngineClock::now();
    child->itl_sum_ms = child->itl_last_ms = child->itl_max_ms = 0;
    child->stop_ids = params.stop_token_ids;
    if (!params.ignore_eos)
        for (int32_t s : tokenizer_.stop_ids())
            if (std::find(child->stop_ids.begin(), child->stop_ids.end(), s) ==
                child->stop_ids.end())
                child->stop_ids.push_back(s);
    child->num_preemptions = 0;
    kv_mgr_->fork(src_id, id);
    scheduler_->add_running(child.get());
    requests_.emplace(id, std::move(child));
    return id;
}

bool Engine::abort(RequestId id) {
    Request* r = find(id);
    if (!r)
        return false;
    finish_request(*r, FinishReason::Aborted);
    return true;
}

void Engine::finish_request(Request& r, FinishReason why) {
    r.finish = why;
    scheduler_->remove(&r);
    r.status = RequestStatus::Finished;
    finished_.push_back(metrics_of(r, EngineClock::now()));
    requests_.erase(r.id); // r is gone after this line
}

Status Engine::set_memory_budget(const MemoryBudget& budget) {
    auto plan = plan_for(budget, plan_.workspace_bytes);
    if (!plan)
        return plan.error();
    config_.memory = budget;
    config_.num_blocks.reset();
    pending_plan_ = *plan;
    return ok_status();
}

Status Engine::set_num_blocks(int32_t num_blocks) {
    if (num_blocks < 1)
        return make_error("set_num_blocks: need at least one block");
    MemoryBudget b = config_.memory;
    b.kv_bytes = static_cast<int64_t>(num_blocks) * plan_.bytes_per_block;
    auto plan = plan_for(b, plan_.workspace_bytes);
    if (!plan)
        return plan.error();
    config_.num_blocks = num_blocks;
    pending_plan_ = *plan;
    return ok_status();
}

void Engine::set_limits(int32_t max_num_seqs, int32_t max_num_batched_tokens) {
    config_.max_num_seqs = std::max(1, max_num_seqs);
    config_.max_num_batched_tokens = std::max(1, max_num_batched_tokens);
    SchedulerConfig sc = scheduler_->config();
    sc.max_num_seqs = config_.max_num_seqs;
    sc.max_num_batched_tokens = config_.max_num_batched_tokens;
    scheduler_->set_config(sc);
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
    if (!pending_plan_)
        return;
    MemoryPlan plan = *pending_plan_;
    pending_plan_.reset();
    const int32_t n = std::max(plan.num_blocks, min_blocks_for_live());
    if (n != plan.num_blocks) {
        plan.num_blocks = n;
        plan.kv_bytes = static_cast<int64_t>(n) * plan.bytes_per_block;
    }
    if (n == kv_mgr_->pool().num_blocks()) {
        plan_ = plan;
        return;
    }
    const int32_t old_n = kv_mgr_->pool().num_blocks();
    while (kv_mgr_->pool().num_used() > n && scheduler_->preempt_newest(&replan_preempted_)) {
    }
    std::vector<BlockCopy> moves;
    kv_mgr_->resize(n, &moves);
    std::vector<KvBlockMove> keep;
    keep.reserve(moves.size());
    for (const BlockCopy& m : moves)
        keep.push_back(KvBlockMove{m.src, m.dst});
    if (Status st = exec_.resize_kv(n, config_.block_size, keep); !st) {
        // The backend kept its old pool: drop every live request's K/V (they are recomputed)
        // and return the manager to the old size, with nothing to move.
        last_error_ = "re-planning the KV cache: " + st.message();
        while (scheduler_->preempt_newest(&replan_preempted_)) {
        }
        kv_mgr_->resize(old_n, &moves);
        SchedulerConfig sc = scheduler_->config();
        sc.context_limit = context_limit();
        scheduler_->set_config(sc);
        return;
    }
    plan_ = plan;
    SchedulerConfig sc = scheduler_->config();
    sc.context_limit = context_limit();
    scheduler_->set_config(sc);
}

StepOutputs Engine::step() {
    StepOutputs out;
    step(out);
    return out;
}

void Engine::step(StepOutputs& out) {
    out.outputs.clear();
    out.step_index = -1;
    out.num_prefill_tokens = out.num_decode_tokens = out.batch_size = 0;
    finished_.clear();
    replan_preempted_.clear();
    apply_pending_plan();
    const auto t0 = EngineClock::now();
    scheduler_->schedule(plan_step_);
    if (!replan_preempted_.empty())
        plan_step_.preempted.insert(plan_step_.preempted.begin(), replan_preempted_.begin(),
                                    replan_preempted_.end());
    if (plan_step_.empty()) {
        last_scheduled_.clear();
        return;
    }
    account_step();
    if (execute()) {
        update(out);
    } else {
        // A device failure: finish what was scheduled (nothing sampled) rather than retrying a
        // step that may fail forever.
        for (const ScheduledRequest& s : plan_step_.scheduled) {
            Request* r = find(s.id);
            if (!r)
                continue;
            RequestOutput& o = out.outputs.emplace_back();
            o.id = s.id;
            o.finished = true;
            o.finish = FinishReason::Aborted;
            finish_request(*r, FinishReason::Aborted);
            o.metrics = finished_.back();
        }
        last_scheduled_.clear();
    }
    const auto t1 = EngineClock::now();
    last_step_ms_ = ms_between(t0, t1);
    out.step_index = step_index_++;
    out.step_ms = last_step_ms_;
    out.num_prefill_tokens = plan_step_.num_prefill_tokens;
    out.num_decode_tokens = plan_step_.num_decode_tokens;
    out.batch_size = static_cast<int32_t>(plan_step_.scheduled.size());
}

void Engine::account_step() {
    const int32_t bs = config_.block_size;
    const int64_t limit = context_limit();
    for (const ScheduledRequest& s : plan_step_.scheduled) {
        const Request* r = find(s.id);
        accounting_.allocated_slot_steps += static_cast<int64_t>(kv_mgr_->blocks(s.id).size()) * bs;
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
    for (const BlockCopy& c : plan_step_.copies)
        exec_.copy_block(c.src, c.dst);
    batch_.clear();
    int32_t n_logits = 0;
    for (const ScheduledRequest& s : plan_step_.scheduled) {
        const Request* r = find(s.id);
        const bool last = s.wants_logits();
        n_logits += last ? 1 : 0;
        batch_.add_sequence(
            std::span<const int32_t>(r->tokens).subspan(static_cast<size_t>(s.num_computed),
                                                        static_cast<size_t>(s.num_scheduled)),
            s.num_computed, kv_mgr_->blocks(s.id), config_.block_size,
            last ? ForwardBatch::Logits::Last : ForwardBatch::Logits::None);
    }
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
    return true;
}

void Engine::update(StepOutputs& out) {
    const auto now = EngineClock::now();
    out.time = now;
    const size_t vocab = static_cast<size_t>(exec_.vocab_size());
    last_scheduled_.resize(plan_step_.scheduled.size());
    size_t row = 0;
    for (size_t i = 0; i < plan_step_.scheduled.size(); ++i) {
        const ScheduledRequest& s = plan_step_.scheduled[i];
        Request& r = *find(s.id);
        r.num_computed += s.num_scheduled;
        if (s.prefill)
            total_prompt_computed_ += s.num_scheduled;
        kv_mgr_->commit_computed(r.id, r.tokens, r.num_computed);
        SnapshotScheduled& rec = last_scheduled_[i];
        rec.id = s.id;
        rec.prefill = s.prefill;
        rec.num_scheduled = s.num_scheduled;
        rec.num_computed = r.num_computed;
        auto table = kv_mgr_->blocks(s.id);
        rec.blocks.assign(table.begin(), table.end());
        if (s.wants_logits()) {
            RequestOutput& o = out.outputs.emplace_back();
            o.id = r.id;
            if (step_greedy_)
                sample_into(r, nullptr, o, greedy_ids_[row]);
            else
                sample_into(r, logits_.data() + row * vocab, o);
            ++row;
            ++total_generated_;
            if (o.finished) {
                finish_request(r, o.finish); // r is gone
                o.metrics = finished_.back();
            } else {
                o.metrics = metrics_of(r, now);
            }
        }
        rec.num_total = s.num_total + (s.wants_logits() ? 1 : 0);
    }
}

bool Engine::step_is_device_greedy() const {
    if (!config_.device_greedy || !exec_.device_greedy())
        return false;
    for (const ScheduledRequest& s : plan_step_.scheduled) {
        if (!s.wants_logits())
            continue;
        const SamplingParams& p = find(s.id)->params;
        if (p.temperature != 0.0f || p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f ||
            p.frequency_penalty != 0.0f || p.logprobs > 0)
            return false;
    }
    return true;
}

void Engine::sample_into(Request& r, const float* logits, RequestOutput& o, int32_t device_id) {
    SampledToken tok;
    if (logits)
        tok = r.sampler.sample(
            std::span<const float>(logits, static_cast<size_t>(exec_.vocab_size())));
    else
        tok.id = device_id;
    r.sampler.accept(tok.id);
    r.tokens.push_back(tok.id);
    const auto now = EngineClock::now();
    if (r.num_output() == 1) {
        r.first_token = now;
    } else {
        r.itl_last_ms = ms_between(r.last_token, now);
        r.itl_sum_ms += r.itl_last_ms;
        r.itl_max_ms = std::max(r.itl_max_ms, r.itl_last_ms);
    }
    r.last_token = now;
    o.new_token_ids.push_back(tok.id);
    if (r.params.logprobs > 0)
        o.logprobs.push_back(std::move(tok));
    const int32_t id = o.new_token_ids.back();

    FinishReason why = FinishReason::None;
    if (std::find(r.stop_ids.begin(), r.stop_ids.end(), id) != r.stop_ids.end()) {
        why = FinishReason::Stop;
        StopStringMatcher::Step end = r.matcher.push(r.decoder.flush());
        o.text = std::move(end.text);
        if (end.stopped)
            o.stop_matched = end.matched;
        else
            o.text += r.matcher.flush();
    } else {
        StopStringMatcher::Step st = r.matcher.push(r.decoder.push(id));
        o.text = std::move(st.text);
        if (st.stopped) {
            why = FinishReason::Stop;
            o.stop_matched = st.matched;
        } else if (r.num_output() >= r.params.max_tokens || r.num_tokens() >= context_limit()) {
            why = FinishReason::Length;
            StopStringMatcher::Step end = r.matcher.push(r.decoder.flush());
            o.text += end.text;
            if (end.stopped) {
                why = FinishReason::Stop;
                o.stop_matched = end.matched;
            } else {
                o.text += r.matcher.flush();
            }
        }
    }
    if (why != FinishReason::None) {
        o.finished = true;
        o.finish = why;
        r.finish = why;
        r.stop_matched = o.stop_matched;
    }
}

} // namespace llmwb
