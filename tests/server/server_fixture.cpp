#include "server_fixture.h"

#include <chrono>
#include <csignal>

#include "engine/model/demo_model.h"

namespace llmwb::server_test {

ServerFixture::ServerFixture(const FixtureOptions& o) {
    std::signal(SIGPIPE, SIG_IGN);
    auto path = ensure_demo_model(dir.path());
    if (!path) {
        error = path.message();
        return;
    }
    auto m = cli::open_cli_model(std::optional<std::string>(*path));
    if (!m) {
        error = m.message();
        return;
    }
    model = std::move(m.value());
    cli::DeviceOptions dev;
    dev.device = DevicePreference::Cpu;
    dev.threads = 1;
    EngineConfig cfg;
    cfg.max_num_seqs = o.max_num_seqs;
    cfg.max_num_batched_tokens = 256;
    cfg.memory.fallback_when_short = true;
    cfg.memory.need_tokens = int64_t(o.max_num_seqs) * 2048;
    cfg.memory.need_seqs = o.max_num_seqs;
    auto exec = model->open_executor(dev, cfg.max_num_batched_tokens, cfg.max_num_seqs);
    if (!exec) {
        error = exec.message();
        return;
    }
    auto e = Engine::create(**exec, *model->tokenizer, cfg);
    if (!e) {
        error = e.message();
        return;
    }
    engine = std::move(e.value());
    ServedModel served;
    served.name = "demo";
    served.root = *path;
    served.max_model_len = engine->context_limit();
    served.created = 1;
    served.tokenizer = model->tokenizer.get();
    set_chat_template(served, model->model->chat_template);
    metrics = std::make_unique<ServingMetrics>(served.name);
    ServingLoopOptions lo;
    lo.max_waiting = o.max_waiting;
    loop = std::make_unique<ServingLoop>(*engine, metrics.get(), std::move(served), lo);
    ServerOptions so;
    so.port = 0;
    so.api_key = kKey;
    so.max_body_bytes = kBodyLimit;
    so.threads = o.http_threads;
    so.request_timeout_s = o.request_timeout_s;
    so.allowed_origins = {"http://allowed.example"};
    server = std::make_unique<OpenAiServer>(so, metrics.get());
    server->set_backend(loop.get());
    auto p = server->bind();
    if (!p) {
        error = p.message();
        return;
    }
    port = *p;
    http = std::thread([this] { server->listen(); });
}

ServerFixture::~ServerFixture() {
    if (loop)
        loop->shutdown(std::chrono::milliseconds(0));
    if (server)
        server->stop();
    if (http.joinable())
        http.join();
}

std::unique_ptr<httplib::Client> ServerFixture::client(const std::string& key) const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
    c->set_read_timeout(20, 0);
    if (!key.empty())
        c->set_default_headers({{"Authorization", "Bearer " + key}});
    return c;
}

bool ServerFixture::engine_idle_and_clean(double seconds, std::string& why) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
        bool idle = false;
        loop->with_engine([&](Engine& e) {
            idle = e.num_unfinished() == 0;
            const Status st = e.check_consistency();
            const int32_t used = e.kv_manager().pool().num_used();
            why = "unfinished " + std::to_string(e.num_unfinished()) + ", used blocks " +
                  std::to_string(used) + (st ? "" : ", inconsistent: " + st.message());
            idle = idle && used == 0 && st.ok();
        });
        if (idle)
            return true;
        if (std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

ServerFixture& fixture() {
    static ServerFixture f;
    return f;
}

ServerFixture& ready() {
    ServerFixture& f = fixture();
    if (!f.error.empty())
        std::fprintf(stderr, "fixture: %s\n", f.error.c_str());
    return f;
}

namespace {
Reply reply_of(const httplib::Result& r) {
    Reply out;
    if (!r)
        return out;
    out.status = r->status;
    out.raw = r->body;
    out.headers = r->headers;
    out.body = nlohmann::json::parse(r->body, nullptr, false);
    return out;
}
} // namespace

Reply post(const ServerFixture& f, const std::string& path, const std::string& body,
           const std::string& key, const std::string& content_type) {
    auto c = f.client(key);
    return reply_of(c->Post(path.c_str(), body, content_type.c_str()));
}

Reply get(const ServerFixture& f, const std::string& path, const std::string& key) {
    auto c = f.client(key);
    return reply_of(c->Get(path.c_str()));
}

std::string post_stream(const ServerFixture& f, const std::string& path, const std::string& body,
                        int stop_after, int* status) {
    auto c = f.client();
    httplib::Request req;
    req.method = "POST";
    req.path = path;
    req.body = body;
    req.headers = {{"Authorization", std::string("Bearer ") + kKey},
                   {"Content-Type", "application/json"}};
    std::string out;
    int calls = 0;
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        out.append(data, n);
        return !(stop_after > 0 && ++calls >= stop_after);
    };
    auto r = c->send(req);
    if (status)
        *status = r ? r->status : -static_cast<int>(r.error());
    return out;
}

} // namespace llmwb::server_test
