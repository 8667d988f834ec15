// llmwb tokenize / detokenize / render-chat.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_model.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "engine/chat/chat_template.h"
#include "engine/util/json_depth.h"

namespace llmwb::cli {

int fail(const std::string& command, const std::string& message) {
    std::fprintf(stderr, "llmwb %s: %s\n", command.c_str(), message.c_str());
    return 1;
}

int cmd_tokenize(const Args& argv) {
    const char* cmd = "tokenize";
    auto args = CliArgs::parse(argv, {"model", "text", "file"}, {"json", "no-special", "help"});
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::puts(
            "llmwb tokenize --model M (--text T | --file F) [--json] [--no-special]\n"
            "  Prints the token ids of the text, comma-separated (--json: {\"ids\": [...]}).\n"
            "  Special tokens (BOS/EOS) are added as Hugging Face's tokenizer does by\n"
            "  default; --no-special leaves them out.");
        return 0;
    }
    std::string text;
    if (auto t = args->get("text")) {
        text = *t;
    } else if (auto f = args->get("file")) {
        auto content = read_text_file(*f);
        if (!content)
            return fail(cmd, content.message());
        text = std::move(content.value());
    } else {
        return fail(cmd, "give --text or --file");
    }
    auto m = open_cli_model(*args);
    if (!m)
        return fail(cmd, m.message());
    auto ids = (*m)->tokenizer->encode(text, !args->has("no-special"));
    if (args->has("json")) {
        nlohmann::json j;
        j["ids"] = ids;
        std::cout << dump_json(j) << "\n";
    } else {
        std::cout << join_ids(ids) << "\n";
    }
    return 0;
}

int cmd_detokenize(const Args& argv) {
    const char* cmd = "detokenize";
    auto args = CliArgs::parse(argv, {"model", "ids"}, {"skip-special", "json", "help"});
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::puts("llmwb detokenize --model M --ids 1,2,3 [--skip-special] [--json]\n"
                  "  Prints the text of the ids exactly (no newline is added).");
        return 0;
    }
    if (!args->has("ids"))
        return fail(cmd, "give --ids 1,2,3");
    auto ids = args->get_ids("ids");
    if (!ids)
        return fail(cmd, ids.message());
    auto m = open_cli_model(*args);
    if (!m)
        return fail(cmd, m.message());
    const Tokenizer& tok = *(*m)->tokenizer;
    for (int32_t id : *ids)
        if (!tok.valid_id(id))
            return fail(cmd, "token id " + std::to_string(id) +
                                 " is outside the vocabulary (size " +
                                 std::to_string(tok.vocab_size()) + ")");
    std::string text = tok.decode(*ids, args->has("skip-special"));
    if (args->has("json")) {
        nlohmann::json j;
        j["text"] = text;
        std::cout << dump_json(j) << "\n";
    } else {
        std::cout << text << std::flush;
    }
    return 0;
}

Result<std::string> render_chat_file(const CliModel& m, const std::string& path,
                                     bool add_generation_prompt,
                                     std::optional<bool> enable_thinking) {
    auto content = read_text_file(path);
    if (!content)
        return content.error();
    if (Status st = check_json_depth(*content, kMaxJsonDepth, path); !st)
        return st.error();
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(*content, nullptr, false);
    if (doc.is_discarded())
        return make_error(path + ": not valid JSON");
    ChatRenderOptions opts;
    nlohmann::ordered_json messages;
    if (doc.is_array()) {
        messages = doc;
    } else if (doc.is_object() && doc.contains("messages") && doc["messages"].is_array()) {
        messages = doc["messages"];
        if (doc.contains("tools"))
            opts.tools = doc["tools"];
    } else {
        return make_error(path + ": expected an array of messages or {\"messages\": [...]}");
    }
    for (size_t i = 0; i < messages.size(); ++i) {
        const auto& msg = messages[i];
        if (!msg.is_object() || !msg.contains("role") || !msg["role"].is_string())
            return make_error(path + ": message " + std::to_string(i) + " needs a string \"role\"");
    }
    if (!m.model->chat_template)
        return make_error(m.model->path + ": the model has no chat template");
    auto tpl = ChatTemplate::parse(*m.model->chat_template);
    if (!tpl)
        return make_error("chat template: " + tpl.message());
    opts.add_generation_prompt = add_generation_prompt;
    opts.enable_thinking = enable_thinking;
    const Tokenizer& tok = *m.tokenizer;
    if (tok.valid_id(tok.bos_id()))
        opts.bos_token = tok.token_text(tok.bos_id());
    if (tok.valid_id(tok.eos_id()))
        opts.eos_token = tok.token_text(tok.eos_id());
    auto out = render_chat(*tpl, messages, opts);
    if (!out)
        return make_error("chat template: " + out.message());
    return out;
}

int cmd_render_chat(const Args& argv) {
    const char* cmd = "render-chat";
    auto args = CliArgs::parse(argv, {"model", "messages", "enable-thinking"},
                               {"add-generation-prompt", "help"});
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::puts(
            "llmwb render-chat --model M --messages FILE.json [--add-generation-prompt]\n"
            "                  [--enable-thinking true|false]\n"
            "  Renders the model's chat template over the messages (a JSON array of\n"
            "  {\"role\", \"content\"} or {\"messages\": [...], \"tools\": [...]}) and prints\n"
            "  the prompt exactly as Hugging Face's apply_chat_template would.");
        return 0;
    }
    auto path = args->get("messages");
    if (!path)
        return fail(cmd, "give --messages FILE.json");
    auto thinking = args->get_bool("enable-thinking");
    if (!thinking)
        return fail(cmd, thinking.message());
    auto m = open_cli_model(*args);
    if (!m)
        return fail(cmd, m.message());
    auto text = render_chat_file(**m, *path, args->has("add-generation-prompt"), *thinking);
    if (!text)
        return fail(cmd, text.message());
    std::cout << *text << std::flush;
    return 0;
}

} // namespace llmwb::cli
