// llmwb think: a test-time-compute ladder on the project's reasoning tasks (issue 20). For each
// rung (n samples with a self-consistency vote) every task is asked, the vote's answer checked
// against the known one; printed: accuracy against tokens spent (and wall time) per rung.
// On random weights the accuracy means nothing: the command measures the mechanism and what a
// real model gains from more samples.
#include <chrono>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_model.h"
#include "app/cli/cli_options.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "engine/chat/chat_template.h"
#include "engine/serving/think_ladder.h"

namespace llmwb::cli {

namespace {

const char* kThinkHelp =
    "llmwb think [--model M] --tasks KIND:LEVEL [options]\n"
    "  accuracy against tokens spent on generated reasoning tasks with known answers\n"
    "  --tasks S            arith:1..5 (multi-step arithmetic) | logic:1..5 (ordering)\n"
    "  --count N            tasks (default 8)\n"
    "  --task-seed S        the task generator's seed (default 1)\n"
    "  --ladder n=1,2,4,8   samples per question at each rung (majority vote over them);\n"
    "                       also think=0,256 (thinking budgets) and beam=2,4, joined by ';'\n"
    "  --enable-thinking B  passed to the chat template\n"
    "  --json               one JSON object: rungs [{n, accuracy, correct, tokens, ...}]\n"
    "  (max tokens default 64; sampling options as generate's, temperature default 0.8)\n";

} // namespace

int cmd_think(const Args& argv) {
    const char* cmd = "think";
    OptionNames names{{"model", "tasks", "count", "task-seed", "ladder", "enable-thinking"},
                      {"json", "help"}};
    auto args = names.add(sampling_option_names()).add(device_option_names()).parse(argv);
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::fputs(kThinkHelp, stdout);
        std::fputs(sampling_options_help().c_str(), stdout);
        return 0;
    }
    auto spec = parse_task_set(args->get_or("tasks", ""));
    if (!spec)
        return fail(cmd, "--tasks: " + spec.message());
    auto count = args->get_int("count", 1, 1000);
    if (!count)
        return fail(cmd, "--count: " + count.message());
    auto task_seed = args->get_int("task-seed", 0, INT64_MAX);
    if (!task_seed)
        return fail(cmd, "--task-seed: " + task_seed.message());
    auto ladder = parse_think_ladder(args->get_or("ladder", "n=1,2,4,8"));
    if (!ladder)
        return fail(cmd, "--" + ladder.message());
    auto thinking = args->get_bool("enable-thinking");
    if (!thinking)
        return fail(cmd, thinking.message());
    SamplingParams defaults;
    defaults.temperature = 0.8f;
    defaults.max_tokens = 64;
    defaults.seed = 1;
    auto sampling = parse_sampling_options(*args, defaults);
    if (!sampling)
        return fail(cmd, sampling.message());
    auto device = parse_device_options(*args);
    if (!device)
        return fail(cmd, device.message());
    auto mo = open_cli_model(*args);
    if (!mo)
        return fail(cmd, mo.message());
    CliModel& m = **mo;
    if (Status st = sampling->validate(m.model->config.vocab_size); !st)
        return fail(cmd, st.message());

    const auto tasks = generate_tasks(*spec, static_cast<int32_t>(count->value_or(8)),
                                      static_cast<uint64_t>(task_seed->value_or(1)));
    // Each question as the model expects a user turn (its chat template), else plain text.
    std::optional<ChatTemplate> tpl;
    if (m.model->chat_template) {
        auto parsed = ChatTemplate::parse(*m.model->chat_template);
        if (!parsed)
            return fail(cmd, "chat template: " + parsed.message());
        tpl = std::move(parsed.value());
    }
    std::vector<std::vector<int32_t>> prompts;
    for (const ReasoningTask& t : tasks) {
        if (tpl) {
            nlohmann::ordered_json messages = nlohmann::ordered_json::array();
            messages.push_back({{"role", "user"}, {"content", t.question}});
            ChatRenderOptions opts;
            opts.add_generation_prompt = true;
            opts.enable_thinking = *thinking;
            const Tokenizer& tok = *m.tokenizer;
            if (tok.valid_id(tok.bos_id()))
                opts.bos_token = tok.token_text(tok.bos_id());
            if (tok.valid_id(tok.eos_id()))
                opts.eos_token = tok.token_text(tok.eos_id());
            auto text = render_chat(*tpl, messages, opts);
            if (!text)
                return fail(cmd, "chat template: " + text.message());
            prompts.push_back(m.tokenizer->encode(*text, false));
        } else {
            prompts.push_back(m.tokenizer->encode("Question: " + t.question + "\nAnswer:", true));
        }
    }
    int32_t widest = 1;
    int64_t longest = 1;
    for (const ThinkRung& r : *ladder)
        if (r.kind != ThinkRungKind::ThinkingBudget)
            widest = std::max(widest, r.value);
    for (const auto& p : prompts)
        longest = std::max<int64_t>(longest, static_cast<int64_t>(p.size()));
    auto max_tokens = resolve_max_tokens(*sampling, longest, m.model->config.max_position);
    if (!max_tokens)
        return fail(cmd, max_tokens.message());
    EngineOptions eo;
    eo.config.max_num_seqs = widest;
    eo.config.memory.fallback_when_short = true;
    eo.size_to_need(longest + static_cast<int64_t>(widest) * *max_tokens, widest);
    auto exec = m.open_executor(*device, eo.config.max_num_batched_tokens, widest);
    if (!exec)
        return fail(cmd, exec.message());
    auto engine = Engine::create(**exec, *m.tokenizer, eo.config);
    if (!engine)
        return fail(cmd, engine.message());

    nlohmann::ordered_json rungs = nlohmann::ordered_json::array();
    const bool json = args->has("json");
    if (!json)
        std::printf("%zu %s:%d tasks (task seed %lld)\n%10s %9s %8s %14s %12s %8s %10s\n",
                    tasks.size(), task_kind_name(spec->kind), spec->level,
                    static_cast<long long>(task_seed->value_or(1)), "rung", "accuracy", "correct",
                    "tokens/task", "ms/task", "ties", "no answer");
    for (const ThinkRung& rung : *ladder) {
        ThinkRungResult rr;
        rr.rung = rung;
        const auto t0 = std::chrono::steady_clock::now();
        for (size_t q = 0; q < tasks.size(); ++q) {
            auto res = think_run_question(**engine, prompts[q], rung, *sampling, &*spec, tasks[q],
                                          static_cast<int32_t>(q));
            if (!res)
                return fail(cmd, res.message());
            rr.add(std::move(*res), false);
        }
        rr.wall_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        const double k = static_cast<double>(tasks.size());
        if (json)
            rungs.push_back(think_rung_json(rr, false));
        else
            std::printf("%10s %8.1f%% %8d %14.1f %12.1f %8d %10d\n", think_rung_label(rung).c_str(),
                        100 * rr.accuracy(), rr.correct, rr.tokens / k, rr.wall_ms / k, rr.ties,
                        rr.no_answer);
        std::fflush(stdout);
    }
    if (json) {
        nlohmann::ordered_json j;
        j["tasks"] = std::string(task_kind_name(spec->kind)) + ":" + std::to_string(spec->level);
        j["count"] = tasks.size();
        j["rungs"] = std::move(rungs);
        std::cout << dump_json(j) << "\n";
    }
    return 0;
}

} // namespace llmwb::cli
