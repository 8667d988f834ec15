// The writer with real Hugging Face tokenizer folders (fetched test assets): GGUF files carry
// the tokenizer as tokenizer.ggml.* metadata, safetensors folders copy the files; both load
// back with the same vocabulary, special tokens and chat template.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/tokenizer/tokenizer_files.h"
#include "support/mini_test.h"

using namespace llmwb;
namespace fs = std::filesystem;

namespace {

struct TokenizerRow {
    std::string name;
    std::string tokenizer;
    Architecture arch;
    bool spm;
};

std::vector<TokenizerRow> tokenizer_rows() {
    return {{"qwen3", "qwen3", Architecture::Qwen3, false},
            {"llama2", "llama2", Architecture::Llama, true},
            {"llama3_1", "llama3_1", Architecture::Llama, false}};
}

} // namespace

MT_TEST_TABLE(writeAndLoad, TokenizerRow, tokenizer_rows()) {
    const Architecture arch = row.arch;
    const bool spm = row.spm;
    const std::string tok_dir = mini_test::assets_dir() + "/tokenizers/" + row.tokenizer;
    MT_REQUIRE_MSG(fs::exists(tok_dir + "/tokenizer.json"),
                   tok_dir + " missing: run scripts/fetch-test-assets.sh");
    auto ref =
        read_tokenizer_files(tok_dir + "/tokenizer.json", tok_dir + "/tokenizer_config.json");
    MT_REQUIRE_MSG(ref.ok(), ref.ok() ? "" : ref.message());

    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    ModelWriterSpec spec;
    spec.arch = arch;
    spec.tokenizer_dir = tok_dir;
    spec.hidden_size = 32;
    spec.intermediate_size = 64;
    spec.num_layers = 1;
    spec.num_heads = 2;
    spec.num_kv_heads = 1;
    spec.tie_word_embeddings = true;
    spec.weight_type = WeightType::F16;
    const std::string gp = dir.file("m.gguf");
    const std::string hp = dir.file("hf");
    Status s = write_model(spec, gp);
    MT_REQUIRE_MSG(s.ok(), s.ok() ? "" : s.message());
    spec.format = ModelFileFormat::Safetensors;
    s = write_model(spec, hp);
    MT_REQUIRE_MSG(s.ok(), s.ok() ? "" : s.message());
    MT_REQUIRE(fs::exists(hp + "/tokenizer.json") && fs::exists(hp + "/tokenizer_config.json"));

    auto g = load_model(gp);
    auto h = load_model(hp);
    MT_REQUIRE_MSG(g.ok(), g.ok() ? "" : g.message());
    MT_REQUIRE_MSG(h.ok(), h.ok() ? "" : h.message());
    const TokenizerData& gt = g.value()->tokenizer;
    const TokenizerData& ht = h.value()->tokenizer;
    const TokenizerData& rt = ref->data;
    MT_COMPARE(g.value()->config.vocab_size, h.value()->config.vocab_size);
    MT_COMPARE(gt.kind,
               spm ? TokenizerData::Kind::SentencePieceBpe : TokenizerData::Kind::ByteLevelBpe);
    MT_COMPARE(ht.kind, rt.kind);
    MT_COMPARE(gt.kind, rt.kind);
    MT_COMPARE(gt.bos_id, rt.bos_id);
    MT_COMPARE(gt.eos_id, rt.eos_id);
    MT_COMPARE(gt.add_bos, rt.add_bos);
    MT_COMPARE(gt.add_eos, rt.add_eos);
    MT_COMPARE(gt.merges, rt.merges);
    if (!spm)
        MT_COMPARE(gt.pre_tokenizer, rt.pre_tokenizer);
    MT_REQUIRE(gt.tokens.size() >= rt.tokens.size()); // guards the indexing below
    for (size_t i = 0; i < rt.tokens.size(); ++i) {
        if (gt.tokens[i] != rt.tokens[i] && !rt.tokens[i].empty()) {
            MT_FAIL("token %zu differs", i);
        }
    }
    // Every added token of tokenizer.json is an added token of the GGUF, same id/special.
    for (const auto& a : rt.added_tokens) {
        bool found = false;
        for (const auto& b : gt.added_tokens) {
            if (b.id == a.id) {
                found = true;
                MT_COMPARE(b.content, a.content);
                MT_COMPARE(b.special, a.special);
            }
        }
        MT_CHECK_MSG(found, a.content);
    }
    // End-of-turn tokens known to the GGUF loader (the HF reader may list more).
    for (int32_t id : gt.eot_ids)
        MT_CHECK(id != gt.eos_id);
    MT_COMPARE(g.value()->chat_template, ref->chat_template);
    MT_COMPARE(h.value()->chat_template, ref->chat_template);
    MT_COMPARE(g.value()->config.rope_style,
               arch == Architecture::Llama ? RopeStyle::Interleaved : RopeStyle::RotateHalf);
}

MINI_TEST_MAIN()
