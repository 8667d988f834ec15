// Table-driven broken-file test: start from a valid written model (GGUF file or safetensors
// folder), corrupt one thing per row, and require load_model() to return an Error whose
// message is one line and names the reason (a keyword per row) -- and not to crash (these
// tests also run under ASan + UBSan).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "gguf_image.h"
#include "support/mini_test.h"

using namespace llmwb;
namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_file(const std::string& p, const std::string& s) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << s;
}

ModelWriterSpec base_spec() {
    ModelWriterSpec s;
    s.arch = Architecture::Qwen2;
    s.hidden_size = 64;
    s.intermediate_size = 128;
    s.num_layers = 2;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.seed = 7;
    return s;
}

using GgufEdit = std::function<void(GgufImage&)>;
using RawEdit = std::function<void(std::string&)>;
using FolderEdit = std::function<void(const std::string& dir)>;

struct GgufCase {
    const char* name;
    GgufEdit edit; // applied to the parsed image (then serialized), or
    RawEdit raw;   // applied to the file bytes
    const char* keyword;
};

uint32_t type_of(GgufImage& img, const char* tensor) {
    return img.tensor(tensor)->type;
}

const std::vector<GgufCase>& gguf_cases() {
    static const std::vector<GgufCase> cases = {
        {"bad magic", nullptr, [](std::string& b) { b[0] = 'X'; }, "magic"},
        {"bad version", [](GgufImage& i) { i.version = 7; }, nullptr, "version"},
        {"version 1", [](GgufImage& i) { i.version = 1; }, nullptr, "version"},
        {"empty file", nullptr, [](std::string& b) { b.clear(); }, "magic"},
        {"truncated header", nullptr, [](std::string& b) { b.resize(20); }, "truncated"},
        {"truncated metadata", nullptr, [](std::string& b) { b.resize(b.size() / 50); },
         "truncated"},
        {"truncated data", nullptr, [](std::string& b) { b.resize(b.size() - 100); }, "outside"},
        {"huge n_tensors", [](GgufImage& i) { i.n_tensors_override = uint64_t(1) << 60; }, nullptr,
         "tensor count"},
        {"huge n_kv", [](GgufImage& i) { i.n_kv_override = ~uint64_t(0); }, nullptr,
         "key/value count"},
        {"huge string length",
         [](GgufImage& i) {
             i.kv("general.name")->encoded = GgufImage::u64(uint64_t(1) << 62) + "x";
         },
         nullptr, "length"},
        {"string length beyond file",
         [](GgufImage& i) { i.kv("general.name")->encoded = GgufImage::u64(1u << 29) + "x"; },
         nullptr, "length"},
        {"huge array length",
         [](GgufImage& i) {
             auto* kv = i.kv("tokenizer.ggml.tokens");
             kv->encoded =
                 GgufImage::u32(8) + GgufImage::u64(uint64_t(1) << 58) + kv->encoded.substr(12);
         },
         nullptr, "array"},
        {"huge numeric array length",
         [](GgufImage& i) {
             auto* kv = i.kv("tokenizer.ggml.token_type");
             kv->encoded =
                 GgufImage::u32(5) + GgufImage::u64(~uint64_t(0) / 2) + kv->encoded.substr(12);
         },
         nullptr, "array"},
        {"nested array",
         [](GgufImage& i) {
             i.kvs.push_back({"x.nested", 9,
                              GgufImage::u32(9) + GgufImage::u64(1) + GgufImage::u32(4) +
                                  GgufImage::u64(1) + GgufImage::u32(1)});
         },
         nullptr, "nested"},
        {"unknown value type",
         [](GgufImage& i) {
             i.kvs.push_back({"x.bad", 77, "abcd"});
         },
         nullptr, "value type"},
        {"overflowing dimensions",
         [](GgufImage& i) {
             i.tensor("blk.0.ffn_up.weight")->ne = {uint64_t(1) << 40, uint64_t(1) << 40};
         },
         nullptr, "overflow"},
        {"dimension above int64",
         [](GgufImage& i) {
             i.tensor("blk.0.ffn_up.weight")->ne = {64, ~uint64_t(0)};
         },
         nullptr, "overflow"},
        {"n_dims > 4",
         [](GgufImage& i) {
             i.tensor("blk.0.ffn_up.weight")->ne = {64, 2, 2, 2, 16};
         },
         nullptr, "n_dims"},
        {"zero dim",
         [](GgufImage& i) {
             i.tensor("blk.0.ffn_up.weight")->ne = {64, 0};
         },
         nullptr, "zero dimension"},
        {"row not a block multiple",
         [](GgufImage& i) {
             auto* t = i.tensor("blk.0.ffn_up.weight");
             t->type = 8; // Q8_0 with 64 x 128 -> make the row 48 long
             t->ne = {48, 128};
         },
         nullptr, "block size"},
        {"bad alignment",
         [](GgufImage& i) {
             i.kvs.push_back({"general.alignment", 4, GgufImage::u32(24)});
         },
         nullptr, "alignment"},
        {"zero alignment",
         [](GgufImage& i) {
             i.kvs.push_back({"general.alignment", 4, GgufImage::u32(0)});
         },
         nullptr, "alignment"},
        {"misaligned offset", [](GgufImage& i) { i.tensor("blk.0.ffn_up.weight")->offset += 4; },
         nullptr, "aligned"},
        {"offset outside file",
         [](GgufImage& i) { i.tensor("blk.0.ffn_up.weight")->offset = uint64_t(1) << 40; }, nullptr,
         "outside"},
        {"offset overflows",
         [](GgufImage& i) { i.tensor("blk.0.ffn_up.weight")->offset = ~uint64_t(31); }, nullptr,
         "outside"},
        {"overlapping tensors",
         [](GgufImage& i) {
             i.tensor("blk.0.ffn_up.weight")->offset = i.tensor("blk.0.ffn_gate.weight")->offset;
         },
         nullptr, "overlap"},
        {"duplicate key", [](GgufImage& i) { i.kvs.push_back(*i.kv("general.architecture")); },
         nullptr, "duplicate key"},
        {"duplicate tensor",
         [](GgufImage& i) { i.tensor("blk.0.ffn_up.weight")->name = "blk.0.ffn_gate.weight"; },
         nullptr, "duplicate tensor"},
        {"unsupported tensor type",
         [](GgufImage& i) { i.tensor("blk.1.attn_k.weight")->type = 16; }, nullptr,
         "tensor 'blk.1.attn_k.weight': unsupported tensor type id 16 (IQ2_XXS)"},
        {"unknown tensor type id", [](GgufImage& i) { i.tensor("output_norm.weight")->type = 999; },
         nullptr, "unsupported tensor type"},
        {"missing tensor", [](GgufImage& i) { i.remove_tensor("blk.1.ffn_up.weight"); }, nullptr,
         "missing tensor blk.1.ffn_up.weight"},
        {"shape mismatch with config",
         [](GgufImage& i) {
             i.tensor("blk.0.ffn_up.weight")->ne = {128, 64};
         },
         nullptr, "blk.0.ffn_up.weight: shape [64, 128], expected [128, 64]"},
        {"config disagrees with tensors",
         [](GgufImage& i) { i.kv("qwen2.feed_forward_length")->encoded = GgufImage::u32(96); },
         nullptr, "shape mismatch"},
        {"missing config key", [](GgufImage& i) { i.remove_kv("qwen2.block_count"); }, nullptr,
         "missing key qwen2.block_count"},
        {"zero head count",
         [](GgufImage& i) { i.kv("qwen2.attention.head_count")->encoded = GgufImage::u32(0); },
         nullptr, "head_count"},
        {"unsupported architecture",
         [](GgufImage& i) { i.kv("general.architecture")->encoded = GgufImage::str("gpt9"); },
         nullptr, "unsupported architecture"},
        {"missing tokens", [](GgufImage& i) { i.remove_kv("tokenizer.ggml.tokens"); }, nullptr,
         "tokenizer.ggml.tokens"},
        {"eos id out of range",
         [](GgufImage& i) {
             i.kv("tokenizer.ggml.eos_token_id")->encoded = GgufImage::u32(1u << 30);
         },
         nullptr, "out of range"},
        {"token_type length mismatch",
         [](GgufImage& i) {
             auto* kv = i.kv("tokenizer.ggml.token_type");
             kv->encoded = GgufImage::u32(5) + GgufImage::u64(1) + GgufImage::u32(1);
         },
         nullptr, "token_type"},
        // Issue 14: counts the file cannot back, and keys the runtime would misuse.
        {"16,777,216 layers in a small file",
         [](GgufImage& i) { i.kv("qwen2.block_count")->encoded = GgufImage::u32(1u << 24); },
         nullptr, "claims 16777216 layers"},
        {"rope.dimension_count 0",
         [](GgufImage& i) { i.kv("qwen2.rope.dimension_count")->encoded = GgufImage::u32(0); },
         nullptr, "qwen2.rope.dimension_count must equal the head dimension (16), got 0"},
        {"rope.dimension_count 1e9",
         [](GgufImage& i) {
             i.kv("qwen2.rope.dimension_count")->encoded = GgufImage::u32(1000000000);
         },
         nullptr, "qwen2.rope.dimension_count must equal the head dimension (16), got 1000000000"},
        {"vocab_size 0",
         [](GgufImage& i) { i.kv("qwen2.vocab_size")->encoded = GgufImage::u32(0); }, nullptr,
         "qwen2.vocab_size must equal the rows of token_embd.weight"},
        {"vocab_size 2^40",
         [](GgufImage& i) {
             *i.kv("qwen2.vocab_size") = {"qwen2.vocab_size", 10,
                                          GgufImage::u64(uint64_t(1) << 40)};
         },
         nullptr, "qwen2.vocab_size must equal the rows of token_embd.weight"},
        {"eos_token_id 2^32-1",
         [](GgufImage& i) {
             i.kv("tokenizer.ggml.eos_token_id")->encoded = GgufImage::u32(0xFFFFFFFFu);
         },
         nullptr, "tokenizer.ggml.eos_token_id 4294967295 is out of range"},
        {"qwen2 without q bias", [](GgufImage& i) { i.remove_tensor("blk.0.attn_q.bias"); },
         nullptr, "missing tensor blk.0.attn_q.bias"},
        {"key type mismatch",
         [](GgufImage& i) {
             auto* kv = i.kv("qwen2.block_count");
             kv->type = 8;
             kv->encoded = GgufImage::str("two");
         },
         nullptr, "block_count"},
    };
    (void)type_of;
    return cases;
}

struct FolderCase {
    const char* name;
    FolderEdit edit;
    const char* keyword;
};

// Helpers on a safetensors file: header JSON and data section.
struct StFile {
    nlohmann::json header;
    std::string data;
    static StFile load(const std::string& p) {
        std::string b = read_file(p);
        uint64_t n = 0;
        std::memcpy(&n, b.data(), 8);
        StFile f;
        f.header = nlohmann::json::parse(b.substr(8, n));
        f.data = b.substr(8 + n);
        return f;
    }
    void save(const std::string& p) const {
        std::string h = header.dump();
        uint64_t n = h.size();
        std::string b(8, '\0');
        std::memcpy(b.data(), &n, 8);
        write_file(p, b + h + data);
    }
};

void edit_st(const std::string& dir, const std::function<void(StFile&)>& fn) {
    const std::string p = dir + "/model.safetensors";
    StFile f = StFile::load(p);
    fn(f);
    f.save(p);
}

void edit_config(const std::string& dir, const std::function<void(nlohmann::json&)>& fn) {
    const std::string p = dir + "/config.json";
    nlohmann::json j = nlohmann::json::parse(read_file(p));
    fn(j);
    write_file(p, j.dump());
}

const char* kUp = "model.layers.0.mlp.up_proj.weight";

const std::vector<FolderCase>& folder_cases() {
    static const std::vector<FolderCase> cases = {
        {"header length beyond file",
         [](const std::string& d) {
             std::string b = read_file(d + "/model.safetensors");
             uint64_t n = uint64_t(1) << 40;
             std::memcpy(b.data(), &n, 8);
             write_file(d + "/model.safetensors", b);
         },
         "beyond the file"},
        {"file shorter than 8 bytes",
         [](const std::string& d) { write_file(d + "/model.safetensors", "abc"); }, "truncated"},
        {"bad JSON header",
         [](const std::string& d) {
             std::string b = read_file(d + "/model.safetensors");
             b[8] = '[';
             b[9] = '{';
             write_file(d + "/model.safetensors", b);
         },
         "bad JSON header"},
        {"header not an object",
         [](const std::string& d) {
             std::string h = "[1, 2, 3]";
             uint64_t n = h.size();
             std::string b(8, '\0');
             std::memcpy(b.data(), &n, 8);
             write_file(d + "/model.safetensors", b + h);
         },
         "not an object"},
        {"unknown dtype",
         [](const std::string& d) {
             edit_st(d, [](StFile& f) { f.header[kUp]["dtype"] = "I64"; });
         },
         "unsupported dtype 'I64'"},
        {"data_offsets outside the data",
         [](const std::string& d) {
             edit_st(d, [](StFile& f) {
                 f.header[kUp]["data_offsets"] = {f.data.size() - 4, f.data.size() + 1000};
             });
         },
         "outside the data"},
        {"data_offsets reversed",
         [](const std::string& d) {
             edit_st(d, [](StFile& f) { f.header[kUp]["data_offsets"] = {100, 10}; });
         },
         "bad data_offsets"},
        {"negative data_offsets",
         [](const std::string& d) {
             edit_st(d, [](StFile& f) { f.header[kUp]["data_offsets"] = {-8, 10}; });
         },
         "bad data_offsets"},
        {"size mismatch",
         [](const std::string& d) {
             edit_st(d, [](StFile& f) { f.header[kUp]["shape"] = {128, 63}; });
         },
         "size mismatch"},
        {"overflowing shape",
         [](const std::string& d) {
             edit_st(d, [](StFile& f) {
                 f.header[kUp]["shape"] = {uint64_t(1) << 40, uint64_t(1) << 40};
             });
         },
         "overflow"},
        {"overlapping tensors",
         [](const std::string& d) {
             edit_st(d, [](StFile& f) {
                 f.header[kUp]["data_offsets"] =
                     f.header["model.layers.0.mlp.gate_proj.weight"]["data_offsets"];
             });
         },
         "overlap"},
        {"truncated data",
         [](const std::string& d) {
             edit_st(d, [](StFile& f) { f.data.resize(f.data.size() / 2); });
         },
         "outside the data"},
        {"missing tensor",
         [](const std::string& d) { edit_st(d, [](StFile& f) { f.header.erase(kUp); }); },
         "missing tensor model.layers.0.mlp.up_proj.weight"},
        {"shape mismatch with config",
         [](const std::string& d) {
             edit_config(d, [](nlohmann::json& j) { j["intermediate_size"] = 64; });
         },
         "shape mismatch"},
        {"missing config key",
         [](const std::string& d) {
             edit_config(d, [](nlohmann::json& j) { j.erase("hidden_size"); });
         },
         "missing key 'hidden_size'"},
        {"bad config value",
         [](const std::string& d) {
             edit_config(d, [](nlohmann::json& j) { j["num_attention_heads"] = "four"; });
         },
         "num_attention_heads"},
        {"bad config JSON",
         [](const std::string& d) { write_file(d + "/config.json", "{\"model_type\": "); },
         "bad JSON"},
        // Valid JSON a million levels deep: refused before parsing (destroying or reading the
        // parsed value would recurse once per level and overflow the stack).
        {"config JSON nested a million levels",
         [](const std::string& d) {
             write_file(d + "/config.json", std::string(1000000, '[') + std::string(1000000, ']'));
         },
         "nested deeper than 128 levels"},
        {"safetensors header nested a million levels",
         [](const std::string& d) {
             const std::string h = std::string(1000000, '[') + std::string(1000000, ']');
             uint64_t n = h.size();
             std::string b(8, '\0');
             std::memcpy(b.data(), &n, 8);
             write_file(d + "/model.safetensors", b + h);
         },
         "nested deeper than 128 levels"},
        // Issue 14: counts the file cannot back, and keys the runtime would misuse.
        {"16,777,216 layers in a small folder",
         [](const std::string& d) {
             edit_config(d, [](nlohmann::json& j) { j["num_hidden_layers"] = 1 << 24; });
         },
         "claims 16777216 layers"},
        {"vocab_size 0",
         [](const std::string& d) {
             edit_config(d, [](nlohmann::json& j) { j["vocab_size"] = 0; });
         },
         "'vocab_size' must be an integer"},
        {"vocab_size 2^40",
         [](const std::string& d) {
             edit_config(d, [](nlohmann::json& j) { j["vocab_size"] = int64_t(1) << 40; });
         },
         "'vocab_size' must be an integer"},
        {"vocab_size beyond the embedding rows",
         [](const std::string& d) {
             edit_config(
                 d, [](nlohmann::json& j) { j["vocab_size"] = j["vocab_size"].get<int>() + 1; });
         },
         "model.embed_tokens.weight: shape"},
        {"eos_token_id 2^32-1",
         [](const std::string& d) {
             edit_config(d, [](nlohmann::json& j) { j["eos_token_id"] = 4294967295u; });
         },
         "'eos_token_id' must be token ids in"},
        {"eos_token_id list with a bad id",
         [](const std::string& d) {
             edit_config(d, [](nlohmann::json& j) { j["eos_token_id"] = {1, -1}; });
         },
         "'eos_token_id' must be token ids in"},
        {"qwen2 without q bias",
         [](const std::string& d) {
             edit_st(d, [](StFile& f) { f.header.erase("model.layers.0.self_attn.q_proj.bias"); });
         },
         "missing tensor model.layers.0.self_attn.q_proj.bias"},
        {"unsupported model_type",
         [](const std::string& d) {
             edit_config(d, [](nlohmann::json& j) { j["model_type"] = "bert"; });
         },
         "unsupported model_type"},
        {"no weights", [](const std::string& d) { fs::remove(d + "/model.safetensors"); },
         "no model.safetensors"},
        {"bad index.json",
         [](const std::string& d) {
             fs::remove(d + "/model.safetensors");
             write_file(d + "/model.safetensors.index.json", "{\"weight_map\": [1, 2]}");
         },
         "bad index"},
        {"index.json not JSON",
         [](const std::string& d) {
             fs::remove(d + "/model.safetensors");
             write_file(d + "/model.safetensors.index.json", "weights, please");
         },
         "bad index"},
        {"index.json shard path escapes",
         [](const std::string& d) {
             fs::rename(d + "/model.safetensors", d + "/shard.safetensors");
             write_file(d + "/model.safetensors.index.json",
                        "{\"weight_map\": {\"model.norm.weight\": \"../shard.safetensors\"}}");
         },
         "bad index"},
        {"index.json tensor not in shard",
         [](const std::string& d) {
             fs::rename(d + "/model.safetensors", d + "/shard.safetensors");
             write_file(d + "/model.safetensors.index.json",
                        "{\"weight_map\": {\"model.nope.weight\": \"shard.safetensors\"}}");
         },
         "bad index"},
        {"index.json missing shard",
         [](const std::string& d) {
             fs::remove(d + "/model.safetensors");
             write_file(d + "/model.safetensors.index.json",
                        "{\"weight_map\": {\"model.norm.weight\": \"gone.safetensors\"}}");
         },
         "cannot open"},
    };
    return cases;
}

void check_error(const Result<std::unique_ptr<LoadedModel>>& r, const char* keyword) {
    MT_REQUIRE_MSG(!r.ok(), "a broken file was loaded");
    const std::string& m = r.message();
    MT_REQUIRE_MSG(m.find('\n') == std::string::npos && m.find('\r') == std::string::npos,
                   "message is not one line: " + m);
    MT_REQUIRE_MSG(!m.empty(), "empty message");
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    MT_REQUIRE_MSG(lower(m).find(lower(keyword)) != std::string::npos,
                   "expected '" + std::string(keyword) + "' in: " + m);
}

// What initTestCase built: a valid GGUF file and a valid safetensors folder, in one directory
// for the whole executable. error is empty when they were written and load.
struct Fixture {
    mini_test::TempDir dir;
    std::string gguf_path, hf_dir, gguf_bytes;
    std::string error;
};

void set_up(Fixture& x) {
    if (!x.dir.valid()) {
        x.error = "cannot create a temporary directory";
        return;
    }
    ModelWriterSpec s = base_spec();
    s.weight_type = WeightType::F32;
    x.gguf_path = x.dir.file("valid.gguf");
    if (!write_model(s, x.gguf_path).ok()) {
        x.error = "cannot write " + x.gguf_path;
        return;
    }
    s.format = ModelFileFormat::Safetensors;
    x.hf_dir = x.dir.file("valid-hf");
    if (!write_model(s, x.hf_dir).ok()) {
        x.error = "cannot write " + x.hf_dir;
        return;
    }
    auto g = load_model(x.gguf_path);
    if (!g.ok()) {
        x.error = g.message();
        return;
    }
    auto h = load_model(x.hf_dir);
    if (!h.ok()) {
        x.error = h.message();
        return;
    }
    x.gguf_bytes = read_file(x.gguf_path);
}

const Fixture& fixture() {
    static Fixture f;
    static const bool ready = (set_up(f), true);
    (void)ready;
    return f;
}

struct CaseRow {
    std::string name;
    size_t index;
};

template <class C> std::vector<CaseRow> rows_of(const std::vector<C>& cases) {
    std::vector<CaseRow> rows;
    for (size_t i = 0; i < cases.size(); ++i)
        rows.push_back({cases[i].name, i});
    return rows;
}

} // namespace

MT_TEST_TABLE(gguf, CaseRow, rows_of(gguf_cases())) {
    const Fixture& fx = fixture();
    MT_REQUIRE_MSG(fx.error.empty(), fx.error);
    const int index = int(row.index);
    const GgufCase& c = gguf_cases()[size_t(index)];
    std::string bytes = fx.gguf_bytes;
    if (c.edit) {
        auto f = GgufFile::parse(
            std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "valid");
        MT_REQUIRE(f.ok());
        GgufImage img = GgufImage::from(
            f.value(), std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
        MT_REQUIRE_COMPARE(img.serialize(), bytes); // the image reproduces the valid file
        c.edit(img);
        bytes = img.serialize();
    } else {
        c.raw(bytes);
    }
    const std::string p = fx.dir.file("broken-" + std::to_string(index) + ".gguf");
    write_file(p, bytes);
    check_error(load_model(p), c.keyword);
    const auto r = load_model(p);
    MT_CHECK(r.message().find(p) != std::string::npos); // names the file
}

MT_TEST_TABLE(safetensors, CaseRow, rows_of(folder_cases())) {
    const Fixture& fx = fixture();
    MT_REQUIRE_MSG(fx.error.empty(), fx.error);
    const int index = int(row.index);
    const FolderCase& c = folder_cases()[size_t(index)];
    const std::string d = fx.dir.file("broken-hf-" + std::to_string(index));
    fs::copy(fx.hf_dir, d, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    c.edit(d);
    check_error(load_model(d), c.keyword);
}

MT_TEST(missingPath) {
    MT_REQUIRE_MSG(fixture().error.empty(), fixture().error);
    check_error(load_model(fixture().dir.file("nope.gguf")), "no such");
}

MINI_TEST_MAIN()
