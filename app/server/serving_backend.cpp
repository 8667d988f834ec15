#include "app/server/serving_backend.h"

namespace llmwb {

void set_chat_template(ServedModel& model, const std::optional<std::string>& source) {
    model.chat_template.reset();
    if (!source) {
        model.chat_template_error = "the model has no chat template";
        return;
    }
    auto tpl = ChatTemplate::parse(*source);
    if (!tpl) {
        model.chat_template_error = "chat template: " + tpl.message();
        return;
    }
    model.chat_template = std::make_shared<const ChatTemplate>(std::move(tpl.value()));
    model.chat_template_error.clear();
}

void RequestStream::admit() {
    {
        std::lock_guard lk(mu_);
        decided_ = true;
    }
    cv_.notify_all();
}

void RequestStream::refuse(std::string message) {
    {
        std::lock_guard lk(mu_);
        decided_ = true;
        refused_ = message.empty() ? "the request was refused" : std::move(message);
    }
    cv_.notify_all();
}

void RequestStream::push(int32_t index, RequestOutput&& output) {
    {
        std::lock_guard lk(mu_);
        if (output.finished)
            ++finished_;
        events_.push_back(StreamEvent{index, std::move(output)});
    }
    cv_.notify_all();
}

std::optional<Status> RequestStream::wait_admitted(std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    if (!cv_.wait_for(lk, timeout, [&] { return decided_; }))
        return std::nullopt;
    if (!refused_.empty())
        return Status(make_error(refused_));
    return ok_status();
}

bool RequestStream::wait_events(std::vector<StreamEvent>& out, std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    if (!cv_.wait_for(lk, timeout, [&] { return !events_.empty(); }))
        return false;
    for (StreamEvent& e : events_)
        out.push_back(std::move(e));
    events_.clear();
    return true;
}

bool RequestStream::all_finished() const {
    std::lock_guard lk(mu_);
    return finished_ >= n_;
}

} // namespace llmwb
