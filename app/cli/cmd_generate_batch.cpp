// llmwb generate --prompts FILE.jsonl: every prompt submitted at once to the serving engine
// (continuous batching); one JSON line per prompt, in input order, as soon as it and every
// earlier prompt have finished.
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "app/cli/cli_engine.h"
#include "app/cli/cli_model.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "app/cli/prompts_jsonl.h"

namespace llmwb::cli {

namespace {

const char* kHelp =
    "llmwb generate --prompts FILE.jsonl [--model M] [options]\n"
    "  FILE.jsonl: one JSON object per line with \"prompt\" (text, BOS added as HF does) or\n"
    "  \"ids\" (token ids), and optional max_tokens, temperature, top_p, top_k, min_p, seed,\n"
    "  stop (string or list), stop_token_ids, ignore_eos, repetition_penalty,\n"
    "  presence_penalty, frequency_penalty. All prompts run concurrently; the output is one\n"
    "  JSON line per prompt in input order: index, ids, text, finish_reason, prompt_tokens,\n"
    "  completion_tokens, cached_tokens, preemptions, ttft_ms, tpot_ms, e2e_ms.\n"
    "  --max-tokens N  --temperature T  --seed S  --ignore-eos   defaults for every line\n"
    "  --threads N               CPU threads (default: all cores)\n"
    "  --stats                   engine totals on stderr at the end\n";

bool wants_prompts(const Args& argv) {
    for (const std::string& a : argv)
        if (a == "--prompts" || a.rfind("--prompts=", 0) == 0)
            return true;
    return false;
}

} // namespace

bool generate_routes_to_batch(const Args& argv) {
    return wants_prompts(argv);
}

int cmd_generate_batch(const Args& argv) {
    const char* cmd = "generate";
    std::set<std::string> values = {"model",      "prompts",     "threads",
                                    "max-tokens", "temperature", "seed"};
    std::set<std::string> flags = {"help", "ignore-eos", "stats", "json"};
    auto args = parse_engine_command_args(argv, std::move(values), std::move(flags));
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        print_engine_command_help(kHelp);
        return 0;
    }
    SamplingParams defaults;
    auto mt = args->get_int("max-tokens", 1, 1 << 24);
    if (!mt)
        return fail(cmd, mt.message());
    if (*mt)
        defaults.max_tokens = static_cast<int>(**mt);
    auto temp = args->get_double("temperature", 0, 100);
    if (!temp)
        return fail(cmd, temp.message());
    if (*temp)
        defaults.temperature = static_cast<float>(**temp);
    auto seed = args->get_int("seed", 0, INT64_MAX);
    if (!seed)
        return fail(cmd, seed.message());
    if (*seed)
        defaults.seed = static_cast<uint64_t>(**seed);
    defaults.ignore_eos = args->has("ignore-eos");
    auto threads = args->get_int("threads", 1, 1024);
    if (!threads)
        return fail(cmd, threads.message());

    auto lines = read_prompts_jsonl(*args->get("prompts"), defaults);
    if (!lines)
        return fail(cmd, lines.message());
    EngineConfig ec;
    if (Status st = engine_config_from_args(*args, ec); !st)
        return fail(cmd, st.message());

    auto mo = open_cli_model(*args);
    if (!mo)
        return fail(cmd, mo.message());
    CliModel& m = **mo;
    std::vector<std::vector<int32_t>> prompts;
    int64_t need = 0;
    for (const PromptLine& pl : *lines) {
        prompts.push_back(pl.ids ? *pl.ids : m.tokenizer->encode(*pl.prompt, true));
        need += static_cast<int64_t>(prompts.back().size()) + pl.params.max_tokens;
    }
    default_kv_to_need(*args, ec, need, static_cast<int64_t>(prompts.size()));
    auto exec = m.open_executor(*args, static_cast<int>(threads->value_or(0)),
                                ec.max_num_batched_tokens, ec.max_num_seqs);
    if (!exec)
        return fail(cmd, exec.message());
    auto engine_or = Engine::create(**exec, *m.tokenizer, ec);
    if (!engine_or)
        return fail(cmd, engine_or.message());
    Engine& engine = **engine_or;

    struct Out {
        std::vector<int32_t> ids;
        std::string text;
        RequestOutput last;
        bool done = false;
    };
    std::vector<Out> outs(prompts.size());
    std::map<RequestId, size_t> index;
    for (size_t i = 0; i < prompts.size(); ++i) {
        auto id = engine.add_request(prompts[i], (*lines)[i].params);
        if (!id)
            return fail(cmd, *args->get("prompts") + ":" + std::to_string((*lines)[i].line) + ": " +
                                 id.message());
        index[*id] = i;
    }
    size_t printed = 0;
    StepOutputs so;
    while (engine.has_unfinished()) {
        engine.step(so);
        for (RequestOutput& o : so.outputs) {
            Out& out = outs[index[o.id]];
            out.ids.insert(out.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
            out.text += o.text;
            if (o.finished) {
                out.done = true;
                out.last = std::move(o);
            }
        }
        while (printed < outs.size() && outs[printed].done) {
            const Out& o = outs[printed];
            const SnapshotRequest& mtr = o.last.metrics;
            nlohmann::json j;
            j["index"] = printed;
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
            std::cout << dump_json(j) << "\n" << std::flush;
            ++printed;
        }
    }
    if (args->has("stats")) {
        const EngineSnapshot s = engine.snapshot();
        std::fprintf(stderr,
                     "[%lld steps, %lld prompt tokens computed, %lld generated, %lld preemptions, "
                     "prefix cache %lld/%lld tokens, %d blocks of %d]\n",
                     static_cast<long long>(s.step_index),
                     static_cast<long long>(s.total_prompt_tokens_computed),
                     static_cast<long long>(s.total_generated_tokens),
                     static_cast<long long>(s.total_preemptions),
                     static_cast<long long>(s.prefix_cache_hits),
                     static_cast<long long>(s.prefix_cache_queries), s.memory.num_blocks,
                     s.block_size);
    }
    return 0;
}

} // namespace llmwb::cli
