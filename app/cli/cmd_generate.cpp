// llmwb generate / perplexity.
#include <cmath>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_model.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "engine/runtime/generator.h"
#include "engine/runtime/perplexity.h"

namespace llmwb::cli {

std::string join_ids(const std::vector<int32_t>& ids) {
    std::string s;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) s += ',';
        s += std::to_string(ids[i]);
    }
    return s;
}

namespace {

const char* kGenerateHelp =
    "llmwb generate --model M (--prompt T | --ids LIST | --chat FILE.json) [options]\n"
    "  --max-tokens N            tokens to generate (default 256)\n"
    "  --temperature T           0 = greedy (default 1.0)\n"
    "  --top-p P  --top-k K  --min-p P\n"
    "  --repetition-penalty R  --presence-penalty P  --frequency-penalty F\n"
    "  --seed S                  same seed, same output\n"
    "  --stop S                  stop string (repeatable); --stop-token-ids LIST; --ignore-eos\n"
    "  --logprobs N              logprob of each token and the top N alternatives\n"
    "  --enable-thinking B       passed to the chat template with --chat\n"
    "  --threads N               CPU threads (default: all cores)\n"
    "  --device auto|cpu|cuda    backend (default auto); --kv-dtype f16|f32; --no-cuda-graphs\n"
    "  --json                    one JSON object: ids, text, timings, finish_reason\n"
    "llmwb generate --prompts FILE.jsonl ...   many prompts at once (see --prompts F --help)\n";

Result<SamplingParams> sampling_from_args(const CliArgs& a) {
    SamplingParams p;
    auto set_f = [&](const char* name, float& field, double lo, double hi) -> Status {
        auto v = a.get_double(name, lo, hi);
        if (!v) return v.error();
        if (*v) field = static_cast<float>(**v);
        return ok_status();
    };
    for (auto st : {set_f("temperature", p.temperature, 0, 100), set_f("top-p", p.top_p, 0, 1),
                    set_f("min-p", p.min_p, 0, 1),
                    set_f("repetition-penalty", p.repetition_penalty, 0, 100),
                    set_f("presence-penalty", p.presence_penalty, -2, 2),
                    set_f("frequency-penalty", p.frequency_penalty, -2, 2)})
        if (!st) return st.error();
    auto top_k = a.get_int("top-k", 0, 1 << 30);
    if (!top_k) return top_k.error();
    if (*top_k) p.top_k = static_cast<int>(**top_k);
    auto max_tokens = a.get_int("max-tokens", 1, 1 << 24);
    if (!max_tokens) return max_tokens.error();
    if (*max_tokens) p.max_tokens = static_cast<int>(**max_tokens);
    auto seed = a.get_int("seed", 0, INT64_MAX);
    if (!seed) return seed.error();
    if (*seed) p.seed = static_cast<uint64_t>(**seed);
    auto logprobs = a.get_int("logprobs", 0, 20);
    if (!logprobs) return logprobs.error();
    if (*logprobs) p.logprobs = static_cast<int>(**logprobs);
    p.stop = a.get_all("stop");
    auto stop_ids = a.get_ids("stop-token-ids");
    if (!stop_ids) return stop_ids.error();
    p.stop_token_ids = *stop_ids;
    p.ignore_eos = a.has("ignore-eos");
    if (auto st = p.validate(); !st) return st.error();
    return p;
}

Result<int> threads_from_args(const CliArgs& a) {
    auto t = a.get_int("threads", 1, 1024);
    if (!t) return t.error();
    return t->value_or(0);
}

}  // namespace

int cmd_generate(const Args& argv) {
    if (generate_routes_to_batch(argv)) return cmd_generate_batch(argv);
    const char* cmd = "generate";
    auto args = CliArgs::parse(
        argv,
        {"model", "prompt", "ids", "chat", "max-tokens", "temperature", "top-p", "top-k", "min-p",
         "seed", "repetition-penalty", "presence-penalty", "frequency-penalty", "stop",
         "stop-token-ids", "logprobs", "enable-thinking", "threads", "device", "kv-dtype"},
        {"json", "ignore-eos", "help", "no-cuda-graphs"});
    if (!args) return fail(cmd, args.message());
    if (args->has("help")) {
        std::fputs(kGenerateHelp, stdout);
        return 0;
    }
    int sources = args->has("prompt") + args->has("ids") + args->has("chat");
    if (sources != 1) return fail(cmd, "give exactly one of --prompt, --ids, --chat");
    auto params = sampling_from_args(*args);
    if (!params) return fail(cmd, params.message());
    auto threads = threads_from_args(*args);
    if (!threads) return fail(cmd, threads.message());
    auto thinking = args->get_bool("enable-thinking");
    if (!thinking) return fail(cmd, thinking.message());

    auto mo = open_cli_model(*args);
    if (!mo) return fail(cmd, mo.message());
    CliModel& m = **mo;
    // A stop token the model can never produce is a mistake, not a no-op.
    for (int32_t id : params->stop_token_ids)
        if (id >= m.model->config.vocab_size)
            return fail(cmd, "--stop-token-ids: token id " + std::to_string(id) +
                                 " is outside the vocabulary (size " +
                                 std::to_string(m.model->config.vocab_size) + ")");
    std::vector<int32_t> prompt;
    if (auto p = args->get("prompt")) {
        prompt = m.tokenizer->encode(*p, true);
    } else if (args->has("ids")) {
        auto ids = args->get_ids("ids");
        if (!ids) return fail(cmd, ids.message());
        prompt = *ids;
    } else {
        auto text = render_chat_file(m, *args->get("chat"), true, *thinking);
        if (!text) return fail(cmd, text.message());
        prompt = m.tokenizer->encode(*text, false);
    }
    if (prompt.empty()) return fail(cmd, "the prompt is empty");
    auto exec = m.open_executor(*args, *threads, 512, 1,
                                static_cast<int64_t>(prompt.size()) + params->max_tokens);
    if (!exec) return fail(cmd, exec.message());

    const bool json = args->has("json");
    auto result = generate(**exec, *m.tokenizer, prompt, *params,
                           [&](const TokenEvent& ev) {
                               if (!json && !ev.text.empty()) {
                                   std::cout << ev.text << std::flush;
                               }
                               return true;
                           });
    if (!result) return fail(cmd, result.message());
    const GenerationResult& r = *result;
    if (json) {
        nlohmann::json j;
        j["ids"] = r.ids;
        j["text"] = r.text;
        j["finish_reason"] = r.finish_reason;
        if (!r.stop_matched.empty()) j["stop"] = r.stop_matched;
        j["prompt_tokens"] = r.prompt_tokens;
        j["completion_tokens"] = r.ids.size();
        j["ttft_ms"] = r.ttft_ms;
        j["prefill_tokens_per_s"] = r.prefill_tokens_per_s;
        j["decode_tokens_per_s"] = r.decode_tokens_per_s;
        j["total_ms"] = r.total_ms;
        if (params->logprobs > 0) {
            nlohmann::json lp = nlohmann::json::array();
            for (const auto& t : r.logprobs) {
                nlohmann::json e;
                e["id"] = t.id;
                e["logprob"] = t.logprob;
                nlohmann::json top = nlohmann::json::array();
                for (const auto& c : t.top) top.push_back({{"id", c.id}, {"logprob", c.logprob}});
                e["top"] = top;
                lp.push_back(e);
            }
            j["logprobs"] = lp;
        }
        std::cout << dump_json(j) << "\n";
    } else {
        std::cout << "\n" << std::flush;
        std::fprintf(stderr,
                     "[%d prompt tokens, %zu generated, TTFT %.1f ms, prefill %.1f tok/s, "
                     "decode %.2f tok/s, finish: %s]\n",
                     r.prompt_tokens, r.ids.size(), r.ttft_ms, r.prefill_tokens_per_s,
                     r.decode_tokens_per_s, r.finish_reason.c_str());
    }
    return 0;
}

int cmd_perplexity(const Args& argv) {
    const char* cmd = "perplexity";
    auto args = CliArgs::parse(argv, {"model", "text", "file", "ids", "threads", "device", "kv-dtype"},
                               {"json", "help", "no-cuda-graphs"});
    if (!args) return fail(cmd, args.message());
    if (args->has("help")) {
        std::puts("llmwb perplexity --model M (--text T | --file F | --ids LIST) [--json]\n"
                  "  logprobs[i] = log p(token i+1 | tokens <= i); ppl = exp(-mean logprob).\n"
                  "  Text is tokenized with the model's special tokens (BOS) as HF does.\n"
                  "  --device auto|cpu|cuda (default auto); --kv-dtype f16|f32; --threads N");
        return 0;
    }
    int sources = args->has("text") + args->has("file") + args->has("ids");
    if (sources != 1) return fail(cmd, "give exactly one of --text, --file, --ids");
    auto threads = threads_from_args(*args);
    if (!threads) return fail(cmd, threads.message());
    auto mo = open_cli_model(*args);
    if (!mo) return fail(cmd, mo.message());
    CliModel& m = **mo;
    std::vector<int32_t> ids;
    if (auto t = args->get("text")) {
        ids = m.tokenizer->encode(*t, true);
    } else if (auto f = args->get("file")) {
        auto content = read_text_file(*f);
        if (!content) return fail(cmd, content.message());
        ids = m.tokenizer->encode(*content, true);
    } else {
        auto parsed = args->get_ids("ids");
        if (!parsed) return fail(cmd, parsed.message());
        ids = *parsed;
    }
    auto exec = m.open_executor(*args, *threads, 512, 1, static_cast<int64_t>(ids.size()));
    if (!exec) return fail(cmd, exec.message());
    auto r = perplexity(**exec, ids);
    if (!r) return fail(cmd, r.message());
    if (args->has("json")) {
        nlohmann::json j;
        j["tokens"] = r->tokens;
        j["ppl"] = r->ppl;
        j["mean_logprob"] = r->mean_logprob;
        j["logprobs"] = r->logprobs;
        j["tokens_per_s"] = r->tokens_per_s;
        std::cout << dump_json(j) << "\n";
    } else {
        std::printf("tokens: %lld\nppl: %.6f\nmean logprob: %.6f\n%.1f tokens/s\n",
                    static_cast<long long>(r->tokens), r->ppl, r->mean_logprob, r->tokens_per_s);
    }
    return 0;
}

}  // namespace llmwb::cli
