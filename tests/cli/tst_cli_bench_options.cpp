// `llmwb bench` options (app/cli/bench_options): vLLM's `vllm bench serve` names work as
// llmwb's own, every other vLLM option is refused by name with its reason. Qt-free.
#include <cmath>
#include <string>

#include "app/cli/bench_options.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::cli;

namespace {

Result<BenchOptions> parse(std::vector<std::string> argv) {
    return parse_bench_options(argv);
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

} // namespace

MT_TEST(vllm_names_set_the_same_fields) {
    auto own = parse({"--input-len", "24", "--output-len", "5", "--range-ratio", "0.5",
                      "--prefix-len", "3", "--num-prompts", "7", "--seed", "4", "--request-rate",
                      "2.5", "--max-concurrency", "3"});
    auto vllm = parse({"--random-input-len",
                       "24",
                       "--random-output-len=5",
                       "--random-range-ratio",
                       "0.5",
                       "--random-prefix-len",
                       "3",
                       "--num-prompts",
                       "7",
                       "--seed",
                       "4",
                       "--request-rate",
                       "2.5",
                       "--max-concurrency",
                       "3",
                       "--dataset-name",
                       "random",
                       "--ignore-eos",
                       "--burstiness",
                       "1",
                       "--disable-tqdm"});
    MT_REQUIRE_MSG(own.ok(), "%s", own.ok() ? "" : own.message().c_str());
    MT_REQUIRE_MSG(vllm.ok(), "%s", vllm.ok() ? "" : vllm.message().c_str());
    for (const BenchOptions* o : {&own.value(), &vllm.value()}) {
        MT_CHECK(o->spec.input_len == 24 && o->spec.output_len == 5);
        MT_CHECK(o->spec.range_ratio == 0.5 && o->spec.prefix_len == 3);
        MT_CHECK(o->spec.num_prompts == 7 && o->spec.seed == 4);
        MT_CHECK(o->request_rate == 2.5 && o->max_concurrency == 3);
        MT_CHECK(o->burstiness == 1.0);
    }
    MT_CHECK(own->progress && !vllm->progress); // --disable-tqdm = --quiet
}

MT_TEST(defaults) {
    auto o = parse({});
    MT_REQUIRE(o.ok());
    MT_CHECK(std::isinf(o->request_rate) && o->burstiness == 1.0 && o->max_concurrency == 0);
    MT_CHECK(o->policies.size() == 1 && o->policies[0].name == "continuous");
    MT_CHECK(!o->save_result && !o->save_detailed && o->label == "llmwb");
    MT_CHECK(!o->dataset && !o->model);
}

MT_TEST(both_names_of_one_option_conflict) {
    auto r = parse({"--input-len", "3", "--random-input-len", "4"});
    MT_REQUIRE(!r.ok());
    MT_CHECK(r.message() == "give --input-len or --random-input-len, not both");
}

MT_TEST(errors_name_the_option_given) {
    auto r = parse({"--random-output-len", "0"});
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), "--random-output-len"), "%s", r.message().c_str());
    auto rate = parse({"--request-rate", "0"});
    MT_REQUIRE(!rate.ok());
    MT_CHECK(contains(rate.message(), "--request-rate"));
    auto burst = parse({"--burstiness", "-1", "--request-rate", "4"});
    MT_REQUIRE(!burst.ok());
    MT_CHECK(contains(burst.message(), "--burstiness"));
}

MT_TEST(unsupported_vllm_options_are_refused_by_name) {
    const char* names[] = {"host",
                           "port",
                           "header",
                           "dataset-path",
                           "temperature",
                           "top-p",
                           "sharegpt-output-len",
                           "goodput",
                           "profile",
                           "num-warmups",
                           "ramp-up-strategy",
                           "random-mm-base-items-per-request",
                           "append-result",
                           "metadata",
                           "tokenizer-mode"};
    for (const char* n : names) {
        MT_CHECK_MSG(unsupported_vllm_option(n).has_value(), "%s", n);
        for (bool inline_value : {false, true}) {
            std::vector<std::string> argv = {"--num-prompts", "2"};
            if (inline_value) {
                argv.push_back(std::string("--") + n + "=x");
            } else {
                argv.push_back(std::string("--") + n);
                argv.push_back("x");
            }
            auto r = parse(argv);
            MT_REQUIRE(!r.ok());
            const std::string want = std::string("--") + n +
                                     " is a vllm bench serve option llmwb bench does not support: ";
            MT_CHECK_MSG(r.message().rfind(want, 0) == 0, "%s", r.message().c_str());
        }
    }
    // Names llmwb bench has are not in the list; an unknown name is an unknown option.
    for (const char* n : {"input-len",
                          "random-input-len",
                          "request-rate",
                          "burstiness",
                          "seed",
                          "num-prompts",
                          "max-concurrency",
                          "model",
                          "dataset-name",
                          "save-result",
                          "save-detailed",
                          "result-filename",
                          "ignore-eos",
                          "percentile-metrics",
                          "metric-percentiles",
                          "report",
                          "endpoint",
                          "base-url",
                          "backend",
                          "served-model-name",
                          "tokenizer"})
        MT_CHECK_MSG(!unsupported_vllm_option(n).has_value(), "%s", n);
    auto unknown = parse({"--frobnicate", "1"});
    MT_REQUIRE(!unknown.ok());
    MT_CHECK(unknown.message() == "unknown option --frobnicate");
    // A value that looks like a refused option is a value, not an option.
    auto label = parse({"--label", "--profile"});
    MT_REQUIRE_MSG(label.ok(), "%s", label.ok() ? "" : label.message().c_str());
    MT_CHECK(label->label == "--profile");
}

MT_TEST(datasets) {
    auto sharegpt = parse({"--dataset-name", "sharegpt"});
    MT_REQUIRE(!sharegpt.ok());
    MT_CHECK(sharegpt.message().rfind(
                 "--dataset-name sharegpt is a vllm bench serve dataset llmwb bench does not "
                 "support",
                 0) == 0);
    auto both = parse({"--dataset-name", "random", "--dataset", "p.jsonl"});
    MT_REQUIRE(!both.ok());
    auto file = parse({"--dataset", "p.jsonl"});
    MT_REQUIRE(file.ok());
    MT_CHECK(file->dataset == std::string("p.jsonl"));
}

MT_TEST(burstiness) {
    // Poisson (1) at a rate, and any burstiness with all requests at once, are accepted.
    MT_CHECK(parse({"--request-rate", "5", "--burstiness", "1"}).ok());
    MT_CHECK(parse({"--burstiness", "0.5"}).ok());
    // Gamma arrivals (vLLM's burstiness) at a rate.
    auto gamma = parse({"--request-rate", "5", "--burstiness", "0.5"});
    MT_REQUIRE(gamma.ok());
    MT_CHECK(gamma->burstiness == 0.5 && gamma->request_rate == 5.0);
}

MT_TEST(save_result) {
    auto r = parse({"--save-detailed", "--result-filename", "out.json", "--result-dir", "/tmp/x",
                    "--label", "run1"});
    MT_REQUIRE(r.ok());
    MT_CHECK(r->save_result && r->save_detailed);
    MT_CHECK(r->result_filename == "out.json" && r->result_dir == "/tmp/x" && r->label == "run1");
    auto named = parse({"--result-filename", "a.json"});
    MT_REQUIRE(named.ok());
    MT_CHECK(named->save_result && !named->save_detailed);
    auto several = parse({"--save-result", "--policy", "continuous,static"});
    MT_REQUIRE(!several.ok());
    MT_CHECK(contains(several.message(), "one --policy"));
}

// vLLM's --percentile-metrics and --metric-percentiles: validated lists; vLLM's percentile
// names in keys ("99", "99.9").
MT_TEST(percentile_options) {
    auto d = parse({});
    MT_REQUIRE(d.ok());
    MT_CHECK(d->percentile_metrics == (std::vector<std::string>{"ttft", "tpot", "itl", "e2el"}));
    MT_CHECK(d->metric_percentiles == std::vector<double>{99});
    MT_CHECK(!d->report.has_value());
    auto r = parse({"--percentile-metrics", "e2el,ttft", "--metric-percentiles=50,90,99.9",
                    "--report", "out.zip"});
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    MT_CHECK(r->percentile_metrics == (std::vector<std::string>{"e2el", "ttft"}));
    MT_CHECK(r->metric_percentiles == (std::vector<double>{50, 90, 99.9}));
    MT_CHECK(r->report == std::string("out.zip"));
    struct Bad {
        std::vector<std::string> argv;
        const char* part;
    };
    const Bad bad[] = {
        {{"--metric-percentiles", "abc"}, "--metric-percentiles: 'abc' is not a number"},
        {{"--metric-percentiles", "50,,99"}, "--metric-percentiles: '' is not a number"},
        {{"--metric-percentiles", "101"}, "--metric-percentiles: 101 is outside [0, 100]"},
        {{"--metric-percentiles", "-1"}, "outside [0, 100]"},
        {{"--metric-percentiles", "nan"}, "is not a number"},
        {{"--metric-percentiles", "99x"}, "'99x' is not a number"},
        {{"--metric-percentiles", "99,99.0"}, "given twice"},
        {{"--percentile-metrics", "ttft,latency"}, "unknown metric 'latency'"},
        {{"--percentile-metrics", ""}, "unknown metric ''"},
        {{"--percentile-metrics", "itl,itl"}, "'itl' given twice"},
        {{"--report", ""}, "--report"},
    };
    for (const Bad& b : bad) {
        MT_SCOPE("%s %s", b.argv[0].c_str(), b.argv[1].c_str());
        auto e = parse(b.argv);
        MT_REQUIRE(!e.ok());
        MT_CHECK_MSG(contains(e.message(), b.part), "%s", e.message().c_str());
    }
    std::string many;
    for (int i = 1; i <= 33; ++i)
        many += (i > 1 ? "," : "") + std::to_string(i);
    MT_CHECK(!parse({"--metric-percentiles", many}).ok());
    MT_CHECK(vllm_percentile_name(99) == "99");
    MT_CHECK(vllm_percentile_name(99.9) == "99.9");
    MT_CHECK(vllm_percentile_name(50.0) == "50");
    MT_CHECK(vllm_percentile_name(0) == "0");
    MT_CHECK(vllm_percentile_name(99.99) == "99.99");
    MT_CHECK(vllm_percentile_name(12.5) == "12.5");
}

MT_TEST(policies_and_block_size) {
    auto p = parse({"--policy", "continuous,static,sequential"});
    MT_REQUIRE(p.ok());
    MT_REQUIRE(p->policies.size() == 3);
    MT_CHECK(p->policies[1].policy == SchedulerPolicy::Static);
    MT_CHECK(p->policies[2].policy == SchedulerPolicy::Sequential);
    auto bad = parse({"--policy", "fifo"});
    MT_REQUIRE(!bad.ok());
    MT_CHECK(contains(bad.message(), "'fifo'"));
    auto bs = parse({"--block-size", "12"});
    MT_REQUIRE(!bs.ok());
    MT_CHECK(bs.message() == "--block-size must be 8, 16 or 32, got 12");
    auto bs32 = parse({"--block-size", "32", "--kv-budget-mb", "4"});
    MT_REQUIRE(bs32.ok());
    MT_CHECK(bs32->engine.config.block_size == 32 && bs32->engine.memory_given);
}

// Speculative decoding flags (engine options of bench, generate --prompts and generate).
MT_TEST(speculative_options) {
    auto off = parse({});
    MT_REQUIRE(off.ok());
    MT_CHECK(!off->engine.config.speculative.enabled());
    auto on = parse({"--speculative-method", "ngram"});
    MT_REQUIRE(on.ok());
    const SpeculativeConfig& c = on->engine.config.speculative;
    MT_CHECK(c.method == SpeculativeMethod::Ngram && c.num_speculative_tokens == 4);
    MT_CHECK(c.prompt_lookup_min == 2 && c.prompt_lookup_max == 5);
    auto k = parse({"--speculative-method", "ngram", "--num-speculative-tokens", "7",
                    "--prompt-lookup-min", "3"});
    MT_REQUIRE(k.ok());
    MT_CHECK(k->engine.config.speculative.num_speculative_tokens == 7);
    MT_CHECK(k->engine.config.speculative.prompt_lookup_min == 3 &&
             k->engine.config.speculative.prompt_lookup_max == 5);
    auto only_max = parse({"--speculative-method", "ngram", "--prompt-lookup-max", "1"});
    MT_REQUIRE(only_max.ok());
    MT_CHECK(only_max->engine.config.speculative.prompt_lookup_min == 1);
    auto d = parse({"--speculative-method", "draft", "--draft-model", "d.gguf"});
    MT_REQUIRE(d.ok());
    MT_CHECK(d->engine.config.speculative.method == SpeculativeMethod::Draft);
    MT_CHECK(d->engine.config.speculative.draft_model == "d.gguf");
    auto q4 = parse({"--speculative-method", "self-q4", "--num-speculative-tokens", "3"});
    MT_REQUIRE(q4.ok());
    MT_CHECK(q4->engine.config.speculative.method == SpeculativeMethod::SelfQ4);
    MT_CHECK(q4->engine.config.speculative.num_speculative_tokens == 3);
    auto a = parse({"--speculative-method", "ngram", "--num-speculative-tokens", "auto"});
    MT_REQUIRE(a.ok());
    MT_CHECK(a->engine.config.speculative.auto_k);
    MT_CHECK(a->engine.config.speculative.num_speculative_tokens == kAutoSpeculativeTokens);
    for (auto bad : std::vector<std::vector<std::string>>{
             {"--speculative-method", "eagle"},
             {"--speculative-method", "draft"},
             {"--num-speculative-tokens", "3"},
             {"--speculative-method", "ngram", "--num-speculative-tokens", "17"},
             {"--num-speculative-tokens", "auto"},
             {"--draft-model", "d.gguf"},
             {"--speculative-method", "ngram", "--draft-model", "d.gguf"},
             {"--speculative-method", "ngram", "--num-speculative-tokens", "autox"},
             {"--speculative-method", "ngram", "--prompt-lookup-min", "4", "--prompt-lookup-max",
              "2"}}) {
        auto r = parse(bad);
        MT_CHECK_MSG(!r.ok(), "%s %s accepted", bad[0].c_str(), bad[1].c_str());
        if (!r.ok())
            MT_CHECK_MSG(contains(r.message(), "--") || contains(r.message(), "prompt_lookup"),
                         "%s", r.message().c_str());
    }
}

MT_TEST(endpoint_options) {
    auto plain = parse({"--num-prompts", "2"});
    MT_REQUIRE(plain.ok());
    MT_CHECK(!plain->endpoint);

    auto a = parse({"--endpoint", "http://10.0.0.5:8000/v1", "--model", "meta-llama/Llama-3.1-8B",
                    "--api-key", "k1"});
    MT_REQUIRE_MSG(a.ok(), "%s", a.ok() ? "" : a.message().c_str());
    MT_REQUIRE(a->endpoint.has_value());
    MT_COMPARE(a->endpoint->base_url, std::string("http://10.0.0.5:8000/v1"));
    MT_COMPARE(a->endpoint->type, std::string("completions"));
    MT_COMPARE(a->endpoint->model, std::string("meta-llama/Llama-3.1-8B"));
    MT_COMPARE(a->endpoint->api_key, std::string("k1"));
    MT_CHECK(!a->endpoint->tokenizer); // not a local path

    // vLLM's spelling: --base-url with the route as --endpoint.
    auto v = parse({"--base-url", "http://h:8000", "--endpoint", "/v1/chat/completions", "--model",
                    "m", "--served-model-name", "served"});
    MT_REQUIRE_MSG(v.ok(), "%s", v.ok() ? "" : v.message().c_str());
    MT_COMPARE(v->endpoint->base_url, std::string("http://h:8000"));
    MT_COMPARE(v->endpoint->type, std::string("chat"));
    MT_COMPARE(v->endpoint->model, std::string("served"));
    // The route in the URL itself.
    auto r = parse({"--endpoint", "http://h:8000/v1/chat/completions", "--model", "m"});
    MT_REQUIRE(r.ok());
    MT_COMPARE(r->endpoint->base_url, std::string("http://h:8000/v1"));
    MT_COMPARE(r->endpoint->type, std::string("chat"));
    auto b = parse({"--endpoint", "http://h:8000", "--model", "m", "--backend", "openai-chat"});
    MT_REQUIRE(b.ok());
    MT_COMPARE(b->endpoint->type, std::string("chat"));

    struct Bad {
        std::vector<std::string> argv;
        std::string expect;
    };
    const std::vector<Bad> bad = {
        {{"--endpoint", "http://h:1"}, "give --model NAME"},
        {{"--endpoint", "http://h:1", "--model", "m", "--endpoint-type", "embeddings"},
         "--endpoint-type: 'embeddings' is not completions or chat"},
        {{"--endpoint", "http://h:1", "--model", "m", "--backend", "tgi"}, "--backend tgi"},
        {{"--endpoint", "http://h:1", "--model", "m", "--max-num-seqs", "4"},
         "--max-num-seqs sets the engine here"},
        {{"--endpoint", "http://h:1", "--model", "m", "--policy", "static"}, "--policy chooses"},
        {{"--endpoint", "/v1/completions", "--model", "m"}, "give the server too"},
        {{"--base-url", "http://h:1", "--endpoint", "/v1/embeddings", "--model", "m"},
         "/v1/completions or /v1/chat/completions"},
        {{"--endpoint", "http://h:1/v1/completions", "--model", "m", "--endpoint-type", "chat"},
         "the endpoint's route is completions"},
        {{"--api-key", "k"}, "--api-key needs --endpoint URL"},
    };
    for (const Bad& x : bad) {
        MT_SCOPE("%s", x.expect.c_str());
        auto e = parse(x.argv);
        MT_REQUIRE(!e.ok());
        MT_CHECK_MSG(contains(e.message(), x.expect), "%s", e.message().c_str());
    }
}

MINI_TEST_MAIN()
