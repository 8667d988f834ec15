// llmwb generate (one prompt) / perplexity. generate runs through the serving Engine as every
// other generation path does (engine/serving/generation.h).
#include <cmath>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_model.h"
#include "app/cli/cli_options.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "app/cli/generate_choices.h"
#include "engine/runtime/perplexity.h"
#include "engine/serving/generation.h"

namespace llmwb::cli {

std::string join_ids(const std::vector<int32_t>& ids) {
    std::string s;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i)
            s += ',';
        s += std::to_string(ids[i]);
    }
    return s;
}

namespace {

const char* kGenerateHelp =
    "llmwb generate --model M (--prompt T | --ids LIST | --chat FILE.json) [options]\n"
    "  --enable-thinking B       passed to the chat template with --chat\n"
    "  --json                    one JSON object: ids, text, timings, finish_reason\n"
    "llmwb generate --prompts FILE.jsonl ...   many prompts at once (see --prompts F --help)\n"
    "  Length rule (vLLM's): prompt + --max-tokens beyond the model's context is refused;\n"
    "  without --max-tokens up to 256 tokens are generated, fewer where the context ends.\n"
    "sampling:\n";

// Everything `llmwb generate` (one prompt) reads from its command line.
struct GenerateOptions {
    std::optional<std::string> prompt, chat;
    std::optional<std::vector<int32_t>> ids;
    std::optional<bool> enable_thinking;
    bool json = false;
    SamplingParams sampling;
    DeviceOptions device;
    SpeculativeConfig speculative;
    ChoiceOptions choices; // --n, --best-of, --vote (generate_choices.h)
};

const OptionNames& generate_option_names() {
    static const OptionNames n = [] {
        OptionNames o{{"model", "prompt", "ids", "chat", "enable-thinking"}, {"json", "help"}};
        return o.add(sampling_option_names())
            .add(device_option_names())
            .add(speculative_option_names())
            .add(choice_option_names());
    }();
    return n;
}

Result<GenerateOptions> parse_generate_options(const CliArgs& a) {
    GenerateOptions o;
    if (a.has("prompt") + a.has("ids") + a.has("chat") != 1)
        return make_error("give exactly one of --prompt, --ids, --chat");
    o.prompt = a.get("prompt");
    o.chat = a.get("chat");
    if (a.has("ids")) {
        auto ids = a.get_ids("ids");
        if (!ids)
            return ids.error();
        o.ids = std::move(ids.value());
    }
    auto thinking = a.get_bool("enable-thinking");
    if (!thinking)
        return thinking.error();
    o.enable_thinking = *thinking;
    o.json = a.has("json");
    auto sampling = parse_sampling_options(a, SamplingParams{});
    if (!sampling)
        return sampling.error();
    o.sampling = std::move(sampling.value());
    auto device = parse_device_options(a);
    if (!device)
        return device.error();
    o.device = *device;
    auto spec = parse_speculative_options(a);
    if (!spec)
        return spec.error();
    o.speculative = *spec;
    auto choices = parse_choice_options(a);
    if (!choices)
        return choices.error();
    o.choices = std::move(choices.value());
    return o;
}

// finish_reason as `llmwb generate` has always printed it: a request cancelled by its caller is
// "cancelled".
std::string finish_text(const GenerationResult& r) {
    return r.cancelled ? "cancelled" : finish_reason_name(r.finish);
}

nlohmann::json result_json(const GenerationResult& r, const SamplingParams& params) {
    nlohmann::json j;
    j["ids"] = r.ids;
    j["text"] = r.text;
    j["finish_reason"] = finish_text(r);
    if (!r.stop_matched.empty())
        j["stop"] = r.stop_matched;
    j["prompt_tokens"] = r.prompt_tokens;
    j["completion_tokens"] = r.ids.size();
    j["ttft_ms"] = r.ttft_ms;
    j["prefill_tokens_per_s"] = r.prefill_tokens_per_s;
    j["decode_tokens_per_s"] = r.decode_tokens_per_s;
    j["total_ms"] = r.total_ms;
    if (params.logprobs > 0) {
        nlohmann::json lp = nlohmann::json::array();
        for (const auto& t : r.logprobs) {
            nlohmann::json e;
            e["id"] = t.id;
            e["logprob"] = t.logprob;
            nlohmann::json top = nlohmann::json::array();
            for (const auto& c : t.top)
                top.push_back({{"id", c.id}, {"logprob", c.logprob}});
            e["top"] = top;
            lp.push_back(e);
        }
        j["logprobs"] = lp;
    }
    return j;
}

} // namespace

int cmd_generate(const Args& argv) {
    if (generate_routes_to_batch(argv))
        return cmd_generate_batch(argv);
    const char* cmd = "generate";
    auto args = generate_option_names().parse(argv);
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::fputs(kGenerateHelp, stdout);
        std::fputs(sampling_options_help().c_str(), stdout);
        std::fputs("device:\n", stdout);
        std::fputs(kDeviceOptionsHelp, stdout);
        std::fputs(kSpeculativeOptionsHelp, stdout);
        std::fputs(kChoiceOptionsHelp, stdout);
        return 0;
    }
    auto opt = parse_generate_options(*args);
    if (!opt)
        return fail(cmd, opt.message());

    auto mo = open_cli_model(*args);
    if (!mo)
        return fail(cmd, mo.message());
    CliModel& m = **mo;
    if (Status st = opt->sampling.validate(m.model->config.vocab_size); !st)
        return fail(cmd, st.message());
    std::vector<int32_t> prompt;
    if (opt->prompt) {
        prompt = m.tokenizer->encode(*opt->prompt, true);
    } else if (opt->ids) {
        prompt = *opt->ids;
    } else {
        auto text = render_chat_file(m, *opt->chat, true, opt->enable_thinking);
        if (!text)
            return fail(cmd, text.message());
        prompt = m.tokenizer->encode(*text, false);
    }
    // The length rule before anything is sized (the engine applies the same rule again).
    auto max_tokens = resolve_max_tokens(opt->sampling, static_cast<int64_t>(prompt.size()),
                                         m.model->config.max_position);
    if (!max_tokens)
        return fail(cmd, max_tokens.message());
    // One request: one sequence (or one per sample of --n / --best-of, forked from the one
    // prefill), prefill in steps of 512 tokens, a pool sized to what the request can use
    // (within the utilization plan).
    const int32_t seqs = opt->choices.sequences();
    EngineOptions eo;
    eo.config.max_num_seqs = seqs;
    eo.config.memory.fallback_when_short = true;
    eo.config.speculative = opt->speculative;
    eo.size_to_need(static_cast<int64_t>(prompt.size()) + static_cast<int64_t>(seqs) * *max_tokens,
                    seqs);
    auto exec = m.open_executor(opt->device, eo.config.max_num_batched_tokens, seqs);
    if (!exec)
        return fail(cmd, exec.message());
    std::unique_ptr<DraftModelProposer> draft; // outlives the engine
    auto engine = Engine::create(**exec, *m.tokenizer, eo.config);
    if (!engine)
        return fail(cmd, engine.message());
    auto attached = attach_draft_model(m, **engine);
    if (!attached)
        return fail(cmd, attached.message());
    draft = std::move(attached.value());
    if (const MemoryPlan& plan = (*engine)->memory_plan(); plan.limit == KvPoolLimit::Fallback)
        std::fprintf(stderr, "llmwb generate: %s\n", plan.note.c_str());

    const bool json = opt->json;
    if (opt->choices.active())
        return run_choices(cmd, **engine, std::move(prompt), opt->sampling, opt->choices, json);
    auto result = generate(**engine, std::move(prompt), opt->sampling, [&](const TokenEvent& ev) {
        if (!json && !ev.text.empty())
            std::cout << ev.text << std::flush;
        return true;
    });
    if (!result)
        return fail(cmd, result.message());
    const GenerationResult& r = *result;
    const SpeculativeStats& spec = (*engine)->speculative_stats();
    if (json) {
        nlohmann::json j = result_json(r, opt->sampling);
        j["kv_cache_dtype"] = kv_dtype_name((*exec)->kv_dtype());
        j["dtype"] = weight_dtype_name(opt->device.weight_dtype);
        const MemoryPlan& plan = (*engine)->memory_plan();
        j["kv_cache"] = {{"bytes_per_block", plan.bytes_per_block},
                         {"block_size", plan.block_size},
                         {"num_blocks", plan.num_blocks},
                         {"tokens", static_cast<int64_t>(plan.num_blocks) * plan.block_size}};
        if (opt->speculative.enabled())
            j["speculative"] = {{"method", speculative_method_name(opt->speculative.method)},
                                {"num_speculative_tokens",
                                 opt->speculative.auto_k
                                     ? nlohmann::json("auto")
                                     : nlohmann::json(opt->speculative.num_speculative_tokens)},
                                {"num_drafts", spec.num_drafts},
                                {"num_draft_tokens", spec.num_draft_tokens},
                                {"num_accepted_tokens", spec.num_accepted_tokens},
                                {"acceptance_rate", spec.acceptance_rate()},
                                {"mean_acceptance_length", spec.mean_acceptance_length()}};
        std::cout << dump_json(j) << "\n";
    } else {
        std::cout << "\n" << std::flush;
        std::string accepted;
        if (opt->speculative.enabled())
            accepted = ", accepted " + std::to_string(spec.num_accepted_tokens) + "/" +
                       std::to_string(spec.num_draft_tokens) + " draft tokens";
        std::fprintf(stderr,
                     "[%d prompt tokens, %zu generated, TTFT %.1f ms, prefill %.1f tok/s, "
                     "decode %.2f tok/s%s, finish: %s]\n",
                     r.prompt_tokens, r.ids.size(), r.ttft_ms, r.prefill_tokens_per_s,
                     r.decode_tokens_per_s, accepted.c_str(), finish_text(r).c_str());
    }
    return 0;
}

int cmd_perplexity(const Args& argv) {
    const char* cmd = "perplexity";
    OptionNames names{{"model", "text", "file", "ids"}, {"json", "help"}};
    auto args = names.add(device_option_names()).parse(argv);
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::puts("llmwb perplexity --model M (--text T | --file F | --ids LIST) [--json]\n"
                  "  logprobs[i] = log p(token i+1 | tokens <= i); ppl = exp(-mean logprob).\n"
                  "  Text is tokenized with the model's special tokens (BOS) as HF does.\n"
                  "  With --kv-cache-dtype T the KV cache is stored as T (compare the ppl with\n"
                  "  f32's, or use `llmwb kld --model M --kv-cache-dtype T`).");
        std::fputs(kDeviceOptionsHelp, stdout);
        return 0;
    }
    int sources = args->has("text") + args->has("file") + args->has("ids");
    if (sources != 1)
        return fail(cmd, "give exactly one of --text, --file, --ids");
    auto device = parse_device_options(*args);
    if (!device)
        return fail(cmd, device.message());
    auto mo = open_cli_model(*args);
    if (!mo)
        return fail(cmd, mo.message());
    CliModel& m = **mo;
    std::vector<int32_t> ids;
    if (auto t = args->get("text")) {
        ids = m.tokenizer->encode(*t, true);
    } else if (auto f = args->get("file")) {
        auto content = read_text_file(*f);
        if (!content)
            return fail(cmd, content.message());
        ids = m.tokenizer->encode(*content, true);
    } else {
        auto parsed = args->get_ids("ids");
        if (!parsed)
            return fail(cmd, parsed.message());
        ids = *parsed;
    }
    auto exec = m.open_executor(*device, 512, 1);
    if (!exec)
        return fail(cmd, exec.message());
    // perplexity() uses blocks 0.. of the executor's pool in order: room for the text, within
    // the model's context (a longer text is perplexity()'s error).
    const int64_t ctx = m.model->config.max_position;
    const int64_t tokens =
        std::max<int64_t>(1, ctx > 0 ? std::min<int64_t>(static_cast<int64_t>(ids.size()), ctx)
                                     : static_cast<int64_t>(ids.size()));
    const auto blocks =
        static_cast<int32_t>((tokens + kDefaultKvBlockSize - 1) / kDefaultKvBlockSize);
    if (Status st = (*exec)->resize_kv(blocks, kDefaultKvBlockSize, {}); !st)
        return fail(cmd, st.message());
    auto r = perplexity(**exec, ids);
    if (!r)
        return fail(cmd, r.message());
    if (args->has("json")) {
        nlohmann::json j;
        j["tokens"] = r->tokens;
        j["ppl"] = r->ppl;
        j["mean_logprob"] = r->mean_logprob;
        j["logprobs"] = r->logprobs;
        j["tokens_per_s"] = r->tokens_per_s;
        j["kv_cache_dtype"] = kv_dtype_name((*exec)->kv_dtype());
        std::cout << dump_json(j) << "\n";
    } else {
        std::printf("tokens: %lld\nppl: %.6f\nmean logprob: %.6f\n%.1f tokens/s\nKV cache: %s\n",
                    static_cast<long long>(r->tokens), r->ppl, r->mean_logprob, r->tokens_per_s,
                    kv_dtype_name((*exec)->kv_dtype()));
    }
    return 0;
}

} // namespace llmwb::cli
