// llmwb generate --prompts FILE.jsonl: every prompt submitted at once to the serving engine
// (continuous batching); one JSON line per prompt, in input order, as soon as it and every
// earlier prompt have finished. A line that is invalid (malformed, a bad field, a prompt the
// engine refuses) gets an error record in its place; the other lines still run, and the exit
// code is 1.
#include <cstdio>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "app/cli/cli_model.h"
#include "app/cli/cli_options.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "app/cli/prompts_jsonl.h"

namespace llmwb::cli {

namespace {

const char* kHelp =
    "llmwb generate --prompts FILE.jsonl [--model M] [options]\n"
    "  FILE.jsonl: one JSON object per line with \"prompt\" (text, BOS added as HF does) or\n"
    "  \"ids\" (token ids), and optional sampling fields under their request names: max_tokens,\n"
    "  temperature, top_p, top_k, min_p, seed, stop (string or list), stop_token_ids,\n"
    "  ignore_eos, repetition_penalty, presence_penalty, frequency_penalty, logprobs. Blank\n"
    "  lines are skipped. All prompts run concurrently; the output is one JSON line per prompt\n"
    "  in input order: index, ids, text, finish_reason, prompt_tokens, completion_tokens,\n"
    "  cached_tokens, preemptions, ttft_ms, tpot_ms, e2e_ms. A line that is invalid (bad JSON,\n"
    "  an unknown key, a value out of range, a prompt the engine refuses) gets\n"
    "  {\"index\", \"line\", \"error\"} in its place and a line on stderr; the others still run\n"
    "  and the exit code is 1. Length rule (vLLM's): a line's max_tokens (or --max-tokens)\n"
    "  with its prompt beyond the model's context is refused; left out, a line generates up to\n"
    "  256 tokens within the context.\n"
    "  --stats                   engine totals on stderr at the end\n"
    "sampling (defaults for every line):\n";

struct GenerateBatchOptions {
    std::string prompts;
    bool stats = false;
    SamplingParams defaults;
    DeviceOptions device;
    EngineOptions engine;
};

const OptionNames& batch_option_names() {
    static const OptionNames n = [] {
        OptionNames o{{"model", "prompts"}, {"help", "stats"}};
        return o.add(sampling_option_names()).add(device_option_names()).add(engine_option_names());
    }();
    return n;
}

Result<GenerateBatchOptions> parse_batch_options(const CliArgs& a) {
    GenerateBatchOptions o;
    o.prompts = *a.get("prompts");
    o.stats = a.has("stats");
    auto sampling = parse_sampling_options(a, SamplingParams{});
    if (!sampling)
        return sampling.error();
    o.defaults = std::move(sampling.value());
    if (Status st = parse_serving_options(a, o); !st)
        return st.error();
    return o;
}

bool wants_prompts(const Args& argv) {
    for (const std::string& a : argv)
        if (a == "--prompts" || a.rfind("--prompts=", 0) == 0)
            return true;
    return false;
}

// One prompt's record as it is built.
struct Record {
    std::vector<int32_t> ids;
    std::string text;
    RequestOutput last;
    std::string error; // an invalid line
    bool done = false;
    std::string kv_cache_dtype; // the KV cache's element type
};

nlohmann::json record_json(size_t index, int line, const Record& o) {
    nlohmann::json j;
    j["index"] = index;
    if (!o.error.empty()) {
        j["line"] = line;
        j["error"] = o.error;
        if (!o.ids.empty()) { // a run that failed part way: what it generated
            j["ids"] = o.ids;
            j["text"] = o.text;
        }
        return j;
    }
    const SnapshotRequest& mtr = o.last.metrics;
    j["ids"] = o.ids;
    j["text"] = o.text;
    j["finish_reason"] = finish_reason_name(o.last.finish);
    if (!o.last.stop_matched.empty())
        j["stop"] = o.last.stop_matched;
    j["prompt_tokens"] = mtr.prompt_tokens;
    j["completion_tokens"] = o.ids.size();
    j["cached_tokens"] = mtr.cached_tokens;
    j["preemptions"] = mtr.preemptions;
    j["ttft_ms"] = mtr.ttft_ms;
    j["tpot_ms"] = mtr.tpot_ms;
    j["e2e_ms"] = mtr.e2e_ms;
    j["kv_cache_dtype"] = o.kv_cache_dtype;
    return j;
}

} // namespace

bool generate_routes_to_batch(const Args& argv) {
    return wants_prompts(argv);
}

int cmd_generate_batch(const Args& argv) {
    const char* cmd = "generate";
    for (const std::string& a : argv)
        if (a == "--json")
            return fail(cmd, "--json: generate --prompts always writes JSON lines (one per "
                             "prompt); leave --json out");
    auto args = batch_option_names().parse(argv);
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::fputs(kHelp, stdout);
        std::fputs(sampling_options_help().c_str(), stdout);
        std::fputs("engine:\n", stdout);
        std::fputs(kEngineOptionsHelp, stdout);
        std::fputs(kSpeculativeOptionsHelp, stdout);
        std::fputs(kDeviceOptionsHelp, stdout);
        return 0;
    }
    auto opt = parse_batch_options(*args);
    if (!opt)
        return fail(cmd, opt.message());
    auto lines = read_prompts_jsonl(opt->prompts, opt->defaults);
    if (!lines)
        return fail(cmd, lines.message());

    auto mo = open_cli_model(*args);
    if (!mo)
        return fail(cmd, mo.message());
    CliModel& m = **mo;
    const size_t n = lines->size();
    std::vector<Record> records(n);
    std::vector<std::vector<int32_t>> prompts(n);
    int64_t need = 0, valid = 0;
    for (size_t i = 0; i < n; ++i) {
        PromptLine& pl = (*lines)[i];
        if (pl.ok())
            if (Status st = pl.params.validate(m.model->config.vocab_size); !st)
                pl.error = st.message();
        if (!pl.ok())
            continue;
        prompts[i] = pl.ids ? *pl.ids : m.tokenizer->encode(*pl.prompt, true);
        // The length rule before the pool is sized: a refused line costs no KV slots.
        auto max_tokens = resolve_max_tokens(pl.params, static_cast<int64_t>(prompts[i].size()),
                                             m.model->config.max_position);
        if (!max_tokens) {
            pl.error = max_tokens.message();
            prompts[i] = {};
            continue;
        }
        need += static_cast<int64_t>(prompts[i].size()) + *max_tokens;
        ++valid;
    }
    EngineOptions& eo = opt->engine;
    eo.config.memory.fallback_when_short = true;
    eo.size_to_need(need, valid);
    auto exec =
        m.open_executor(opt->device, eo.config.max_num_batched_tokens, eo.config.max_num_seqs);
    if (!exec)
        return fail(cmd, exec.message());
    std::unique_ptr<DraftModelProposer> draft; // outlives the engine
    auto engine_or = Engine::create(**exec, *m.tokenizer, eo.config);
    if (!engine_or)
        return fail(cmd, engine_or.message());
    Engine& engine = **engine_or;
    auto attached = attach_draft_model(m, engine);
    if (!attached)
        return fail(cmd, attached.message());
    draft = std::move(attached.value());
    if (engine.memory_plan().limit == KvPoolLimit::Fallback)
        std::fprintf(stderr, "llmwb generate: %s\n", engine.memory_plan().note.c_str());

    for (Record& r : records)
        r.kv_cache_dtype = kv_dtype_name((*exec)->kv_dtype());
    std::map<RequestId, size_t> index;
    int failed = 0;
    for (size_t i = 0; i < n; ++i) {
        PromptLine& pl = (*lines)[i];
        if (pl.ok()) {
            auto id = engine.add_request(std::move(prompts[i]), pl.params);
            if (id)
                index[*id] = i;
            else
                pl.error = id.message();
        }
        if (!pl.ok()) {
            records[i].error = pl.error;
            records[i].done = true;
            ++failed;
            std::fprintf(stderr, "llmwb generate: %s:%d: %s\n", opt->prompts.c_str(), pl.line,
                         pl.error.c_str());
        }
    }
    size_t printed = 0;
    auto print_ready = [&] {
        for (; printed < n && records[printed].done; ++printed)
            std::cout << dump_json(record_json(printed, (*lines)[printed].line, records[printed]))
                      << "\n"
                      << std::flush;
    };
    print_ready();
    StepOutputs so;
    while (engine.has_unfinished()) {
        engine.step(so);
        for (RequestOutput& o : so.outputs) {
            Record& r = records[index.at(o.id)];
            r.ids.insert(r.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
            r.text += o.text;
            if (o.finished) {
                r.done = true;
                if (o.finish == FinishReason::Error) { // the model file changed under the run
                    r.error = engine.last_error();
                    ++failed;
                    std::fprintf(stderr, "llmwb generate: %s:%d: %s\n", opt->prompts.c_str(),
                                 (*lines)[index.at(o.id)].line, r.error.c_str());
                }
                r.last = std::move(o);
            }
        }
        print_ready();
    }
    if (opt->stats) {
        const EngineSnapshot s = engine.snapshot();
        std::fprintf(stderr,
                     "[%lld steps, %lld prompt tokens computed, %lld generated, %lld preemptions, "
                     "prefix cache %lld/%lld tokens, %d blocks of %d, KV %s]\n",
                     static_cast<long long>(s.step_index),
                     static_cast<long long>(s.total_prompt_tokens_computed),
                     static_cast<long long>(s.total_generated_tokens),
                     static_cast<long long>(s.total_preemptions),
                     static_cast<long long>(s.prefix_cache_hits),
                     static_cast<long long>(s.prefix_cache_queries), s.memory.num_blocks,
                     s.block_size, kv_dtype_name((*exec)->kv_dtype()));
    }
    if (failed > 0)
        return fail(cmd, std::to_string(failed) + " of " + std::to_string(n) +
                             " prompts failed (error records in their places)");
    return 0;
}

} // namespace llmwb::cli
