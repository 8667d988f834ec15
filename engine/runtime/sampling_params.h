// SamplingParams: how one request samples its tokens and when it stops, and the one table of its
// fields (name, type, allowed range) that every source of a request reads: validate(), the CLI's
// flags (--temperature ...), the JSONL prompt files and the app/HTTP server. A bad value gives
// the same message whatever it came from: "temperature must be in [0, inf), got -1"; only the
// place it came from is put before it ("--temperature: ", "prompts.jsonl:3: ").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/result.h"

namespace llmwb {

struct SamplingParams {
    float temperature = 1.0f;        // >= 0; 0 = greedy
    float top_p = 1.0f;              // (0, 1]
    int top_k = 0;                   // 0 = off, else >= 1
    float min_p = 0.0f;              // [0, 1]
    float repetition_penalty = 1.0f; // > 0
    float presence_penalty = 0.0f;   // [-2, 2]
    float frequency_penalty = 0.0f;  // [-2, 2]
    std::optional<uint64_t> seed;
    int max_tokens = 256; // >= 1
    // The length rule (resolve_max_tokens, vLLM's): a max_tokens the request gave (a CLI flag, a
    // JSONL key, the app's per-chat value; every setter of the field table sets this) is strict:
    // prompt + max_tokens beyond the model's context is refused. Left unset, max_tokens is a
    // default cap, lowered to the room the prompt leaves ("up to 256, within the context");
    // unset with max_tokens = INT_MAX is vLLM's absent max_tokens: up to the context.
    bool max_tokens_set = false;
    std::vector<std::string> stop; // stop strings (non-empty)
    std::vector<int32_t> stop_token_ids;
    bool ignore_eos = false;
    // [0, 20]. N >= 1: report the chosen token's logprob and the top-N of every generated
    // token; 0: no logprobs (their log_softmax over the vocabulary is not computed).
    int logprobs = 0;
    // Reasoning budget (thinking models, Qwen3's <think> ... </think>): at most this many tokens
    // inside a thinking block; then </think> is forced and the answer continues. Unset: no cap.
    // A model without single <think> and </think> tokens refuses it (Engine::add_request).
    std::optional<int32_t> thinking_budget;

    // Ok, or the table's error for the first bad field. vocab_size > 0 also checks that every
    // stop token id is inside the vocabulary (a stop token the model can never produce is a
    // mistake, not a no-op).
    Status validate(int32_t vocab_size = 0) const;
    // Plain greedy: the argmax of the raw logits is the token (no penalties, no logprobs), so a
    // backend may pick it on the device.
    bool is_plain_greedy() const {
        return temperature == 0.0f && repetition_penalty == 1.0f && presence_penalty == 0.0f &&
               frequency_penalty == 0.0f && logprobs == 0;
    }
};

// The one length rule of a request, applied by Engine::add_request and checked early by its
// callers (the CLI sizes its pool only for requests that pass): the number of tokens the
// request may generate, or an error giving both numbers:
//   "prompt (12 tokens) + max_tokens (1000000) = 1000012 exceeds the model's context of 32768
//   tokens", or "prompt (40000 tokens) leaves no room in the model's context of 32768 tokens".
// context_tokens: the model's context (max_position); <= 0: unknown (max_tokens as given).
Result<int32_t> resolve_max_tokens(const SamplingParams& p, int64_t prompt_tokens,
                                   int64_t context_tokens);

enum class SamplingFieldType : uint8_t {
    Real,     // a number within [min, max] (open ends where said)
    Integer,  // an integer within [imin, imax]
    Flag,     // true / false
    Strings,  // strings, none empty (stop)
    TokenIds, // non-negative token ids (stop_token_ids)
};

// One field of SamplingParams as requests spell it.
struct SamplingField {
    std::string_view name; // the request key ("top_p"); the CLI flag is "--top-p"
    SamplingFieldType type;
    std::string_view range;                  // the allowed values as messages show them ("(0, 1]")
    std::string_view help;                   // one line for --help
    double min = 0, max = 0;                 // Real
    bool min_open = false, max_open = false; // Real: the bound itself is excluded
    int64_t imin = 0, imax = 0;              // Integer
};

// Every field, in SamplingParams order.
std::span<const SamplingField> sampling_fields();
// The field named `name` ("top_p"); nullptr when there is none.
const SamplingField* find_sampling_field(std::string_view name);
// "--top-p" for "top_p".
std::string sampling_flag(const SamplingField& field);

// Setters: check `value` against the field's range and set it, or return the field's error
// ("top_p must be in (0, 1], got 2"; "max_tokens must be an integer in [1, 2147483647], got
// 1.5"). set_sampling_number takes a Real or an Integer field (an Integer field needs an
// integral value); set_sampling_integer an Integer field.
Status set_sampling_number(SamplingParams& p, const SamplingField& field, double value);
Status set_sampling_integer(SamplingParams& p, const SamplingField& field, int64_t value);
// A field's value as text (a CLI flag's value): a number, "true"/"false" for a Flag, one stop
// string (appended), or token ids "1,2,3" (replacing). Errors as above, with the text quoted
// when it is not a number.
Status set_sampling_text(SamplingParams& p, const SamplingField& field, std::string_view text);
// The field's error for a value given as `got` (as its source spells it, e.g. a JSON string
// "\"abc\""): "<name> must be in <range>, got <got>".
Status sampling_field_error(const SamplingField& field, std::string_view got);

} // namespace llmwb
