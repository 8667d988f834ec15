// POST /v1/completions and /v1/chat/completions: parse -> prompt ids -> the length rule ->
// submit n sequences -> a whole response, or SSE chunks as outputs arrive.
#include <algorithm>
#include <chrono>
#include <ctime>

#include "app/server/openai_handlers.h"
#include "app/server/openai_responses.h"
#include "app/server/openai_tool_calls.h"
#include "engine/tokenizer/tokenizer.h"

namespace llmwb::server_detail {

namespace {

using json = nlohmann::ordered_json;
using namespace std::chrono_literals;

struct Choice {
    std::string text;
    std::vector<int32_t> ids;
    bool finished = false;
    FinishReason finish = FinishReason::None;
    bool role_sent = false;  // chat streams: the first delta carries the role
    int64_t text_offset = 0; // completions logprobs
};

// One generation request from its parsed body to its last byte.
struct Job {
    bool chat = false;
    std::string id, model;
    int64_t created = 0;
    std::vector<int32_t> prompt;
    GenerationRequest common;
    int32_t top_n = 0;     // logprobs entries per token
    bool logprobs = false; // logprobs asked for
    bool tools = false;    // chat with tools: look for tool calls in the output
    std::vector<Choice> choices;
    std::shared_ptr<RequestStream> stream;
    ServingBackend* backend = nullptr;
    // The model the request was made for (an app's backend may switch models meanwhile; its
    // stream keeps this one alive).
    const ServedModel* served = nullptr;
    std::optional<std::chrono::steady_clock::time_point> deadline;

    int64_t completion_tokens() const {
        int64_t n = 0;
        for (const Choice& c : choices)
            n += static_cast<int64_t>(c.ids.size());
        return n;
    }
};

json base_object(const Job& job, const char* object) {
    return json{{"id", job.id}, {"object", object}, {"created", job.created}, {"model", job.model}};
}

// Tool calls of a finished chat choice (nullopt: none, the text is the content).
std::optional<ParsedToolCalls> tool_calls_of(const Job& job, const Choice& c, size_t index) {
    if (!job.tools)
        return std::nullopt;
    return parse_tool_calls(c.text, job.id.substr(job.id.size() - 8) + std::to_string(index) + "_");
}

// Past the deadline: cancel, and end every unfinished choice with an abort event.
void expire_if_late(Job& job, std::vector<StreamEvent>& events) {
    if (!job.deadline || std::chrono::steady_clock::now() < *job.deadline)
        return;
    job.backend->cancel(job.stream);
    for (size_t i = 0; i < job.choices.size(); ++i)
        if (!job.choices[i].finished) {
            StreamEvent e;
            e.index = static_cast<int32_t>(i);
            e.output.finished = true;
            e.output.finish = FinishReason::Aborted;
            events.push_back(std::move(e));
        }
}

// For the request log: the tokens so far and the distinct finish reasons (`gone`: the client
// went away, its unfinished choices were aborted).
void record_usage(const Job& job, bool gone = false) {
    GenerationUsage& u = current_usage();
    u.prompt_tokens = static_cast<int64_t>(job.prompt.size());
    u.completion_tokens = job.completion_tokens();
    u.finish_reason.clear();
    for (const Choice& c : job.choices) {
        const json r = finish_reason_json(c.finished, c.finish);
        const std::string name = r.is_string() ? r.get<std::string>()
                                 : gone        ? std::string("abort")
                                               : std::string("unfinished");
        if (("," + u.finish_reason + ",").find("," + name + ",") == std::string::npos)
            u.finish_reason += (u.finish_reason.empty() ? "" : ",") + name;
    }
}

json whole_response(const Job& job, const std::vector<std::vector<SampledToken>>& lps) {
    const Tokenizer& tok = *job.served->tokenizer;
    json out = base_object(job, job.chat ? "chat.completion" : "text_completion");
    json choices = json::array();
    for (size_t i = 0; i < job.choices.size(); ++i) {
        const Choice& c = job.choices[i];
        json ch{{"index", i}};
        if (job.chat) {
            json msg{{"role", "assistant"}, {"content", c.text}};
            json finish = finish_reason_json(true, c.finish);
            if (auto calls = tool_calls_of(job, c, i)) {
                msg["content"] = calls->content.empty() ? json(nullptr) : json(calls->content);
                msg["tool_calls"] = calls->tool_calls;
                finish = "tool_calls";
            }
            ch["message"] = msg;
            ch["logprobs"] = job.logprobs
                                 ? json{{"content", chat_logprobs_content(tok, lps[i], job.top_n)}}
                                 : json(nullptr);
            ch["finish_reason"] = finish;
        } else {
            ch["text"] = c.text;
            int64_t offset = 0;
            ch["logprobs"] =
                job.logprobs ? completion_logprobs(tok, lps[i], job.top_n, offset) : json(nullptr);
            ch["finish_reason"] = finish_reason_json(true, c.finish);
        }
        choices.push_back(std::move(ch));
    }
    out["choices"] = std::move(choices);
    out["usage"] = usage_json(static_cast<int64_t>(job.prompt.size()), job.completion_tokens());
    return out;
}

// best_of: of the sampled sequences, the n with the highest cumulative logprob, best first
// (equal sums keep the sample order), as OpenAI's and vLLM's completions return them. The others
// are dropped before the response and its usage (vLLM counts the returned outputs' tokens).
void keep_best(Job& job, std::vector<std::vector<SampledToken>>& lps) {
    std::vector<double> sum(job.choices.size(), 0.0);
    for (size_t i = 0; i < lps.size(); ++i)
        for (const SampledToken& t : lps[i])
            sum[i] += static_cast<double>(t.logprob);
    std::vector<size_t> order(job.choices.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return sum[a] > sum[b]; });
    order.resize(static_cast<size_t>(job.common.n));
    std::vector<Choice> choices;
    std::vector<std::vector<SampledToken>> kept;
    for (size_t i : order) {
        choices.push_back(std::move(job.choices[i]));
        kept.push_back(job.logprobs ? std::move(lps[i]) : std::vector<SampledToken>{});
    }
    job.choices = std::move(choices);
    lps = std::move(kept);
}

void run_whole(Job& job, httplib::Response& res) {
    std::vector<std::vector<SampledToken>> lps(job.choices.size());
    std::vector<StreamEvent> events;
    size_t finished = 0;
    while (finished < job.choices.size()) {
        events.clear();
        job.stream->wait_events(events, 200ms);
        expire_if_late(job, events);
        for (StreamEvent& e : events) {
            Choice& c = job.choices[static_cast<size_t>(e.index)];
            RequestOutput& o = e.output;
            c.text += o.text;
            c.ids.insert(c.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
            for (SampledToken& t : o.logprobs)
                lps[static_cast<size_t>(e.index)].push_back(std::move(t));
            if (o.finished && !c.finished) {
                c.finished = true;
                c.finish = o.finish;
                ++finished;
            }
        }
    }
    if (job.common.best_of > job.common.n)
        keep_best(job, lps);
    record_usage(job);
    send_json(res, 200, whole_response(job, lps));
}

std::string sse(const json& j) {
    return "data: " + dump(j) + "\n\n";
}

// The chunks of one event (may be none: nothing new to show).
void chunks_of(Job& job, StreamEvent& e, std::vector<std::string>& out) {
    const Tokenizer& tok = *job.served->tokenizer;
    const auto index = static_cast<size_t>(e.index);
    Choice& c = job.choices[index];
    RequestOutput& o = e.output;
    c.ids.insert(c.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
    const bool finishing = o.finished && !c.finished;
    if (o.finished) {
        c.finished = true;
        c.finish = o.finish;
    }
    auto wrap = [&](json choice) {
        json chunk = base_object(job, job.chat ? "chat.completion.chunk" : "text_completion");
        chunk["choices"] = json::array({std::move(choice)});
        if (job.common.include_usage)
            chunk["usage"] = nullptr;
        out.push_back(sse(chunk));
    };
    if (!job.chat) {
        if (o.text.empty() && o.logprobs.empty() && !finishing)
            return;
        json ch{{"index", index}, {"text", o.text}};
        ch["logprobs"] = job.logprobs
                             ? completion_logprobs(tok, o.logprobs, job.top_n, c.text_offset)
                             : json(nullptr);
        ch["finish_reason"] = finish_reason_json(finishing, c.finish);
        c.text += o.text;
        wrap(std::move(ch));
        return;
    }
    if (!c.role_sent) {
        c.role_sent = true;
        wrap(json{{"index", index},
                  {"delta", {{"role", "assistant"}, {"content", ""}}},
                  {"logprobs", nullptr},
                  {"finish_reason", nullptr}});
    }
    c.text += o.text;
    json delta = json::object();
    json finish = finish_reason_json(finishing, c.finish);
    if (job.tools) { // the whole text decides between content and tool calls: sent at the end
        if (finishing) {
            if (auto calls = tool_calls_of(job, c, index)) {
                if (!calls->content.empty())
                    delta["content"] = calls->content;
                json tc = json::array();
                for (size_t k = 0; k < calls->tool_calls.size(); ++k) {
                    json call = calls->tool_calls[k];
                    call["index"] = k;
                    tc.push_back(std::move(call));
                }
                delta["tool_calls"] = std::move(tc);
                finish = "tool_calls";
            } else if (!c.text.empty()) {
                delta["content"] = c.text;
            }
        }
    } else if (!o.text.empty()) {
        delta["content"] = o.text;
    }
    if (delta.empty() && o.logprobs.empty() && !finishing)
        return;
    json ch{{"index", index}, {"delta", std::move(delta)}};
    ch["logprobs"] = job.logprobs && !o.logprobs.empty()
                         ? json{{"content", chat_logprobs_content(tok, o.logprobs, job.top_n)}}
                         : json(nullptr);
    ch["finish_reason"] = finish;
    wrap(std::move(ch));
}

void run_stream(std::shared_ptr<Job> job, httplib::Response& res) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [job](size_t, httplib::DataSink& sink) {
        std::vector<StreamEvent> events;
        std::vector<std::string> chunks;
        auto finished = [&] {
            for (const Choice& c : job->choices)
                if (!c.finished)
                    return false;
            return true;
        };
        while (!finished()) {
            events.clear();
            chunks.clear();
            job->stream->wait_events(events, 100ms);
            if (!sink.is_writable()) {
                job->backend->cancel(job->stream);
                record_usage(*job, true);
                return false;
            }
            expire_if_late(*job, events);
            for (StreamEvent& e : events)
                chunks_of(*job, e, chunks);
            for (const std::string& s : chunks)
                if (!sink.write(s.data(), s.size())) { // the client went away
                    job->backend->cancel(job->stream);
                    record_usage(*job, true);
                    return false;
                }
        }
        record_usage(*job);
        std::string tail;
        if (job->common.include_usage) {
            json chunk = base_object(*job, job->chat ? "chat.completion.chunk" : "text_completion");
            chunk["choices"] = json::array();
            chunk["usage"] =
                usage_json(static_cast<int64_t>(job->prompt.size()), job->completion_tokens());
            tail += sse(chunk);
        }
        tail += "data: [DONE]\n\n";
        if (!sink.write(tail.data(), tail.size()))
            return false;
        sink.done();
        return true;
    });
}

} // namespace

std::variant<std::string, ApiError> render_chat_prompt(const ServedModel& model,
                                                       const json& messages, const json& tools,
                                                       bool add_generation_prompt,
                                                       std::optional<bool> enable_thinking) {
    if (!model.chat_template)
        return bad_param("messages", model.chat_template_error);
    ChatRenderOptions opts;
    opts.add_generation_prompt = add_generation_prompt;
    opts.enable_thinking = enable_thinking;
    opts.tools = tools;
    const Tokenizer& tok = *model.tokenizer;
    if (tok.valid_id(tok.bos_id()))
        opts.bos_token = tok.token_text(tok.bos_id());
    if (tok.valid_id(tok.eos_id()))
        opts.eos_token = tok.token_text(tok.eos_id());
    auto text = render_chat(*model.chat_template, messages, opts);
    if (!text)
        return bad_param("messages", "chat template: " + text.message());
    return std::move(text.value());
}

void handle_generation(ServingBackend& backend, const httplib::Request& req, httplib::Response& res,
                       bool chat, int timeout_s) {
    auto body = parse_json_body(req.body);
    if (auto* e = std::get_if<ApiError>(&body))
        return send_error(res, *e);
    const json& j = std::get<json>(body);
    const ServedModel& model = backend.model();
    const Tokenizer& tok = *model.tokenizer;
    auto job = std::make_shared<Job>();
    job->chat = chat;
    job->backend = &backend;
    job->served = &model;
    job->model = model.name;
    job->created = static_cast<int64_t>(std::time(nullptr));
    job->id = make_response_id(chat ? "chatcmpl-" : "cmpl-");
    std::string prompt_param = chat ? "messages" : "prompt";
    if (chat) {
        auto r = parse_chat_request(j);
        if (auto* e = std::get_if<ApiError>(&r))
            return send_error(res, *e);
        ChatRequest& c = std::get<ChatRequest>(r);
        if (auto e = check_model(backend, c.model))
            return send_error(res, *e);
        auto text = render_chat_prompt(model, c.messages, c.tools, c.add_generation_prompt,
                                       c.enable_thinking);
        if (auto* e = std::get_if<ApiError>(&text))
            return send_error(res, *e);
        job->prompt = tok.encode(std::get<std::string>(text), false);
        job->logprobs = c.logprobs;
        job->top_n = c.top_logprobs;
        job->tools = !c.tools.is_null();
        job->common = std::move(c);
    } else {
        auto r = parse_completion_request(j);
        if (auto* e = std::get_if<ApiError>(&r))
            return send_error(res, *e);
        CompletionRequest& c = std::get<CompletionRequest>(r);
        if (auto e = check_model(backend, c.model))
            return send_error(res, *e);
        if (c.prompt_ids) {
            for (int32_t id : *c.prompt_ids)
                if (!tok.valid_id(id))
                    return send_error(
                        res, bad_param("prompt", "prompt token id " + std::to_string(id) +
                                                     " is outside the vocabulary "
                                                     "of " +
                                                     std::to_string(tok.vocab_size()) + " tokens"));
            job->prompt = std::move(*c.prompt_ids);
        } else {
            job->prompt = tok.encode(*c.prompt_text, true);
        }
        job->logprobs = c.logprobs.has_value();
        job->top_n = c.logprobs.value_or(0);
        job->common = std::move(c);
    }
    SamplingParams& params = job->common.params;
    if (job->prompt.empty())
        return send_error(res, bad_param(prompt_param, "the prompt has no tokens"));
    if (Status st = params.validate(tok.vocab_size()); !st)
        return send_error(res, bad_param("stop_token_ids", st.message()));
    auto max_tokens =
        resolve_max_tokens(params, static_cast<int64_t>(job->prompt.size()), model.max_model_len);
    if (!max_tokens)
        return send_error(res, bad_param(params.max_tokens_set
                                             ? (chat && j.contains("max_completion_tokens")
                                                    ? "max_completion_tokens"
                                                    : "max_tokens")
                                             : prompt_param,
                                         max_tokens.message()));
    Submission sub;
    sub.prompt_ids = job->prompt;
    sub.client_address = req.remote_addr;
    sub.user_agent = req.get_header_value("User-Agent");
    // best_of > n: best_of sequences, ranked at the end by their tokens' logprobs.
    const int32_t sequences = std::max(job->common.n, job->common.best_of);
    for (int32_t i = 0; i < sequences; ++i) {
        SamplingParams p = params;
        if (p.seed)
            p.seed = *p.seed + static_cast<uint64_t>(i);
        if (job->common.best_of > job->common.n)
            p.logprobs = std::max(p.logprobs, 1);
        sub.choices.push_back(std::move(p));
    }
    job->choices.resize(static_cast<size_t>(sequences));
    if (timeout_s > 0)
        job->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    SubmitRefusal refusal = SubmitRefusal::None;
    job->stream = backend.submit(std::move(sub), refusal);
    if (!job->stream) {
        ApiError e;
        if (refusal == SubmitRefusal::Overloaded) {
            e.status = 429;
            e.message = "too many requests are waiting; retry later";
            e.type = "rate_limit_error";
            res.set_header("Retry-After", "1");
        } else {
            e.status = 503;
            e.type = "service_unavailable";
            e.message = refusal == SubmitRefusal::ShuttingDown
                            ? "the server is shutting down"
                            : backend.unavailable().value_or("the model is not loaded yet");
        }
        return send_error(res, e);
    }
    std::optional<Status> admitted;
    while (!(admitted = job->stream->wait_admitted(200ms)))
        ;
    if (!*admitted)
        return send_error(res, bad_param("", admitted->message()));
    log_generation_started(req, static_cast<int64_t>(job->prompt.size()));
    if (job->common.stream)
        run_stream(job, res);
    else
        run_whole(*job, res);
}

} // namespace llmwb::server_detail
