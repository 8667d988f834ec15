// A model folder's tokenizer.json + tokenizer_config.json, loaded through read_tokenizer_files as
// the Hugging Face loader does, must give a working tokenizer AND a chat template that renders
// like Jinja2 (issue 18: a DeepSeek-V3 folder failed at the tokenizer, so its template was never
// reached). The rendered prompt then tokenizes with the template's special tokens as single ids.
// A template that raises (Gemma 2 on a system message) reports the template's own message.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/chat/chat_template.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_files.h"
#include "support/mini_test.h"

using llmwb::mini_test::assets_dir;
using json = nlohmann::ordered_json;

namespace {

std::string source_dir() {
    return llmwb::mini_test::env_or("LLMWB_SOURCE_DIR", LLMWB_TEST_SOURCE_DIR);
}

json read_json(const std::string& path) {
    auto text = llmwb::mini_test::read_file(path);
    if (!text)
        return json();
    return json::parse(*text, nullptr, false);
}

std::tm fixed_now() { // the clock reference.py renders with
    std::tm tm{};
    tm.tm_year = 2024 - 1900;
    tm.tm_mon = 6;
    tm.tm_mday = 26;
    tm.tm_hour = 10;
    tm.tm_min = 30;
    tm.tm_isdst = -1;
    std::tm copy = tm;
    std::mktime(&copy);
    return copy;
}

struct FolderRow {
    std::string name;             // tokenizers/<name> and the template name in the reference
    std::vector<std::string> ids; // tokens the rendered prompt must contain as single ids
};

std::vector<FolderRow> folder_rows() {
    return {{"deepseek_v3",
             {"<\xEF\xBD\x9C"
              "User\xEF\xBD\x9C>",
              "<\xEF\xBD\x9C"
              "Assistant\xEF\xBD\x9C>"}},
            {"gemma3", {"<start_of_turn>", "<end_of_turn>"}}};
}

} // namespace

MT_TEST_TABLE(folder, FolderRow, folder_rows()) {
    const std::string dir = assets_dir() + "/tokenizers/" + row.name;
    auto files =
        llmwb::read_tokenizer_files(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
    MT_REQUIRE_MSG(files, files ? "" : files.message() + " (run scripts/fetch-test-assets.sh)");
    auto tok = llmwb::Tokenizer::create(files->data);
    MT_REQUIRE_MSG(tok, tok ? "" : tok.message());
    MT_REQUIRE(files->chat_template.has_value());
    auto tpl = llmwb::ChatTemplate::parse(*files->chat_template);
    MT_REQUIRE_MSG(tpl, tpl ? "" : tpl.message());

    const json conversations = read_json(source_dir() + "/tests/engine/chat/conversations.json");
    const json ref = read_json(assets_dir() + "/reference/chat/templates.json");
    MT_REQUIRE_MSG(conversations.is_array() && ref.is_object(),
                   "missing conversations or reference (run scripts/fetch-test-assets.sh)");
    const llmwb::Tokenizer& t = *tok.value();
    llmwb::ChatRenderOptions o;
    o.bos_token = t.token_text(t.bos_id());
    o.eos_token = t.token_text(t.eos_id());
    o.now = fixed_now();
    std::vector<std::int32_t> special_ids;
    for (const std::string& special : row.ids) {
        std::int32_t id = -1;
        for (std::int32_t i = 0; i < t.vocab_size() && id < 0; ++i) {
            if (t.token_text(i) == special)
                id = i;
        }
        MT_REQUIRE_MSG(id >= 0, special);
        special_ids.push_back(id);
    }
    int compared = 0, rendered = 0;
    for (const json& c : ref["cases"]) {
        if (c["template"] != row.name || !c["enable_thinking"].is_null())
            continue;
        const json* conv = nullptr;
        for (const json& cv : conversations) {
            if (cv["name"] == c["conversation"])
                conv = &cv;
        }
        MT_REQUIRE(conv);
        o.add_generation_prompt = c["add_generation_prompt"].get<bool>();
        o.tools = conv->contains("tools") ? (*conv)["tools"] : json();
        o.extra = conv->contains("extra") ? (*conv)["extra"] : json();
        auto r = llmwb::render_chat(tpl.value(), (*conv)["messages"], o);
        ++compared;
        if (!c.contains("expected")) {
            MT_CHECK_MSG(!r, c["conversation"].get<std::string>() + ": expected an error");
            continue;
        }
        MT_REQUIRE_MSG(r, c["conversation"].get<std::string>() + ": " + (r ? "" : r.message()));
        MT_COMPARE(*r, c["expected"].get<std::string>());
        ++rendered;
        // The prompt tokenizes with the turn markers as single ids and decodes back.
        const auto ids = t.encode(*r, false);
        MT_COMPARE(t.decode(ids), *r);
        for (std::size_t k = 0; k < row.ids.size(); ++k) {
            if (r->find(row.ids[k]) != std::string::npos)
                MT_CHECK_MSG(std::find(ids.begin(), ids.end(), special_ids[k]) != ids.end(),
                             row.ids[k]);
        }
        if (r->rfind(o.bos_token, 0) == 0)
            MT_COMPARE(ids.front(), t.bos_id());
    }
    std::printf("%s: %d reference renderings compared, %d rendered\n", row.name.c_str(), compared,
                rendered);
    MT_CHECK(compared >= 50 && rendered >= 30);
}

// raise_exception reaches the caller with the template's own words.
MT_TEST(gemma2_system_role_raises) {
    auto src =
        llmwb::mini_test::read_file(source_dir() + "/tests/engine/chat/templates/gemma2.jinja");
    MT_REQUIRE(src.has_value());
    auto tpl = llmwb::ChatTemplate::parse(*src);
    MT_REQUIRE_MSG(tpl, tpl ? "" : tpl.message());
    llmwb::ChatRenderOptions o;
    o.bos_token = "<bos>";
    const json with_system = json::parse(
        R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])");
    auto r = llmwb::render_chat(tpl.value(), with_system, o);
    MT_REQUIRE(!r);
    MT_CHECK_MSG(r.message().find("System role not supported") != std::string::npos, r.message());
    const json turns =
        json::parse(R"([{"role": "user", "content": "Hi"}, {"role": "user", "content": "Again"}])");
    auto r2 = llmwb::render_chat(tpl.value(), turns, o);
    MT_REQUIRE(!r2);
    MT_CHECK_MSG(r2.message().find("Conversation roles must alternate") != std::string::npos,
                 r2.message());
    const json ok = json::parse(R"([{"role": "user", "content": " Hi "}])");
    o.add_generation_prompt = true;
    auto r3 = llmwb::render_chat(tpl.value(), ok, o);
    MT_REQUIRE_MSG(r3, r3 ? "" : r3.message());
    MT_COMPARE(*r3,
               std::string("<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"));
}

MINI_TEST_MAIN()
