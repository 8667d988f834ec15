// Request: one sequence inside the serving engine — its tokens (prompt followed by generated
// tokens), how many of them have KV in the cache, its sampler and streaming text state, and
// its timings. Owned by the Engine; the Scheduler and KvCacheManager refer to it by pointer/id.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/runtime/sampler.h"
#include "engine/runtime/stop_matcher.h"
#include "engine/tokenizer/streaming_decoder.h"

namespace llmwb {

using RequestId = int64_t;
using EngineClock = std::chrono::steady_clock;

enum class RequestStatus : uint8_t { Waiting, Running, Finished };
enum class FinishReason : uint8_t { None, Stop, Length, Aborted };

const char* finish_reason_name(FinishReason r); // "", "stop", "length", "abort"

struct Request {
    Request(RequestId id_, std::vector<int32_t> prompt, const SamplingParams& p,
            const Tokenizer& tokenizer, bool skip_special_tokens)
        : id(id_), tokens(std::move(prompt)),
          num_prompt_tokens(static_cast<int32_t>(tokens.size())), params(p), sampler(p),
          decoder(tokenizer, skip_special_tokens), matcher(p.stop) {
        sampler.set_prompt(tokens);
    }

    RequestId id;
    // Every token of the sequence: the prompt, then the generated tokens. After a preemption
    // the generated tokens are recomputed as part of the prompt (they are never re-sampled).
    std::vector<int32_t> tokens;
    int32_t num_prompt_tokens;
    int32_t num_computed = 0;      // tokens whose K/V are in the cache
    int32_t prefill_end = 0;       // tokens.size() at the last admission: below it = prefill
    int32_t num_cached_tokens = 0; // served by the prefix cache at the last admission
    RequestStatus status = RequestStatus::Waiting;
    FinishReason finish = FinishReason::None;
    std::string stop_matched;
    int64_t admit_seq = -1; // admission order (the newest running request is preempted)
    int32_t num_preemptions = 0;

    SamplingParams params;
    Sampler sampler;
    StreamingDecoder decoder;
    StopStringMatcher matcher;
    std::vector<int32_t> stop_ids; // eos/eot (unless ignore_eos) + params.stop_token_ids

    EngineClock::time_point arrival{}, first_token{}, last_token{};
    double itl_sum_ms = 0, itl_last_ms = 0, itl_max_ms = 0;

    int32_t num_tokens() const { return static_cast<int32_t>(tokens.size()); }
    int32_t num_output() const { return num_tokens() - num_prompt_tokens; }
    bool is_prefill() const { return num_computed < prefill_end; }
};

} // namespace llmwb
