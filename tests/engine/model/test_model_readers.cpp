// The readers on their own: every truncation and many random corruptions of valid files are
// rejected (or parsed) without crashing; sharded safetensors folders; the demo tokenizer and
// the demo model.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "engine/model/demo_model.h"
#include "engine/model/demo_tokenizer.h"
#include "engine/model/gguf_file.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/model/safetensors_file.h"
#include "engine/model/safetensors_writer.h"
#include "support/mini_test.h"

using namespace llmwb;
namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

std::span<const uint8_t> span_of(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

ModelWriterSpec tiny_spec() {
    ModelWriterSpec s;
    s.arch = Architecture::Qwen3;
    s.hidden_size = 32;
    s.intermediate_size = 64;
    s.num_layers = 1;
    s.num_heads = 2;
    s.num_kv_heads = 1;
    s.weight_type = WeightType::Q8_0;
    return s;
}

bool one_line(const std::string& m) {
    return !m.empty() && m.find('\n') == std::string::npos;
}

// One directory for the whole executable (the fixture's QTemporaryDir).
const mini_test::TempDir& dir() {
    static const mini_test::TempDir d;
    return d;
}

} // namespace

MT_TEST(everyGgufTruncationIsAnError) {
    MT_REQUIRE(dir().valid());
    const std::string p = dir().file("t.gguf");
    MT_REQUIRE(write_model(tiny_spec(), p).ok());
    const std::string bytes = read_file(p);
    MT_REQUIRE(GgufFile::parse(span_of(bytes), "t").ok());
    // Every prefix up to the data section, then a stride through the data.
    auto full = GgufFile::parse(span_of(bytes), "t");
    const size_t data_start = size_t(full->data_offset);
    for (size_t n = 0; n < bytes.size(); n += (n < data_start ? 1 : 61)) {
        std::string cut = bytes.substr(0, n);
        auto r = GgufFile::parse(span_of(cut), "cut");
        MT_REQUIRE_MSG(!r.ok(), "prefix %zu parsed", n);
        MT_CHECK(one_line(r.message()));
    }
}

MT_TEST(randomGgufCorruptionsNeverCrash) {
    MT_REQUIRE(dir().valid());
    const std::string p = dir().file("c.gguf");
    MT_REQUIRE(write_model(tiny_spec(), p).ok());
    const std::string bytes = read_file(p);
    auto full = GgufFile::parse(span_of(bytes), "c");
    MT_REQUIRE(full.ok());
    const size_t header = size_t(full->data_offset);
    uint64_t state = 42;
    auto next = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 33;
    };
    int rejected = 0;
    for (int i = 0; i < 3000; ++i) {
        std::string b = bytes;
        const int flips = 1 + int(next() % 4);
        for (int k = 0; k < flips; ++k)
            b[next() % header] = char(next());
        auto r = GgufFile::parse(span_of(b), "c");
        if (!r.ok()) {
            ++rejected;
            MT_CHECK_MSG(one_line(r.message()), "corruption %d", i);
        }
    }
    MT_CHECK(rejected > 100);
}

MT_TEST(everySafetensorsTruncationIsAnError) {
    MT_REQUIRE(dir().valid());
    ModelWriterSpec s = tiny_spec();
    s.format = ModelFileFormat::Safetensors;
    s.weight_type = WeightType::BF16;
    const std::string d = dir().file("st");
    MT_REQUIRE(write_model(s, d).ok());
    const std::string bytes = read_file(d + "/model.safetensors");
    MT_REQUIRE(SafetensorsFile::parse(span_of(bytes), "st").ok());
    for (size_t n = 0; n < bytes.size(); n += 7) {
        std::string cut = bytes.substr(0, n);
        auto r = SafetensorsFile::parse(span_of(cut), "cut");
        MT_REQUIRE_MSG(!r.ok(), "prefix %zu parsed", n);
        MT_CHECK(one_line(r.message()));
    }
}

// A folder whose tensors are split over two shards + index.json loads the same weights.
MT_TEST(shardedSafetensors) {
    MT_REQUIRE(dir().valid());
    ModelWriterSpec s = tiny_spec();
    s.format = ModelFileFormat::Safetensors;
    s.weight_type = WeightType::F32;
    const std::string single = dir().file("single");
    const std::string sharded = dir().file("sharded");
    MT_REQUIRE(write_model(s, single).ok());
    fs::create_directories(sharded);
    for (const char* f : {"config.json", "tokenizer.json", "tokenizer_config.json"}) {
        fs::copy_file(single + "/" + f, sharded + "/" + f);
    }
    auto src = SafetensorsFile::open(single + "/model.safetensors");
    MT_REQUIRE(src.ok());
    const auto& ts = src->tensors;
    std::string index = "{\"metadata\": {}, \"weight_map\": {";
    for (int shard = 0; shard < 2; ++shard) {
        SafetensorsWriter w;
        const std::string name = "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
        for (size_t i = shard; i < ts.size(); i += 2)
            w.add_tensor(ts[i].name, ts[i].type, ts[i].shape);
        MT_REQUIRE(w.begin(sharded + "/" + name, {}).ok());
        for (size_t i = shard; i < ts.size(); i += 2) {
            MT_REQUIRE(w.append(ts[i].data, size_t(ts[i].bytes)).ok());
            index += (index.back() == '{' ? "\"" : ", \"") + ts[i].name + "\": \"" + name + "\"";
        }
        MT_REQUIRE(w.finish().ok());
    }
    index += "}}";
    std::ofstream(sharded + "/model.safetensors.index.json") << index;
    auto a = load_model(single);
    auto b = load_model(sharded);
    MT_REQUIRE_MSG(a.ok(), a.ok() ? "" : a.message());
    MT_REQUIRE_MSG(b.ok(), b.ok() ? "" : b.message());
    MT_COMPARE(b.value()->mappings.size(), size_t(2));
    const TensorView& x = a.value()->weights.layers[0].w_down;
    const TensorView& y = b.value()->weights.layers[0].w_down;
    MT_COMPARE(std::memcmp(x.data, y.data, size_t(x.rows * x.row_bytes())), 0);
    MT_COMPARE(a.value()->weight_bytes, b.value()->weight_bytes);
}

MT_TEST(demoTokenizer) {
    TokenizerFiles a = make_demo_tokenizer();
    TokenizerFiles b = make_demo_tokenizer();
    MT_COMPARE(a.data.tokens, b.data.tokens); // deterministic
    MT_COMPARE(a.data.merges, b.data.merges);
    MT_CHECK(a.data.merges.size() >= 200);
    std::set<std::string> merged;
    for (const auto& [x, y] : a.data.merges)
        merged.insert(x + y);
    MT_COMPARE(a.data.tokens.size(), 256 + merged.size() + 3);
    std::set<std::string> unique(a.data.tokens.begin(), a.data.tokens.end());
    MT_REQUIRE_COMPARE(unique.size(), a.data.tokens.size());
    MT_COMPARE(a.data.tokens[size_t('a')], std::string("a"));
    MT_COMPARE(a.data.tokens[size_t(' ')], std::string("\xC4\xA0")); // GPT-2 "Ġ"
    MT_COMPARE(a.data.tokens[size_t(a.data.eos_id)], std::string("<|im_end|>"));
    MT_COMPARE(a.data.added_tokens.size(), size_t(3));
    for (const auto& t : a.data.added_tokens)
        MT_CHECK(t.special);
    MT_COMPARE(a.data.pre_tokenizer, std::string("qwen2"));
    MT_CHECK(a.chat_template &&
             a.chat_template->find("add_generation_prompt") != std::string::npos);
    // Common words were learned as single tokens.
    MT_CHECK(unique.count("\xC4\xA0the"));
    MT_CHECK(unique.count("\xC4\xA0model"));
}

// The tokenizer.json written for the demo tokenizer reads back as the same tokenizer.
MT_TEST(demoTokenizerFilesReadBack) {
    MT_REQUIRE(dir().valid());
    TokenizerFiles a = make_demo_tokenizer();
    const std::string tj = dir().file("tokenizer.json");
    const std::string tc = dir().file("tokenizer_config.json");
    std::ofstream(tj) << tokenizer_json_text(a.data);
    std::ofstream(tc) << tokenizer_config_json_text(a.data, a.chat_template);
    auto r = read_tokenizer_files(tj, tc);
    MT_REQUIRE_MSG(r.ok(), r.ok() ? "" : r.message());
    MT_COMPARE(r->data.merges, a.data.merges);
    MT_COMPARE(r->data.eos_id, a.data.eos_id);
    MT_COMPARE(r->chat_template, a.chat_template);
    for (size_t i = 0; i < r->data.tokens.size() && i < 256 + a.data.merges.size(); ++i) {
        MT_COMPARE(r->data.tokens[i], a.data.tokens[i]);
    }
    MT_COMPARE(r->data.added_tokens.size(), size_t(3));
}

MT_TEST(demoModel) {
    MT_REQUIRE(dir().valid());
    const std::string d = dir().file("demo");
    auto p = ensure_demo_model(d);
    MT_REQUIRE_MSG(p.ok(), p.ok() ? "" : p.message());
    MT_CHECK(p.value().find(kDemoModelFileName) != std::string::npos);
    auto m = load_model(p.value());
    MT_REQUIRE(m.ok());
    MT_COMPARE(m.value()->name, std::string(kDemoModelName));
    MT_COMPARE(m.value()->config.arch, Architecture::Qwen2);
    MT_CHECK(m.value()->chat_template.has_value());
    MT_COMPARE(m.value()->tokenizer.tokens[size_t(m.value()->tokenizer.eos_id)],
               std::string("<|im_end|>"));
    // Reused when it loads (not rewritten) ...
    const auto t0 = fs::last_write_time(p.value());
    auto again = ensure_demo_model(d);
    MT_REQUIRE(again.ok());
    MT_COMPARE(fs::last_write_time(again.value()), t0);
    // ... rewritten when broken; no temp files are left behind.
    std::ofstream(p.value(), std::ios::trunc) << "broken";
    auto fixed = ensure_demo_model(d);
    MT_REQUIRE(fixed.ok());
    MT_CHECK(load_model(fixed.value()).ok());
    int files = 0;
    for (auto& e : fs::directory_iterator(d)) {
        (void)e;
        ++files;
    }
    MT_COMPARE(files, 1);
}

MINI_TEST_MAIN()
