// Internal to the server: the handlers of the generation routes (openai_generation.cpp) and the
// shared reply helpers (openai_server.cpp).
#pragma once

#include <httplib.h>

#include "app/server/openai_requests.h"
#include "app/server/serving_backend.h"

namespace llmwb::server_detail {

// What the generation handler tells the request log about the request it serves. httplib runs
// a request's handler, its streamed body and its logger on one thread: this is that thread's.
struct GenerationUsage {
    int64_t prompt_tokens = -1, completion_tokens = -1;
    std::string finish_reason;
};
GenerationUsage& current_usage();
// Tells the request log (if any) that this thread's generation was admitted and runs.
void log_generation_started(const httplib::Request& req, int64_t prompt_tokens);

// JSON bodies are dumped with invalid UTF-8 replaced (model text may hold partial characters).
std::string dump(const nlohmann::ordered_json& j);
void send_json(httplib::Response& res, int status, const nlohmann::ordered_json& j);
void send_error(httplib::Response& res, const ApiError& e);
// 404 naming the model when `requested` is neither empty nor the served model's name.
std::optional<ApiError> check_model(const ServingBackend& backend, const std::string& requested);

// POST /v1/completions (chat = false) and /v1/chat/completions (chat = true). A request still
// running after timeout_s seconds (0: no limit) is aborted: its choices end with "abort".
void handle_generation(ServingBackend& backend, const httplib::Request& req, httplib::Response& res,
                       bool chat, int timeout_s);
// The prompt of a chat: the model's chat template over `messages` (and `tools`), as
// `llmwb render-chat` renders it; errors name "messages".
std::variant<std::string, ApiError> render_chat_prompt(const ServedModel& model,
                                                       const nlohmann::ordered_json& messages,
                                                       const nlohmann::ordered_json& tools,
                                                       bool add_generation_prompt,
                                                       std::optional<bool> enable_thinking);

} // namespace llmwb::server_detail
