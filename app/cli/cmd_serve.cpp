// llmwb serve: the OpenAI-compatible server (app/server) over one model. The HTTP port is bound
// first (requests get 503 while the model loads), then the engine starts on its own thread
// (ServingLoop). SIGINT / SIGTERM shut down gracefully: no new requests, live ones get a few
// seconds to finish, the rest end with finish_reason "abort", then the process exits 0.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/cli/commands.h"

#ifdef LLMWB_HAVE_SERVER
#include <csignal>
#include <ctime>
#include <future>
#include <pthread.h>
#include <thread>

#include "app/cli/cli_model.h"
#include "app/cli/cli_options.h"
#include "app/server/openai_server.h"
#include "app/server/serving_loop.h"
#endif

namespace llmwb::cli {

#ifndef LLMWB_HAVE_SERVER

int cmd_serve(const Args&) {
    return fail("serve", "built without the server: cpp-httplib was not found");
}

#else

namespace {

const char* kServeHelp =
    "llmwb serve [--model M] [options]   an OpenAI-compatible server (vLLM's routes)\n"
    "  --host H                  address to bind (default 127.0.0.1; another address is\n"
    "                            reachable from other machines: a warning says so)\n"
    "  --port N                  port (default 8000)\n"
    "  --api-key KEY             required as 'Authorization: Bearer KEY' on /v1/*, /tokenize,\n"
    "                            /detokenize (default: $LLMWB_API_KEY; none when unset)\n"
    "  --protect-metrics         /metrics, /health and /version need the key too\n"
    "  --served-model-name NAME  the model id clients send (default: --model as given)\n"
    "  --allowed-origins LIST    CORS: comma-separated origins, or * (default: CORS off)\n"
    "  --max-waiting N           at most N sequences waiting; beyond: 429 with Retry-After\n"
    "                            (default 1024; 0: no limit)\n"
    "  --http-threads N          HTTP worker threads, one per open connection (default 512)\n"
    "  --max-body-mb MB          largest request body (default 8); larger: 413\n"
    "  --request-timeout S       abort a generation still running after S seconds (its\n"
    "                            choices end with finish_reason \"abort\"; default 0: none)\n"
    "routes: GET /v1/models, POST /v1/completions, POST /v1/chat/completions, POST /tokenize,\n"
    "        POST /detokenize, GET /health, GET /version, GET /metrics (Prometheus)\n";

bool is_loopback(const std::string& host) {
    return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

// Blocks SIGINT/SIGTERM in this thread and every thread it starts; a watcher thread takes them.
std::future<int> watch_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::signal(SIGPIPE, SIG_IGN); // a client that went away is a failed write, not a signal
    auto promise = std::make_shared<std::promise<int>>();
    std::future<int> f = promise->get_future();
    std::thread([set, promise] {
        int sig = 0;
        sigwait(&set, &sig);
        promise->set_value(sig);
    }).detach();
    return f;
}

} // namespace

int cmd_serve(const Args& argv) {
    const char* cmd = "serve";
    OptionNames names{{"model", "host", "port", "api-key", "served-model-name", "allowed-origins",
                       "max-waiting", "http-threads", "max-body-mb", "request-timeout"},
                      {"protect-metrics", "help"}};
    auto args = names.add(device_option_names()).add(engine_option_names()).parse(argv);
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::fputs(kServeHelp, stdout);
        std::fputs("device:\n", stdout);
        std::fputs(kDeviceOptionsHelp, stdout);
        std::fputs("engine:\n", stdout);
        std::fputs(kEngineOptionsHelp, stdout);
        std::fputs(kSpeculativeOptionsHelp, stdout);
        return 0;
    }
    struct {
        DeviceOptions device;
        EngineOptions engine;
    } o;
    if (Status st = parse_serving_options(*args, o); !st)
        return fail(cmd, st.message());
    ServerOptions so;
    so.host = args->get_or("host", "127.0.0.1");
    auto port = args->get_int("port", 1, 65535);
    auto waiting = args->get_int("max-waiting", 0, 1 << 30);
    auto threads = args->get_int("http-threads", 1, 10000);
    auto body_mb = args->get_int("max-body-mb", 1, 1024);
    auto timeout = args->get_int("request-timeout", 0, 86400 * 7);
    for (auto* r : {&port, &waiting, &threads, &body_mb, &timeout})
        if (!*r)
            return fail(cmd, r->message());
    so.port = static_cast<int>(port->value_or(8000));
    so.threads = static_cast<int>(threads->value_or(512));
    so.max_body_bytes = static_cast<size_t>(body_mb->value_or(8)) << 20;
    so.protect_metrics = args->has("protect-metrics");
    so.request_timeout_s = static_cast<int>(timeout->value_or(0));
    if (auto key = args->get("api-key"))
        so.api_key = *key;
    else if (const char* env = std::getenv("LLMWB_API_KEY"); env && *env)
        so.api_key = env;
    if (auto origins = args->get("allowed-origins")) {
        size_t pos = 0;
        while (pos <= origins->size()) {
            size_t comma = origins->find(',', pos);
            if (comma == std::string::npos)
                comma = origins->size();
            std::string item = origins->substr(pos, comma - pos);
            if (!item.empty())
                so.allowed_origins.push_back(item);
            pos = comma + 1;
        }
    }
    if (!is_loopback(so.host))
        std::fprintf(stderr,
                     "llmwb serve: warning: binding %s makes the server reachable from other "
                     "machines%s\n",
                     so.host.c_str(), so.api_key.empty() ? " without an API key (--api-key)" : "");

    std::future<int> signal = watch_signals();
    std::unique_ptr<ServingMetrics> metrics;
    OpenAiServer server(so, nullptr);
    auto bound = server.bind();
    if (!bound)
        return fail(cmd, bound.message());
    std::thread http([&server] { server.listen(); });
    auto stop_http = [&] {
        server.stop();
        if (http.joinable())
            http.join();
    };

    auto mo = open_cli_model(*args);
    if (!mo) {
        stop_http();
        return fail(cmd, mo.message());
    }
    CliModel& m = **mo;
    EngineOptions& eo = o.engine;
    eo.config.memory.fallback_when_short = true;
    auto exec = m.open_executor(o.device, eo.config.max_num_batched_tokens, eo.config.max_num_seqs);
    if (!exec) {
        stop_http();
        return fail(cmd, exec.message());
    }
    std::unique_ptr<DraftModelProposer> draft; // outlives the engine
    auto engine = Engine::create(**exec, *m.tokenizer, eo.config);
    if (!engine) {
        stop_http();
        return fail(cmd, engine.message());
    }
    auto attached = attach_draft_model(m, **engine);
    if (!attached) {
        stop_http();
        return fail(cmd, attached.message());
    }
    draft = std::move(attached.value());

    ServedModel model;
    model.name = args->get_or("served-model-name", args->get_or("model", "llmwb-demo"));
    model.root = m.model->path;
    model.max_model_len = (*engine)->context_limit();
    model.created = static_cast<int64_t>(std::time(nullptr));
    model.tokenizer = m.tokenizer.get();
    set_chat_template(model, m.model->chat_template);
    metrics = std::make_unique<ServingMetrics>(model.name);
    ServingLoopOptions lo;
    lo.max_waiting = static_cast<int32_t>(waiting->value_or(1024));
    const std::string name = model.name;
    {
        ServingLoop loop(**engine, metrics.get(), std::move(model), lo);
        server.set_metrics(metrics.get());
        server.set_backend(&loop);
        std::printf("llmwb serve: listening on http://%s:%d (model %s)\n", so.host.c_str(), *bound,
                    name.c_str());
        std::fflush(stdout);
        const int sig = signal.get();
        std::fprintf(stderr, "llmwb serve: %s, shutting down\n",
                     sig == SIGINT ? "SIGINT" : "SIGTERM");
        loop.shutdown(std::chrono::seconds(5)); // live streams finish or end with "abort"
        stop_http();
        server.set_backend(nullptr);
    }
    return 0;
}

#endif

} // namespace llmwb::cli
