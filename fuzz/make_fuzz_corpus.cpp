// Writes the fuzzers' seed inputs, made by the project's own writers and test data:
//   gguf/, safetensors/   small models of every architecture and weight type (model writer)
//   tokenizer_json/       the tokenizer.json the model writer writes (demo tokenizer), and each
//                         given Hugging Face tokenizer cut down to its first ids (same
//                         normalizer, pre-tokenizer, decoder, added tokens; a small vocabulary)
//   chat_template/        tests/engine/chat templates and interpreter cases, and the templates
//                         of the given tokenizer_config.json files
//   chat_messages/        tests/engine/chat/conversations.json, one file per conversation
//   prompts_jsonl/        prompt lines using every SamplingParams field
//   report_files/         the report tests' three-run report (report_files), as "@@ NAME" parts
//   models/NAME.gguf      a tiny model with each given tokenizer and its chat template
// Usage: make_fuzz_corpus OUT_DIR SOURCE_ROOT [TOKENIZER_DIR...]
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "app/report/report_files.h"
#include "engine/model/model_writer.h"
#include "tests/report/report_fixture.h"

namespace {

using namespace llmwb;
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

int g_files = 0;

bool write_file(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary);
    f << bytes;
    ++g_files;
    return bool(f);
}

std::string read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

bool models(const fs::path& dir) {
    fs::create_directories(dir / "gguf");
    fs::create_directories(dir / "safetensors");
    fs::create_directories(dir / "tokenizer_json");
    int n = 0;
    for (Architecture arch : {Architecture::Llama, Architecture::Qwen2, Architecture::Qwen3}) {
        for (WeightType t : {WeightType::F32, WeightType::F16, WeightType::BF16, WeightType::Q8_0,
                             WeightType::Q4_0, WeightType::Q4_K, WeightType::Q6_K}) {
            ModelWriterSpec s;
            s.arch = arch;
            s.weight_type = t;
            s.hidden_size = 32;
            s.intermediate_size = 64;
            s.num_layers = 1;
            s.num_heads = 2;
            s.num_kv_heads = 1;
            s.vocab_size = 0;
            s.tie_word_embeddings = (n % 2) == 1;
            if (t == WeightType::Q4_K || t == WeightType::Q6_K)
                s.hidden_size = 256;
            const std::string name =
                std::string(architecture_name(arch)) + "-" + weight_type_name(t);
            Status st = write_model(s, (dir / "gguf" / (name + ".gguf")).string());
            if (!st) {
                std::fprintf(stderr, "%s\n", st.message().c_str());
                return false;
            }
            ++g_files;
            if (t == WeightType::F32 || t == WeightType::F16 || t == WeightType::BF16) {
                s.format = ModelFileFormat::Safetensors;
                const fs::path tmp = dir / ("tmp-" + name);
                st = write_model(s, tmp.string());
                if (!st) {
                    std::fprintf(stderr, "%s\n", st.message().c_str());
                    return false;
                }
                fs::rename(tmp / "model.safetensors",
                           dir / "safetensors" / (name + ".safetensors"));
                ++g_files;
                if (n == 0) {
                    fs::rename(tmp / "tokenizer.json", dir / "tokenizer_json" / "demo.json");
                    ++g_files;
                }
                fs::remove_all(tmp);
            }
            ++n;
        }
    }
    return true;
}

// A Hugging Face tokenizer.json cut down to ids below kKeep (merges whose parts and result are
// kept; added tokens renumbered after them): small enough for the fuzzer's max_len.
std::string small_tokenizer(const ojson& t) {
    constexpr int64_t kKeep = 400;
    ojson out = t;
    ojson& model = out["model"];
    std::set<std::string> kept;
    if (model.contains("vocab") && model["vocab"].is_object()) {
        ojson vocab = ojson::object();
        for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it)
            if (it.value().is_number_integer() && it.value().get<int64_t>() < kKeep) {
                vocab[it.key()] = it.value();
                kept.insert(it.key());
            }
        model["vocab"] = vocab;
    } else if (model.contains("vocab") && model["vocab"].is_array()) {
        ojson vocab = ojson::array();
        for (size_t i = 0; i < model["vocab"].size() && int64_t(i) < kKeep; ++i)
            vocab.push_back(model["vocab"][i]);
        model["vocab"] = vocab;
    }
    if (model.contains("merges") && model["merges"].is_array()) {
        ojson merges = ojson::array();
        for (const auto& m : model["merges"]) {
            std::string a, b;
            if (m.is_string()) {
                const std::string s = m.get<std::string>();
                const size_t sp = s.find(' ');
                if (sp == std::string::npos)
                    continue;
                a = s.substr(0, sp);
                b = s.substr(sp + 1);
            } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
                a = m[0].get<std::string>();
                b = m[1].get<std::string>();
            } else {
                continue;
            }
            if (kept.count(a) && kept.count(b) && kept.count(a + b))
                merges.push_back(m);
        }
        model["merges"] = merges;
    }
    if (out.contains("added_tokens") && out["added_tokens"].is_array()) {
        ojson added = ojson::array();
        int64_t next = kKeep;
        for (auto a : out["added_tokens"]) {
            if (added.size() >= 24)
                break;
            if (a.contains("id") && a["id"].is_number_integer() && a["id"].get<int64_t>() >= kKeep)
                a["id"] = next++;
            added.push_back(a);
        }
        out["added_tokens"] = added;
    }
    return out.dump(1);
}

bool tokenizers_and_templates(const fs::path& dir, const fs::path& root, int argc, char** argv) {
    fs::create_directories(dir / "chat_template");
    for (const auto& e : fs::directory_iterator(root / "tests/engine/chat/templates"))
        write_file(dir / "chat_template" / e.path().filename(), read_file(e.path()));
    const ojson cases =
        ojson::parse(read_file(root / "tests/engine/chat/interpreter_cases.json"), nullptr, false);
    if (cases.is_array()) {
        int k = 0;
        for (const auto& c : cases)
            if (c.contains("template") && c["template"].is_string())
                write_file(dir / "chat_template" / ("case-" + std::to_string(k++) + ".jinja"),
                           c["template"].get<std::string>());
    }
    for (int i = 3; i < argc; ++i) {
        const fs::path tdir = argv[i];
        const std::string name = tdir.filename().string();
        const ojson tok = ojson::parse(read_file(tdir / "tokenizer.json"), nullptr, false);
        if (tok.is_object())
            write_file(dir / "tokenizer_json" / (name + ".json"), small_tokenizer(tok));
        const ojson cfg = ojson::parse(read_file(tdir / "tokenizer_config.json"), nullptr, false);
        if (!cfg.is_object() || !cfg.contains("chat_template"))
            continue;
        const ojson& ct = cfg["chat_template"];
        if (ct.is_string()) {
            write_file(dir / "chat_template" / (name + ".jinja"), ct.get<std::string>());
            // A model carrying this tokenizer and template (the messages fuzzer renders with it).
            ModelWriterSpec s;
            s.arch = Architecture::Qwen3;
            s.weight_type = WeightType::F16;
            s.hidden_size = 32;
            s.intermediate_size = 64;
            s.num_layers = 1;
            s.num_heads = 2;
            s.num_kv_heads = 1;
            s.tokenizer_dir = tdir.string();
            fs::create_directories(dir / "models");
            if (Status st = write_model(s, (dir / "models" / (name + ".gguf")).string()); !st) {
                std::fprintf(stderr, "%s\n", st.message().c_str());
                return false;
            }
        } else if (ct.is_array()) {
            int k = 0;
            for (const auto& t : ct)
                if (t.contains("template") && t["template"].is_string())
                    write_file(dir / "chat_template" /
                                   (name + "-" + std::to_string(k++) + ".jinja"),
                               t["template"].get<std::string>());
        }
    }
    return true;
}

bool messages(const fs::path& dir, const fs::path& root) {
    fs::create_directories(dir / "chat_messages");
    const ojson convs =
        ojson::parse(read_file(root / "tests/engine/chat/conversations.json"), nullptr, false);
    if (!convs.is_array()) {
        std::fprintf(stderr, "conversations.json: not readable\n");
        return false;
    }
    int k = 0;
    for (const auto& c : convs) {
        if (!c.contains("messages"))
            continue;
        ojson doc;
        if (c.contains("tools")) {
            doc["messages"] = c["messages"];
            doc["tools"] = c["tools"];
        } else {
            doc = c["messages"]; // the plain array form
        }
        write_file(dir / "chat_messages" / ("conv-" + std::to_string(k++) + ".json"), doc.dump(1));
    }
    return true;
}

bool prompts(const fs::path& dir) {
    fs::create_directories(dir / "prompts_jsonl");
    write_file(dir / "prompts_jsonl" / "plain.jsonl",
               "{\"prompt\": \"Hello\"}\n{\"prompt\": \"你好\", \"max_tokens\": 8}\n\n"
               "{\"ids\": [1, 2, 3], \"temperature\": 0}\n");
    write_file(dir / "prompts_jsonl" / "all_fields.jsonl",
               "\xEF\xBB\xBF{\"prompt\": \"a\", \"max_tokens\": 16, \"temperature\": 0.7, "
               "\"top_p\": 0.9, \"top_k\": 40, \"min_p\": 0.05, \"seed\": 7, \"stop\": [\"\\n\", "
               "\"END\"], \"stop_token_ids\": [2], \"ignore_eos\": true, "
               "\"repetition_penalty\": 1.1, \"presence_penalty\": 0.5, "
               "\"frequency_penalty\": -0.5, \"logprobs\": 3}\r\n"
               "{\"ids\": [5], \"max_tokens\": 16.0}\r\n");
    write_file(dir / "prompts_jsonl" / "errors.jsonl",
               "{\"prompt\": \"x\", \"max_tokenz\": 1}\n[1]\n{\"prompt\": 3}\n{\"ids\": [-1]}\n"
               "{\"prompt\": \"x\", \"top_p\": 1e300}\nnot json\n");
    return true;
}

bool reports(const fs::path& dir) {
    fs::create_directories(dir / "report_files");
    BenchReport rep = report_test::make_report();
    for (int variant = 0; variant < 2; ++variant) {
        if (variant == 1)
            rep.runs.resize(1); // a one-run report: results.json is a plain JSON file
        std::string out;
        for (const auto& [name, bytes] : report_files(rep)) {
            if (name == "report.html")
                continue;
            out += "@@ " + name + "\n" + bytes;
            if (!bytes.empty() && bytes.back() != '\n')
                out += "\n";
        }
        write_file(dir / "report_files" / ("report-" + std::to_string(variant) + ".txt"), out);
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: make_fuzz_corpus OUT_DIR SOURCE_ROOT [TOKENIZER_DIR...]\n");
        return 2;
    }
    const fs::path dir = argv[1];
    const fs::path root = argv[2];
    if (!models(dir) || !tokenizers_and_templates(dir, root, argc, argv) || !messages(dir, root) ||
        !prompts(dir) || !reports(dir))
        return 1;
    std::printf("wrote %d seed files into %s\n", g_files, dir.c_str());
    return 0;
}
