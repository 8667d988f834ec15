// `llmwb bench --endpoint URL --model NAME` against the fake OpenAI server on loopback: the run
// completes with the server's usage counts, and its --json report, vLLM result file and benchmark
// report have the keys of a local run (the demo model, in-process) — engine-only figures present
// as null. Bad invocations fail with a clear message.
#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "fake_openai_server.h"
#include "support/mini_test.h"

using namespace llmwb;
using Json = nlohmann::json;

namespace {

struct Run {
    int status = -1;
    std::string out, err;
};

Run run_llmwb(const mini_test::TempDir& dir, const std::string& args) {
    const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
    const std::string cmd = "XDG_DATA_HOME='" + dir.file("data") + "' '" LLMWB_CLI_PATH "' " +
                            args + " >'" + out + "' 2>'" + err + "'";
    Run r;
    const int st = std::system(cmd.c_str());
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = mini_test::read_file(out).value_or("");
    r.err = mini_test::read_file(err).value_or("");
    return r;
}

Json read_json(const std::string& path) {
    auto text = mini_test::read_file(path);
    return text ? Json::parse(*text, nullptr, false) : Json(Json::value_t::discarded);
}

std::set<std::string> keys(const Json& j) {
    std::set<std::string> out;
    if (j.is_object())
        for (auto it = j.begin(); it != j.end(); ++it)
            out.insert(it.key());
    return out;
}

std::string first_line(const std::string& path) {
    auto t = mini_test::read_file(path).value_or("");
    return t.substr(0, t.find('\n'));
}

} // namespace

MT_TEST(endpointRunHasTheKeysOfALocalRun) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    test::FakeOpenAiServer server;
    MT_REQUIRE(server.ok());

    const std::string common = " --input-len 8 --output-len 5 --quiet --save-detailed ";
    Run local = run_llmwb(dir, "bench --num-prompts 3" + common + "--json '" +
                                   dir.file("local.json") + "' --result-dir '" + dir.path() +
                                   "' --result-filename local-vllm.json --report '" +
                                   dir.file("local-report") + "'");
    MT_REQUIRE_MSG(local.status == 0, "local run: %s", local.err.c_str());
    Run ep = run_llmwb(dir, "bench --endpoint " + server.url() + " --model fake-model " +
                                "--num-prompts 6 --max-concurrency 3" + common + "--json '" +
                                dir.file("ep.json") + "' --result-dir '" + dir.path() +
                                "' --result-filename ep-vllm.json --report '" +
                                dir.file("ep-report") + "'");
    MT_REQUIRE_MSG(ep.status == 0, "endpoint run: %s", ep.err.c_str());
    std::printf("%s", ep.out.c_str());
    char line[64];
    std::snprintf(line, sizeof line, "%-40s %d", "Successful requests:", 6);
    MT_CHECK(ep.out.find(line) != std::string::npos);
    MT_CHECK(ep.out.find("unavailable (remote endpoint)") != std::string::npos);

    Json lj = read_json(dir.file("local.json")), ej = read_json(dir.file("ep.json"));
    MT_REQUIRE(!lj.is_discarded() && !ej.is_discarded());
    for (const std::string& k : keys(lj))
        MT_CHECK_MSG(ej.contains(k), "top-level key %s missing", k.c_str());
    MT_COMPARE(ej["base_url"], Json(server.url()));
    MT_COMPARE(ej["endpoint_type"], Json("completions"));
    const Json& lr = lj["results"]["continuous"];
    const Json& er = ej["results"]["endpoint"];
    for (const std::string& k : keys(lr))
        MT_CHECK_MSG(er.contains(k), "result key %s missing", k.c_str());
    MT_COMPARE(er["completed"], Json(6));
    MT_COMPARE(er["failed"], Json(0));
    MT_COMPARE(er["total_output_tokens"], Json(30)); // the server's usage: 6 x 5
    MT_COMPARE(er["total_input_tokens"], Json(48));  // its prompt_tokens: 8 words each
    MT_CHECK(er["kv_cache_blocks"].is_null());       // unavailable, not 0
    MT_CHECK(er["num_steps"].is_null());
    // From the server's /metrics (static in the fake): counter differences over the run, KV
    // usage only from scrapes made while requests ran (none or 0.42).
    MT_COMPARE(er["num_preemptions"], Json(0));
    MT_COMPARE(er["prefix_cache_queries"], Json(0));
    MT_CHECK(er["mean_kv_cache_usage"].is_null() || er["mean_kv_cache_usage"] == Json(0.42));
    MT_COMPARE(er["server_metrics"]["server_kind"], Json("vllm"));
    MT_CHECK(er["mean_ttft_ms"].get<double>() > 0);
    MT_CHECK(er["mean_itl_ms"].get<double>() >= 1.0); // the server sleeps 2 ms per chunk
    MT_CHECK(er["mean_e2el_ms"].get<double>() >= er["mean_ttft_ms"].get<double>());

    Json lv = read_json(dir.file("local-vllm.json")), ev = read_json(dir.file("ep-vllm.json"));
    MT_REQUIRE(!lv.is_discarded() && !ev.is_discarded());
    for (const std::string& k : keys(lv))
        if (k != "output_ids") // llmwb's token ids: in-process runs only
            MT_CHECK_MSG(ev.contains(k), "result-file key %s missing", k.c_str());
    MT_COMPARE(ev["endpoint_type"], Json("openai"));
    MT_COMPARE(ev["backend"], Json("openai"));
    MT_COMPARE(ev["base_url"], Json(server.url()));
    MT_COMPARE(ev["model_id"], Json("fake-model"));
    MT_REQUIRE(ev["itls"].is_array() && ev["itls"].size() == 6);
    for (const Json& itl : ev["itls"])
        MT_COMPARE(itl.size(), size_t(4)); // 5 chunks: 4 gaps
    for (const Json& n : ev["output_lens"])
        MT_COMPARE(n, Json(5));
    MT_COMPARE(ev["generated_texts"][0], Json(" tok tok tok tok tok"));

    for (const char* f : {"report.html", "results.json", "requests.csv", "environment.json"})
        MT_CHECK_MSG(std::filesystem::exists(dir.file(std::string("ep-report/") + f)), "%s", f);
    MT_COMPARE(first_line(dir.file("ep-report/requests.csv")),
               first_line(dir.file("local-report/requests.csv")));

    // The benchmark report: what an endpoint cannot give is null / empty / n/a, never 0.
    const Json rr = Json::parse(first_line(dir.file("ep-report/results.json")), nullptr, false);
    MT_REQUIRE(rr.is_object());
    for (const char* k : {"num_blocks", "block_size", "kv_waste_vs_contiguous",
                          "kv_waste_vs_allocated", "contiguous_waste", "steps", "mean_batch_size"})
        MT_CHECK_MSG(rr.contains(k) && rr[k].is_null(), "results.json %s: %s", k,
                     rr.value(k, Json()).dump().c_str());
    MT_COMPARE(rr["preemptions"], Json(0)); // the fake's /metrics has the counter
    MT_COMPARE(rr["prefix_cache_queries"], Json(0));
    MT_CHECK(rr["mean_kv_usage"].is_null() || rr["mean_kv_usage"] == Json(0.42));
    const Json lr0 = Json::parse(first_line(dir.file("local-report/results.json")), nullptr, false);
    MT_REQUIRE(lr0.is_object());
    MT_CHECK(lr0["num_blocks"].is_number_integer() && lr0["num_blocks"].get<int>() > 0);
    const std::string csv = mini_test::read_file(dir.file("ep-report/requests.csv")).value_or("");
    const std::string row1 =
        csv.substr(csv.find('\n') + 1, csv.find('\n', csv.find('\n') + 1) - csv.find('\n') - 1);
    MT_CHECK_MSG(row1.size() > 3 && row1.substr(row1.size() - 3) == ",,,",
                 "requests.csv row without engine cells: %s", row1.c_str());

    Run show = run_llmwb(dir, "report show '" + dir.file("ep-report") + "'");
    MT_REQUIRE_MSG(show.status == 0, "report show: %s", show.err.c_str());
    std::snprintf(line, sizeof line, "%-40s n/a", "Engine steps:");
    MT_CHECK_MSG(show.out.find(line) != std::string::npos, "%s", show.out.c_str());
    std::snprintf(line, sizeof line, "%-40s n/a", "KV blocks (block size):");
    MT_CHECK(show.out.find(line) != std::string::npos);
    Run cmp = run_llmwb(dir, "report compare '" + dir.file("local-report") + "' '" +
                                 dir.file("ep-report") + "'");
    MT_REQUIRE_MSG(cmp.status == 0, "report compare: %s", cmp.err.c_str());
    std::printf("%s", cmp.out.c_str());
    const size_t at = cmp.out.find("\nmean_batch_size");
    MT_REQUIRE_MSG(at != std::string::npos, "%s", cmp.out.c_str());
    const std::string row = cmp.out.substr(at + 1, cmp.out.find('\n', at + 1) - at - 1);
    // The local run's value, then n/a for the endpoint and n/a as the difference.
    MT_CHECK_MSG(row.size() > 12 && row.substr(row.size() - 3) == "n/a" &&
                     row.find("n/a") < row.size() - 3,
                 "mean_batch_size row: %s", row.c_str());
    const std::string html = mini_test::read_file(dir.file("ep-report/report.html")).value_or("");
    const size_t h = html.find(">mean_batch_size<");
    MT_REQUIRE(h != std::string::npos);
    MT_CHECK(html.substr(h, 60).find("<td>n/a</td>") != std::string::npos);
}

MT_TEST(chatEndpointAndVllmSpelling) {
    mini_test::TempDir dir;
    test::FakeOpenAiServer server;
    MT_REQUIRE(server.ok());
    Run r = run_llmwb(dir, "bench --base-url " + server.url() +
                               " --endpoint /v1/chat/completions --model fake-model "
                               "--num-prompts 2 --input-len 4 --output-len 3 --quiet --json '" +
                               dir.file("chat.json") + "'");
    MT_REQUIRE_MSG(r.status == 0, "%s", r.err.c_str());
    Json j = read_json(dir.file("chat.json"));
    MT_COMPARE(j["endpoint_type"], Json("chat"));
    MT_COMPARE(j["results"]["endpoint"]["total_output_tokens"], Json(6));
}

MT_TEST(localTokenizerTurnsIdsIntoText) {
    mini_test::TempDir dir;
    test::FakeOpenAiServer server;
    MT_REQUIRE(server.ok());
    // The demo model (written by a first local run) is the local tokenizer.
    Run local = run_llmwb(dir, "bench --num-prompts 1 --input-len 4 --output-len 2 --quiet");
    MT_REQUIRE_MSG(local.status == 0, "%s", local.err.c_str());
    const std::string demo = dir.file("data/llmwb/llm-workbench/llmwb-demo-ngram.gguf");
    MT_REQUIRE(std::filesystem::exists(demo));
    MT_REQUIRE(mini_test::write_file(dir.file("ids.jsonl"),
                                     "{\"ids\": [5, 6, 7, 8], \"max_tokens\": 3}\n"
                                     "{\"prompt\": \"plain text here\", \"max_tokens\": 2}\n"));
    const std::string base =
        "bench --endpoint " + server.url() + " --quiet --dataset '" + dir.file("ids.jsonl") + "' ";
    Run no_tok = run_llmwb(dir, base + "--model fake-model");
    MT_CHECK(no_tok.status != 0);
    MT_CHECK_MSG(no_tok.err.find("ids.jsonl:1: \"ids\" need a local tokenizer") !=
                     std::string::npos,
                 "%s", no_tok.err.c_str());
    // --model a local path: its tokenizer, and --served-model-name the name sent.
    Run tok =
        run_llmwb(dir, base + "--model '" + demo + "' --served-model-name fake-model --json '" +
                           dir.file("tok.json") + "'");
    MT_REQUIRE_MSG(tok.status == 0, "%s", tok.err.c_str());
    Json j = read_json(dir.file("tok.json"));
    MT_COMPARE(j["model"], Json("fake-model"));
    MT_COMPARE(j["results"]["endpoint"]["completed"], Json(2));
    MT_COMPARE(j["results"]["endpoint"]["total_output_tokens"], Json(5));
    MT_CHECK(tok.err.find("does not list") == std::string::npos); // fake-model is served
}

MT_TEST(badInvocations) {
    mini_test::TempDir dir;
    test::FakeOpenAiServer server;
    struct Bad {
        std::string args, expect;
    };
    int dead_port = 0;
    {
        test::FakeOpenAiServer gone;
        dead_port = gone.port();
    }
    const std::vector<Bad> bad = {
        {"bench --endpoint " + server.url() + " --model fake-model --gpu-memory-utilization 0.5",
         "--gpu-memory-utilization sets the engine here"},
        {"bench --endpoint " + server.url(), "give --model NAME"},
        {"bench --endpoint ftp://x --model m", "the scheme must be http or https"},
        {"bench --endpoint /v1/completions --model m", "give the server too"},
        {"bench --endpoint-type chat", "needs --endpoint URL"},
        {"bench --endpoint http://127.0.0.1:" + std::to_string(dead_port) + " --model m --quiet",
         "/v1/models: Connection"},
        {"bench --endpoint " + server.url() + " --model fake-model --dataset-name sharegpt",
         "sharegpt"},
    };
    for (const Bad& b : bad) {
        MT_SCOPE("%s", b.args.c_str());
        Run r = run_llmwb(dir, b.args);
        MT_CHECK(r.status != 0);
        MT_CHECK_MSG(r.err.find(b.expect) != std::string::npos, "%s", r.err.c_str());
    }
}

MINI_TEST_MAIN()
