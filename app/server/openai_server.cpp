#include "app/server/openai_server.h"

#include <atomic>

#include <cstdio>

#include <sys/socket.h>

#include "app/server/openai_handlers.h"
#include "engine/tokenizer/tokenizer.h"

#ifndef LLMWB_VERSION
#define LLMWB_VERSION "0.0.0"
#endif

namespace llmwb {

namespace server_detail {

using json = nlohmann::ordered_json;

namespace {
// The request this handler thread serves, for the request log.
struct RequestTrace {
    bool started = false;
    uint64_t id = 0; // RequestLogEntry::id
    std::chrono::steady_clock::time_point start;
    std::chrono::system_clock::time_point arrived;
    GenerationUsage usage;
    const std::function<void(const RequestLogEntry&)>* log = nullptr; // the server's, or null
};
thread_local RequestTrace t_trace;
std::atomic<uint64_t> g_next_request_log_id{1};

RequestLogEntry log_entry_of(const httplib::Request& req) {
    RequestLogEntry e;
    e.id = t_trace.id;
    e.client_address = req.remote_addr;
    e.client_port = req.remote_port;
    e.user_agent = req.get_header_value("User-Agent");
    e.method = req.method;
    e.path = req.path;
    return e;
}
} // namespace

GenerationUsage& current_usage() {
    return t_trace.usage;
}

void log_generation_started(const httplib::Request& req, int64_t prompt_tokens) {
    if (!t_trace.started || !t_trace.log)
        return;
    RequestLogEntry e = log_entry_of(req);
    e.running = true;
    e.time = t_trace.arrived;
    e.prompt_tokens = prompt_tokens;
    (*t_trace.log)(e);
}

std::string dump(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

void send_json(httplib::Response& res, int status, const json& j) {
    res.status = status;
    res.set_content(dump(j), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
    res.status = e.status;
    res.set_content(error_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                    "application/json");
}

std::optional<ApiError> check_model(const ServingBackend& backend, const std::string& requested) {
    if (requested.empty() || requested == backend.model().name)
        return std::nullopt;
    ApiError e;
    e.status = 404;
    e.param = "model";
    e.code = "model_not_found";
    e.message = "The model `" + requested + "` does not exist.";
    return e;
}

} // namespace server_detail

namespace {

using json = nlohmann::ordered_json;
using namespace server_detail;

// Compares without an early exit (the key is a secret).
bool same_secret(const std::string& a, const std::string& b) {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
    return diff == 0 && !b.empty();
}

bool needs_key(const std::string& path, bool protect_metrics) {
    if (path.rfind("/v1/", 0) == 0 || path == "/tokenize" || path == "/detokenize")
        return true;
    return protect_metrics && (path == "/metrics" || path == "/health" || path == "/version");
}

ApiError unavailable() {
    ApiError e;
    e.status = 503;
    e.type = "service_unavailable";
    e.message = "the model is loading; retry shortly";
    return e;
}

} // namespace

OpenAiServer::OpenAiServer(ServerOptions options, ServingMetrics* metrics)
    : options_(std::move(options)), metrics_(metrics), svr_(std::make_unique<httplib::Server>()) {
    httplib::Server& s = *svr_;
    const int threads = std::max(1, options_.threads);
    s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    // Streamed chunks are small: without TCP_NODELAY, Nagle's algorithm with the client's
    // delayed ACK holds each one ~40 ms on loopback (measured by the remote client's ITL).
    s.set_tcp_nodelay(true);
    s.set_payload_max_length(options_.max_body_bytes);
    s.set_read_timeout(options_.read_timeout_s, 0);
    s.set_write_timeout(options_.write_timeout_s, 0);
    s.set_keep_alive_timeout(options_.keep_alive_timeout_s);
    // The listening socket, to raise its backlog after bind (the library listens with a backlog
    // of 5, fixed when it was built: a burst of clients would be reset).
    s.set_socket_options([this](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        listen_fd_ = static_cast<int>(sock);
    });

    // Key and CORS before routing.
    s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        t_trace = RequestTrace{};
        t_trace.started = true;
        t_trace.id = g_next_request_log_id.fetch_add(1);
        t_trace.log = options_.request_log ? &options_.request_log : nullptr;
        t_trace.start = std::chrono::steady_clock::now();
        t_trace.arrived = std::chrono::system_clock::now();
        if (!options_.allowed_origins.empty() && req.has_header("Origin")) {
            const std::string origin = req.get_header_value("Origin");
            for (const std::string& allowed : options_.allowed_origins)
                if (allowed == "*" || allowed == origin) {
                    res.set_header("Access-Control-Allow-Origin", allowed == "*" ? "*" : origin);
                    res.set_header("Vary", "Origin");
                    res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
                    res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
                    break;
                }
            if (req.method == "OPTIONS") { // a preflight: answered here, without the key
                res.status = 204;
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        if (!options_.api_key.empty() && needs_key(req.path, options_.protect_metrics)) {
            const std::string auth = req.get_header_value("Authorization");
            const std::string bearer = "Bearer ";
            const bool ok = auth.rfind(bearer, 0) == 0 &&
                            same_secret(auth.substr(bearer.size()), options_.api_key);
            if (!ok) {
                ApiError e;
                e.status = 401;
                e.code = "invalid_api_key";
                e.message = "Unauthorized: give the server's API key as 'Authorization: Bearer "
                            "KEY'";
                send_error(res, e);
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    // Statuses httplib sets itself (404 no route, 413 body too large, 400 bad request line ...)
    // as OpenAI error objects; handlers' own errors already have a body.
    s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty())
            return;
        ApiError e;
        e.status = res.status;
        if (res.status == 404) {
            e.message = "no route " + req.method + " " + req.path;
            e.code = "not_found";
        } else if (res.status == 413 &&
                   req.get_header_value("Content-Type")
                           .rfind("application/x-www-form-urlencoded", 0) == 0) {
            // cpp-httplib caps form bodies at 8 KB whatever the server's limit (curl -d sends
            // this type unless told otherwise).
            e.message = "the request body is too large for Content-Type "
                        "application/x-www-form-urlencoded (at most 8 KB); send the JSON with "
                        "Content-Type: application/json";
        } else if (res.status == 413) {
            e.message = "the request body is too large";
        } else if (res.status == 405) {
            e.message = "method not allowed";
        } else {
            e.message = "bad request";
        }
        send_error(res, e);
    });
    s.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
            ApiError e;
            e.status = 500;
            e.type = "internal_error";
            e.message = "internal error";
            send_error(res, e);
        });

    if (options_.request_log)
        s.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
            RequestLogEntry e = log_entry_of(req);
            e.status = res.status;
            if (t_trace.started) {
                e.time = t_trace.arrived;
                e.duration_ms = std::chrono::duration<double, std::milli>(
                                    std::chrono::steady_clock::now() - t_trace.start)
                                    .count();
                e.prompt_tokens = t_trace.usage.prompt_tokens;
                e.completion_tokens = t_trace.usage.completion_tokens;
                e.finish_reason = t_trace.usage.finish_reason;
            } else {
                e.time = std::chrono::system_clock::now();
            }
            t_trace = RequestTrace{};
            options_.request_log(e);
        });

    // The backend, or null after a 503 saying why there is none (or why it serves nothing now).
    auto backend_or_503 = [this](httplib::Response& res) -> ServingBackend* {
        ServingBackend* b = backend_.load();
        if (!b) {
            send_error(res, unavailable());
            return nullptr;
        }
        if (auto why = b->unavailable()) {
            ApiError e = unavailable();
            e.message = *why;
            send_error(res, e);
            return nullptr;
        }
        return b;
    };

    s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        ServingBackend* b = backend_.load();
        res.status = b && !b->unavailable() ? 200 : 503;
    });
    s.Get("/version", [](const httplib::Request&, httplib::Response& res) {
        send_json(res, 200, json{{"version", LLMWB_VERSION}});
    });
    s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        ServingMetrics* m = metrics_.load();
        res.set_content(m ? m->render_prometheus() : std::string(),
                        "text/plain; version=0.0.4; charset=utf-8");
    });
    s.Get("/v1/models", [backend_or_503](const httplib::Request&, httplib::Response& res) {
        ServingBackend* b = backend_or_503(res);
        if (!b)
            return;
        const ServedModel& m = b->model();
        json model{{"id", m.name},
                   {"object", "model"},
                   {"created", m.created},
                   {"owned_by", "llmwb"},
                   {"root", m.root},
                   {"parent", nullptr},
                   {"max_model_len", m.max_model_len}};
        send_json(res, 200, json{{"object", "list"}, {"data", json::array({model})}});
    });
    s.Post("/v1/completions",
           [this, backend_or_503](const httplib::Request& req, httplib::Response& res) {
               if (ServingBackend* b = backend_or_503(res))
                   handle_generation(*b, req, res, false, options_.request_timeout_s);
           });
    s.Post("/v1/chat/completions",
           [this, backend_or_503](const httplib::Request& req, httplib::Response& res) {
               if (ServingBackend* b = backend_or_503(res))
                   handle_generation(*b, req, res, true, options_.request_timeout_s);
           });
    s.Post("/tokenize", [backend_or_503](const httplib::Request& req, httplib::Response& res) {
        ServingBackend* b = backend_or_503(res);
        if (!b)
            return;
        auto body = parse_json_body(req.body);
        if (auto* e = std::get_if<ApiError>(&body))
            return send_error(res, *e);
        const json& j = std::get<json>(body);
        const ServedModel& m = b->model();
        if (j.contains("model") && j["model"].is_string())
            if (auto e = check_model(*b, j["model"].get<std::string>()))
                return send_error(res, *e);
        bool add_special = true;
        if (j.contains("add_special_tokens") && j["add_special_tokens"].is_boolean())
            add_special = j["add_special_tokens"].get<bool>();
        std::vector<int32_t> tokens;
        if (j.contains("messages")) {
            auto msgs = parse_messages(j["messages"]);
            if (auto* e = std::get_if<ApiError>(&msgs))
                return send_error(res, *e);
            bool add_generation_prompt = true;
            if (j.contains("add_generation_prompt") && j["add_generation_prompt"].is_boolean())
                add_generation_prompt = j["add_generation_prompt"].get<bool>();
            auto text = render_chat_prompt(m, std::get<json>(msgs), json(), add_generation_prompt,
                                           std::nullopt);
            if (auto* e = std::get_if<ApiError>(&text))
                return send_error(res, *e);
            tokens = m.tokenizer->encode(std::get<std::string>(text), false);
        } else if (j.contains("prompt") && j["prompt"].is_string()) {
            tokens = m.tokenizer->encode(j["prompt"].get<std::string>(), add_special);
        } else {
            return send_error(res, bad_param("prompt", "give \"prompt\" (a string) or "
                                                       "\"messages\""));
        }
        send_json(
            res, 200,
            json{{"count", tokens.size()}, {"max_model_len", m.max_model_len}, {"tokens", tokens}});
    });
    s.Post("/detokenize", [backend_or_503](const httplib::Request& req, httplib::Response& res) {
        ServingBackend* b = backend_or_503(res);
        if (!b)
            return;
        auto body = parse_json_body(req.body);
        if (auto* e = std::get_if<ApiError>(&body))
            return send_error(res, *e);
        const json& j = std::get<json>(body);
        if (j.contains("model") && j["model"].is_string())
            if (auto e = check_model(*b, j["model"].get<std::string>()))
                return send_error(res, *e);
        const Tokenizer& tok = *b->model().tokenizer;
        if (!j.contains("tokens") || !j["tokens"].is_array())
            return send_error(res, bad_param("tokens", "tokens must be an array of token ids"));
        std::vector<int32_t> ids;
        for (const json& v : j["tokens"]) {
            if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
                (v.is_number_unsigned() && v.get<uint64_t>() > INT32_MAX) ||
                !tok.valid_id(static_cast<int32_t>(v.get<int64_t>())))
                return send_error(res, bad_param("tokens", "tokens must be token ids in [0, " +
                                                               std::to_string(tok.vocab_size()) +
                                                               "), got " + dump(v)));
            ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
        }
        send_json(res, 200, json{{"prompt", tok.decode(ids, false)}});
    });
}

OpenAiServer::~OpenAiServer() {
    stop();
}

Result<int> OpenAiServer::bind() {
    int port = options_.port;
    if (port == 0) {
        port = svr_->bind_to_any_port(options_.host);
        if (port <= 0)
            return make_error("cannot bind " + options_.host + " to a free port");
    } else if (!svr_->bind_to_port(options_.host, port)) {
        return make_error("cannot bind " + options_.host + ":" + std::to_string(port) +
                          " (in use, or not an address of this machine)");
    }
    if (listen_fd_ >= 0)
        ::listen(listen_fd_, kListenBacklog); // listening again only sets the backlog
    return port;
}

bool OpenAiServer::listen() {
    return svr_->listen_after_bind();
}

bool OpenAiServer::is_listening() const {
    return svr_ && svr_->is_running();
}

void OpenAiServer::stop() {
    if (svr_)
        svr_->stop();
}

} // namespace llmwb
