#include "app/remote/openai_client.h"

#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/remote/sse_parser.h"
#include "engine/util/json_depth.h"

namespace llmwb::remote {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// At most n characters of `s`, control characters shown as '?', for error messages.
std::string printable(std::string_view s, size_t n = 300) {
    std::string out;
    for (char c : s.substr(0, n))
        out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
    if (s.size() > n)
        out += "...";
    return out;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size())
        return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i])
            return false;
    }
    return true;
}

void set_timeout(httplib::Client& c, void (httplib::Client::*set)(time_t, time_t), double s) {
    s = std::clamp(s, 0.001, 1e6);
    const auto sec = static_cast<time_t>(s);
    (c.*set)(sec, static_cast<time_t>((s - static_cast<double>(sec)) * 1e6));
}

// Depth-checked parse; nullopt-like: a discarded value with the reason in `why`.
Json parse_json(std::string_view text, int max_depth, std::string& why) {
    if (Status st = check_json_depth(text, max_depth, "JSON"); !st) {
        why = "nested deeper than " + std::to_string(max_depth) + " levels";
        return Json(Json::value_t::discarded);
    }
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded())
        why = "not valid JSON: '" + printable(text, 80) + "'";
    return j;
}

const Json* member(const Json& j, const char* key) {
    if (!j.is_object())
        return nullptr;
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
}

std::string string_member(const Json& j, const char* key) {
    const Json* m = member(j, key);
    return m && m->is_string() ? m->get<std::string>() : std::string();
}

// usage: {"prompt_tokens": n, "completion_tokens": n}; nullopt when absent or not counts.
std::optional<Usage> read_usage(const Json& j) {
    const Json* u = member(j, "usage");
    if (!u || !u->is_object())
        return std::nullopt;
    auto count = [&](const char* key) -> std::optional<int64_t> {
        const Json* v = member(*u, key);
        if (!v || !v->is_number_integer())
            return std::nullopt;
        const auto n = v->get<int64_t>();
        if (n < 0 || n > (int64_t{1} << 40))
            return std::nullopt;
        return n;
    };
    auto c = count("completion_tokens");
    if (!c)
        return std::nullopt;
    return Usage{count("prompt_tokens").value_or(0), *c};
}

} // namespace

const char* endpoint_type_name(EndpointType t) {
    return t == EndpointType::Chat ? "chat" : "completions";
}

Result<EndpointType> parse_endpoint_type(const std::string& name) {
    if (name == "completions" || name == "openai")
        return EndpointType::Completions;
    if (name == "chat" || name == "openai-chat")
        return EndpointType::Chat;
    return make_error("--endpoint-type: '" + name + "' is not completions or chat");
}

std::string server_error_message(std::string_view body) {
    std::string why;
    Json j = parse_json(body, 32, why);
    if (!j.is_discarded() && j.is_object()) {
        if (const Json* e = member(j, "error")) {
            if (e->is_string())
                return printable(e->get<std::string>());
            if (std::string m = string_member(*e, "message"); !m.empty())
                return printable(m);
        }
        for (const char* key : {"message", "detail"})
            if (std::string m = string_member(j, key); !m.empty())
                return printable(m);
    }
    std::string_view b = body;
    while (!b.empty() && (b.back() == '\n' || b.back() == '\r' || b.back() == ' '))
        b.remove_suffix(1);
    return b.empty() ? "(empty body)" : printable(b);
}

struct OpenAiClient::Http {
    std::mutex mu; // guards stop() against the client's replacement
    std::unique_ptr<httplib::Client> client;
};

OpenAiClient::OpenAiClient(EndpointConfig config, EndpointUrl url)
    : config_(std::move(config)), url_(std::move(url)), http_(std::make_unique<Http>()) {
    auto c = std::make_unique<httplib::Client>(url_.origin());
    set_timeout(*c, &httplib::Client::set_connection_timeout, config_.connect_timeout_s);
    set_timeout(*c, &httplib::Client::set_read_timeout, config_.read_timeout_s);
    set_timeout(*c, &httplib::Client::set_write_timeout, config_.read_timeout_s);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    c->set_follow_location(false);
    if (!config_.api_key.empty())
        c->set_bearer_token_auth(config_.api_key);
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
    if (url_.scheme == "https") {
        if (!config_.ca_cert_path.empty())
            c->set_ca_cert_path(config_.ca_cert_path);
        c->enable_server_certificate_verification(config_.verify_tls);
    }
#endif
    http_->client = std::move(c);
}

OpenAiClient::~OpenAiClient() = default;

Result<std::unique_ptr<OpenAiClient>> OpenAiClient::create(EndpointConfig config) {
    auto url = parse_endpoint_url(config.base_url);
    if (!url)
        return url.error();
    if (config.api_key.find_first_of("\r\n") != std::string::npos)
        return make_error("the API key contains a line break");
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
    if (url->scheme == "https")
        return make_error(url->text() + ": https needs cpp-httplib built with OpenSSL");
#endif
    if (!config.ca_cert_path.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(config.ca_cert_path, ec))
            return make_error("CA certificate file " + config.ca_cert_path + " not found");
    }
    return std::unique_ptr<OpenAiClient>(new OpenAiClient(std::move(config), std::move(*url)));
}

void OpenAiClient::cancel() {
    cancel_ = true;
    std::lock_guard<std::mutex> lock(http_->mu);
    if (http_->client)
        http_->client->stop();
}

Result<std::string> OpenAiClient::get_text(const std::string& route) {
    const std::string where = url_.text() + route;
    httplib::Request req;
    req.method = "GET";
    req.path = url_.path(route);
    int status = 0;
    std::string body;
    bool too_big = false;
    req.response_handler = [&](const httplib::Response& r) {
        status = r.status;
        return true;
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        if (body.size() + n > config_.max_body_bytes) {
            too_big = true;
            return false;
        }
        body.append(data, n);
        return true;
    };
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    const bool sent = http_->client->send(req, res, err);
    if (too_big)
        return make_error(where + ": response larger than " +
                          std::to_string(config_.max_body_bytes) + " bytes");
    if (!sent)
        return make_error(where + ": " + httplib::to_string(err));
    if (status != 200)
        return make_error(where + ": HTTP " + std::to_string(status) + ": " +
                          server_error_message(body));
    return body;
}

Result<std::string> OpenAiClient::fetch_metrics() {
    return get_text("/metrics");
}

Result<std::vector<ModelEntry>> OpenAiClient::list_models() {
    const std::string where = url_.text() + "/v1/models";
    auto body = get_text("/v1/models");
    if (!body)
        return body.error();
    std::string why;
    Json j = parse_json(*body, config_.max_json_depth, why);
    if (j.is_discarded())
        return make_error(where + ": " + why);
    const Json* data = member(j, "data");
    if (!data || !data->is_array())
        return make_error(where + ": the answer has no \"data\" array");
    std::vector<ModelEntry> out;
    for (const Json& m : *data) {
        ModelEntry e;
        e.id = string_member(m, "id");
        if (e.id.empty())
            return make_error(where + ": a model entry without an \"id\"");
        e.owned_by = string_member(m, "owned_by");
        e.root = string_member(m, "root");
        if (const Json* len = member(m, "max_model_len"); len && len->is_number_integer())
            e.max_model_len = len->get<int64_t>();
        out.push_back(std::move(e));
    }
    return out;
}

Result<CompletionResult>
OpenAiClient::complete(const CompletionRequest& request,
                       const std::function<void(std::string_view)>& on_text) {
    const bool chat = request.type == EndpointType::Chat;
    const std::string route = chat ? "/v1/chat/completions" : "/v1/completions";
    const std::string where = url_.text() + route;
    cancel_ = false;

    Json body = Json::object();
    body["model"] = config_.model;
    if (chat) {
        Json msgs = Json::array();
        for (const ChatMessage& m : request.messages)
            msgs.push_back({{"role", m.role}, {"content", m.content}});
        body["messages"] = std::move(msgs);
        body["max_completion_tokens"] = request.max_tokens;
    } else {
        body["prompt"] = request.prompt;
        body["max_tokens"] = request.max_tokens;
    }
    if (request.temperature)
        body["temperature"] = *request.temperature;
    if (request.ignore_eos)
        body["ignore_eos"] = true;
    body["stream"] = request.stream;
    if (request.stream && request.include_usage)
        body["stream_options"] = {{"include_usage", true}};
    if (request.extra.is_object())
        for (auto it = request.extra.begin(); it != request.extra.end(); ++it)
            body[it.key()] = it.value();

    CompletionResult out;
    int status = 0;
    std::string content_type;
    std::string raw; // the body of an error or of a non-streamed answer
    std::string fail;
    bool done = false; // [DONE] seen
    size_t received = 0;
    SseParser sse(SseLimits{config_.max_line_bytes, config_.max_event_bytes});
    std::vector<SseEvent> events;
    bool streaming = false;

    auto on_chunk = [&](const Json& j) -> bool {
        if (const Json* e = member(j, "error"); e && !e->is_null()) {
            fail = "the server sent an error mid-stream: " + server_error_message(j.dump());
            return false;
        }
        const Json* choices = member(j, "choices");
        if (choices && choices->is_array() && !choices->empty()) {
            const double t = seconds_since(out.start);
            const Json& c0 = (*choices)[0];
            std::string piece;
            if (chat) {
                if (const Json* d = member(c0, "delta"))
                    piece = string_member(*d, "content");
            } else {
                piece = string_member(c0, "text");
            }
            if (out.token_chunks == 0)
                out.ttft_s = t;
            else
                out.itl_s.push_back(t - out.latency_s);
            out.latency_s = t;
            out.chunk_s.push_back(t);
            ++out.token_chunks;
            if (std::string fr = string_member(c0, "finish_reason"); !fr.empty())
                out.finish_reason = fr;
            if (!piece.empty()) {
                out.text += piece;
                if (on_text)
                    on_text(piece);
            }
        }
        if (auto u = read_usage(j))
            out.usage = u;
        return true;
    };

    httplib::Request req;
    req.method = "POST";
    req.path = url_.path(route);
    req.headers.emplace("Accept", request.stream ? "text/event-stream" : "application/json");
    req.headers.emplace("Content-Type", "application/json");
    req.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
    req.response_handler = [&](const httplib::Response& r) {
        status = r.status;
        content_type = r.get_header_value("Content-Type");
        streaming =
            request.stream && status == 200 && starts_with_ci(content_type, "text/event-stream");
        return !cancel_.load();
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        if (cancel_.load())
            return false;
        received += n;
        if (received > config_.max_body_bytes) {
            fail = "response larger than " + std::to_string(config_.max_body_bytes) + " bytes";
            return false;
        }
        if (config_.total_timeout_s > 0 && seconds_since(out.start) > config_.total_timeout_s) {
            fail = "no complete answer within the total timeout of " +
                   std::to_string(config_.total_timeout_s) + " s";
            return false;
        }
        if (!streaming) {
            raw.append(data, n);
            return true;
        }
        if (done)
            return true; // after [DONE]: read to the end, keeping the connection
        events.clear();
        if (Status st = sse.feed(std::string_view(data, n), events); !st) {
            fail = st.message();
            return false;
        }
        for (const SseEvent& ev : events) {
            if (ev.data == "[DONE]") {
                done = true;
                break;
            }
            std::string why;
            Json j = parse_json(ev.data, config_.max_json_depth, why);
            if (j.is_discarded()) {
                fail = "a streamed event is " + why;
                return false;
            }
            if (!j.is_object()) {
                fail = "a streamed event is not a JSON object: '" + printable(ev.data, 80) + "'";
                return false;
            }
            if (!on_chunk(j))
                return false;
        }
        return true;
    };

    out.start = Clock::now();
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    const bool sent = http_->client->send(req, res, err);
    if (cancel_.load()) {
        out.cancelled = true;
        return out;
    }
    if (!fail.empty())
        return make_error(where + ": " + fail);
    if (!sent)
        return make_error(where + ": " +
                          (out.token_chunks > 0 ? "the connection failed mid-stream after " +
                                                      std::to_string(out.token_chunks) + " chunks: "
                                                : std::string()) +
                          httplib::to_string(err));
    if (status != 200)
        return make_error(where + ": HTTP " + std::to_string(status) + ": " +
                          server_error_message(raw));
    if (request.stream) {
        if (!streaming)
            return make_error(where + ": a streamed request answered with Content-Type '" +
                              printable(content_type, 80) +
                              "', not text/event-stream: " + server_error_message(raw));
        if (!done)
            return make_error(where + ": the stream ended without [DONE] after " +
                              std::to_string(out.token_chunks) + " chunks (truncated)");
        if (out.token_chunks == 0)
            return make_error(where + ": the stream carried no token chunk (vLLM: \"Never "
                                      "received a valid chunk to calculate TTFT\")");
        return out;
    }
    std::string why;
    Json j = parse_json(raw, config_.max_json_depth, why);
    if (j.is_discarded())
        return make_error(where + ": the answer is " + why);
    if (const Json* e = member(j, "error"); e && !e->is_null())
        return make_error(where + ": " + server_error_message(raw));
    const Json* choices = member(j, "choices");
    if (!choices || !choices->is_array() || choices->empty())
        return make_error(where + ": the answer has no \"choices\"");
    const Json& c0 = (*choices)[0];
    out.text = chat ? (member(c0, "message") ? string_member(*member(c0, "message"), "content")
                                             : std::string())
                    : string_member(c0, "text");
    out.finish_reason = string_member(c0, "finish_reason");
    out.usage = read_usage(j);
    out.ttft_s = out.latency_s = seconds_since(out.start);
    if (on_text && !out.text.empty())
        on_text(out.text);
    return out;
}

} // namespace llmwb::remote
