#include "engine/serving/output_processor.h"

#include <algorithm>
#include <cassert>

#include "engine/tokenizer/tokenizer.h"

namespace llmwb {

namespace {

// The id of `text` when the tokenizer has it as one token, else -1.
int32_t single_token(const Tokenizer& tokenizer, std::string_view text) {
    const std::vector<int32_t> ids = tokenizer.encode(text, false);
    return ids.size() == 1 && tokenizer.decode(ids, false) == text ? ids[0] : -1;
}

} // namespace

OutputProcessor::OutputProcessor(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens),
      think_open_(single_token(tokenizer, "<think>")),
      think_close_(single_token(tokenizer, "</think>")) {}

int32_t OutputProcessor::forced_token(const Request& r, const State& st) const {
    if (r.params.thinking_budget && st.in_think && st.think_tokens >= *r.params.thinking_budget)
        return think_close_;
    return -1;
}

void OutputProcessor::start(State& st, const Request& r) {
    st.sampler.set_prompt(r.tokens);
    // A thinking block already open in r's tokens (a template that opens it, a fork): the
    // tokens after its <think> count against the budget.
    if (r.params.thinking_budget && think_open_ >= 0) {
        for (int32_t t : r.tokens) {
            if (t == think_open_) {
                st.in_think = true;
                st.think_tokens = 0;
            } else if (t == think_close_) {
                st.in_think = false;
            } else if (st.in_think) {
                ++st.think_tokens;
            }
        }
    }
    st.stop_ids = r.params.stop_token_ids;
    if (!r.params.ignore_eos)
        for (int32_t s : tokenizer_.stop_ids())
            if (std::find(st.stop_ids.begin(), st.stop_ids.end(), s) == st.stop_ids.end())
                st.stop_ids.push_back(s);
}

void OutputProcessor::add(const Request& r) {
    auto [it, inserted] = states_.try_emplace(r.id, tokenizer_, skip_special_tokens_, r.params);
    assert(inserted);
    start(it->second, r);
}

void OutputProcessor::fork(RequestId src, const Request& child) {
    auto from = states_.find(src);
    assert(from != states_.end());
    auto [it, inserted] = states_.try_emplace(child.id, from->second.decoder, child.params);
    assert(inserted);
    start(it->second, child);
}

void OutputProcessor::remove(RequestId id) {
    states_.erase(id);
}

void OutputProcessor::append_token(Request& r, const float* logits, int32_t vocab,
                                   int32_t device_id, int64_t context_limit, RequestOutput& o) {
    auto it = states_.find(r.id);
    assert(it != states_.end());
    State& st = it->second;
    SampledToken tok;
    if (const int32_t forced = forced_token(r, st); forced >= 0) {
        tok.id = forced; // the thinking budget is spent
        if (logits && r.params.logprobs > 0) {
            const std::span<const float> row(logits, static_cast<size_t>(vocab));
            tok.logprob = static_cast<float>(log_softmax_at(row, forced));
            tok.top = top_logprobs(row, r.params.logprobs);
        }
    } else if (logits) {
        tok = st.sampler.sample(std::span<const float>(logits, static_cast<size_t>(vocab)));
    } else {
        tok.id = device_id;
    }
    push_token(r, st, std::move(tok), context_limit, o);
}

bool OutputProcessor::append_verified(Request& r, const float* logits, int32_t vocab,
                                      int32_t device_id, int32_t draft, int64_t context_limit,
                                      RequestOutput& o) {
    auto it = states_.find(r.id);
    assert(it != states_.end());
    State& st = it->second;
    SampledToken tok;
    bool accepted = false;
    if (const int32_t forced = forced_token(r, st); forced >= 0) {
        tok.id = forced; // the thinking budget is spent: the draft stands only if it is </think>
        accepted = draft == forced;
    } else if (logits) {
        tok = st.sampler.verify(std::span<const float>(logits, static_cast<size_t>(vocab)), draft,
                                &accepted);
    } else {
        tok.id = device_id;
        accepted = device_id == draft;
    }
    push_token(r, st, std::move(tok), context_limit, o);
    return accepted;
}

void OutputProcessor::append_chosen(Request& r, int32_t token, int64_t context_limit,
                                    RequestOutput& o) {
    auto it = states_.find(r.id);
    assert(it != states_.end());
    SampledToken tok;
    tok.id = token;
    push_token(r, it->second, std::move(tok), context_limit, o);
}

bool OutputProcessor::is_stop_token(RequestId id, int32_t token) const {
    auto it = states_.find(id);
    if (it == states_.end())
        return false;
    const auto& ids = it->second.stop_ids;
    return std::find(ids.begin(), ids.end(), token) != ids.end();
}

void OutputProcessor::push_token(Request& r, State& st, SampledToken tok, int64_t context_limit,
                                 RequestOutput& o) {
    st.sampler.accept(tok.id);
    r.tokens.push_back(tok.id);
    if (r.params.thinking_budget && think_open_ >= 0) {
        if (tok.id == think_open_) {
            st.in_think = true;
            st.think_tokens = 0;
        } else if (tok.id == think_close_) {
            st.in_think = false;
        } else if (st.in_think) {
            ++st.think_tokens;
        }
    }
    const int32_t id = tok.id;
    o.new_token_ids.push_back(id);
    if (r.params.logprobs > 0)
        o.logprobs.push_back(std::move(tok));

    // Token timings.
    const auto now = EngineClock::now();
    if (r.num_output() == 1) {
        r.first_token = now;
    } else {
        r.itl_last_ms = ms_between(r.last_token, now);
        r.itl_sum_ms += r.itl_last_ms;
        r.itl_max_ms = std::max(r.itl_max_ms, r.itl_last_ms);
    }
    r.last_token = now;

    // Detokenize, stop strings and the finish reason. A stop token's text is never shown; text
    // held back by the decoder or the matcher is released when the request ends (unless a stop
    // string completes in it).
    auto release_rest = [&](FinishReason why) {
        StopStringMatcher::Step end = st.matcher.push(st.decoder.flush());
        o.text += end.text;
        if (end.stopped) {
            o.stop_matched = end.matched;
            return FinishReason::Stop;
        }
        o.text += st.matcher.flush();
        return why;
    };
    FinishReason why = FinishReason::None;
    if (std::find(st.stop_ids.begin(), st.stop_ids.end(), id) != st.stop_ids.end()) {
        o.stop_token = id;
        why = release_rest(FinishReason::Stop);
    } else {
        StopStringMatcher::Step step = st.matcher.push(st.decoder.push(id));
        o.text += step.text;
        if (step.stopped) {
            why = FinishReason::Stop;
            o.stop_matched = step.matched;
        } else if (r.num_output() >= r.params.max_tokens || r.num_tokens() >= context_limit) {
            why = release_rest(FinishReason::Length);
        }
    }
    if (why != FinishReason::None) {
        o.finished = true;
        o.finish = why;
        r.finish = why;
    }
}

} // namespace llmwb
