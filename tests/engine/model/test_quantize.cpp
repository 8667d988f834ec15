// quantize_model(): a float GGUF or Hugging Face folder becomes a GGUF of the target's types that
// loads and runs; metadata is carried over; bad input (already quantized, unknown or
// out-of-scope type, OUT equal to IN, broken files, row lengths without a type, bad importance
// matrices) is a clear error that leaves nothing behind and overwrites nothing; cancel leaves
// no file; importance matrices round-trip and calibration gathers them.
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/model/gguf_file.h"
#include "engine/model/imatrix_file.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/model/quant_recipe.h"
#include "engine/model/quantize.h"
#include "engine/model/quantize_calibration.h"
#include "engine/model/weight_plan.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/perplexity.h"
#include "gguf_image.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"
#include "support/mini_test.h"

using namespace llmwb;
namespace fs = std::filesystem;

namespace {

// A qwen2 with 256-multiple hidden rows and a 96-wide attention (fallbacks).
ModelWriterSpec spec(WeightType wt = WeightType::F16) {
    ModelWriterSpec s;
    s.arch = Architecture::Qwen2;
    s.seed = 7;
    s.hidden_size = 256;
    s.intermediate_size = 512;
    s.num_layers = 3;
    s.num_heads = 3;
    s.num_kv_heads = 1;
    s.head_dim = 32; // q width 96: attn_output rows of 96 columns
    s.weight_type = wt;
    return s;
}

std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
        out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

double ppl_of(const std::string& path, const std::vector<int32_t>& ids) {
    auto m = load_model(path);
    if (!m)
        return -1;
    kernels::ThreadPool pool(1);
    CpuTransformer tf(*m.value(), pool);
    auto kv = KvCacheStorage::create(m.value()->config, 8);
    if (!kv)
        return -1;
    auto r = perplexity(tf, *kv.value(), ids, {});
    return r ? r->ppl : -1;
}

QuantizeOptions opts(const std::string& in, const std::string& out, const std::string& t) {
    QuantizeOptions o;
    o.input = in;
    o.output = out;
    o.target = t;
    o.threads = 2;
    return o;
}

} // namespace

MT_TEST(ggufQ4KMLoadsAndRuns) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    const std::string in = dir.file("in.gguf"), out = dir.file("out.gguf");
    MT_REQUIRE(write_model(spec(), in).ok());
    int calls = 0;
    QuantizeProgress last;
    auto rep = quantize_model(opts(in, out, "q4_k_m"), [&](const QuantizeProgress& p) {
        ++calls;
        last = p;
    });
    MT_REQUIRE_MSG(rep.ok(), "%s", rep.ok() ? "" : rep.message().c_str());
    MT_CHECK(calls > 0);
    MT_COMPARE(last.tensors_done, last.tensors_total);
    MT_COMPARE(last.bytes_done, last.bytes_total);
    MT_CHECK(rep->fallback_tensors == 3); // the three attn_output (96 columns): Q4_K -> Q5_0
    MT_CHECK(rep->bits_per_weight > 4.5 && rep->bits_per_weight < 7.0);
    // Only OUT in the folder: no temporary file left.
    MT_COMPARE(files_in(dir.path()).size(), size_t(2));

    auto src = GgufFile::open(in);
    auto dst = GgufFile::open(out);
    MT_REQUIRE(src.ok() && dst.ok());
    // Every key carried over with the same value, file_type set to LLAMA_FTYPE_MOSTLY_Q4_K_M.
    for (const auto& [key, v] : src->metadata) {
        MT_SCOPE("key %s", key.c_str());
        const GgufValue* d = dst->find(key);
        MT_REQUIRE(d);
        if (key == "general.file_type") {
            MT_COMPARE(d->as_int().value_or(-1), 15);
            continue;
        }
        MT_CHECK(d->encoded.size() == v.encoded.size() &&
                 std::memcmp(d->encoded.data(), v.encoded.data(), v.encoded.size()) == 0);
    }
    MT_COMPARE(dst->alignment, 32u);
    // Tensors in the input's order with the recipe's types, norms and biases F32.
    MT_REQUIRE_COMPARE(dst->tensors.size(), src->tensors.size());
    std::vector<RecipeTensor> rt;
    for (const auto& t : src->tensors)
        rt.push_back({t.name, int(t.n_dims), t.cols()});
    const auto choices = recipe_plan(parse_quant_target("Q4_K_M").value(), rt, 3, 1, false);
    for (size_t i = 0; i < dst->tensors.size(); ++i) {
        const auto& t = dst->tensors[i];
        MT_SCOPE("tensor %s", t.name.c_str());
        MT_COMPARE(t.name, src->tensors[i].name);
        MT_COMPARE(std::string(dtype_name(t.type)), std::string(dtype_name(choices[i].type)));
        if (t.n_dims == 1)
            MT_COMPARE(std::string(dtype_name(t.type)), "F32");
        // Dequantized rows stay close to the source.
        std::vector<float> a(size_t(t.cols())), b(size_t(t.cols()));
        double err = 0, ref = 0;
        for (int64_t r = 0; r < t.rows(); r += 7) {
            kernels::dequantize_row(src->tensors[i].type,
                                    src->tensors[i].data +
                                        r * dtype_row_bytes(src->tensors[i].type, t.cols()),
                                    a.data(), t.cols());
            kernels::dequantize_row(t.type, t.data + r * dtype_row_bytes(t.type, t.cols()),
                                    b.data(), t.cols());
            for (int64_t c = 0; c < t.cols(); ++c) {
                err += (a[c] - b[c]) * (a[c] - b[c]);
                ref += a[c] * a[c];
            }
        }
        MT_CHECK_MSG(std::sqrt(err / std::max(ref, 1e-30)) < 0.12, "rel rms %g",
                     std::sqrt(err / std::max(ref, 1e-30)));
    }
    // It loads and runs: perplexity over the same ids within a few percent of the input's.
    std::vector<int32_t> ids;
    for (int i = 0; i < 40; ++i)
        ids.push_back((i * 37 + 11) % 200);
    const double p_in = ppl_of(in, ids), p_out = ppl_of(out, ids);
    MT_CHECK_MSG(p_in > 0 && p_out > 0 && std::abs(p_out / p_in - 1) < 0.05, "ppl %g vs %g", p_in,
                 p_out);
}

MT_TEST(everyPresetLoads) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    const std::string in = dir.file("in.gguf");
    MT_REQUIRE(write_model(spec(WeightType::BF16), in).ok());
    for (const auto& t : quantize_targets()) {
        MT_SCOPE("target %s", t.name.c_str());
        const std::string out = dir.file(t.name + ".gguf");
        auto rep = quantize_model(opts(in, out, t.name));
        MT_REQUIRE_MSG(rep.ok(), "%s", rep.ok() ? "" : rep.message().c_str());
        auto m = load_model(out);
        MT_REQUIRE_MSG(m.ok(), "%s", m.ok() ? "" : m.message().c_str());
        auto f = GgufFile::open(out);
        MT_REQUIRE(f.ok());
        MT_COMPARE(f->find("general.file_type")->as_int().value_or(-1), int64_t(t.file_type));
    }
}

MT_TEST(hfFolderEqualsGgufInput) {
    // The same logical weights as safetensors and as GGUF (llama: Q/K rows permuted, llama3
    // rope scaling as rope_freqs) quantize to the same tensors.
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    ModelWriterSpec s = spec(WeightType::F32);
    s.arch = Architecture::Llama;
    s.attention_bias = 0;
    s.tie_word_embeddings = false;
    s.rope_scaling.kind = RopeScaling::Kind::Llama3;
    s.rope_scaling.factor = 8;
    s.rope_scaling.low_freq_factor = 1;
    s.rope_scaling.high_freq_factor = 4;
    s.rope_scaling.original_max_position = 64;
    MT_REQUIRE(write_model(s, dir.file("ref.gguf")).ok());
    s.format = ModelFileFormat::Safetensors;
    MT_REQUIRE(write_model(s, dir.file("hf")).ok());
    MT_REQUIRE(quantize_model(opts(dir.file("hf"), dir.file("a.gguf"), "Q8_0")).ok());
    MT_REQUIRE(quantize_model(opts(dir.file("ref.gguf"), dir.file("b.gguf"), "Q8_0")).ok());
    auto a = GgufFile::open(dir.file("a.gguf"));
    auto b = GgufFile::open(dir.file("b.gguf"));
    MT_REQUIRE(a.ok() && b.ok());
    MT_REQUIRE_COMPARE(a->tensors.size(), b->tensors.size());
    for (size_t i = 0; i < a->tensors.size(); ++i) {
        MT_SCOPE("tensor %s", a->tensors[i].name.c_str());
        MT_COMPARE(a->tensors[i].name, b->tensors[i].name);
        MT_REQUIRE_COMPARE(a->tensors[i].bytes, b->tensors[i].bytes);
        MT_CHECK(std::memcmp(a->tensors[i].data, b->tensors[i].data, size_t(a->tensors[i].bytes)) ==
                 0);
    }
    MT_CHECK(a->find("tokenizer.ggml.tokens") != nullptr);
    MT_COMPARE(a->find("general.architecture")->as_string().value_or(""), "llama");
}

MT_TEST(badInputIsRefusedAndNothingIsWritten) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    const std::string in = dir.file("in.gguf");
    MT_REQUIRE(write_model(spec(), in).ok());
    const auto in_bytes = mini_test::read_file(in);
    MT_REQUIRE(mini_test::write_file(dir.file("keep.gguf"), "precious"));
    auto refused = [&](const QuantizeOptions& o, const char* needle) {
        MT_SCOPE("%s -> %s (%s)", o.input.c_str(), o.output.c_str(), needle);
        auto r = quantize_model(o);
        MT_REQUIRE(!r.ok());
        MT_CHECK_MSG(r.message().find(needle) != std::string::npos, "%s", r.message().c_str());
    };
    refused(opts(in, dir.file("x.gguf"), "Q4_K_XL"), "valid: Q8_0");
    refused(opts(in, dir.file("x.gguf"), "IQ2_XXS"), "out of scope for now");
    refused(opts(in, dir.file("x.gguf"), "TQ1_0"), "out of scope for now");
    refused(opts(in, dir.file("x.gguf"), "mxfp4"), "out of scope for now");
    refused(opts(in, in, "Q8_0"), "is the input");
    refused(opts(in, dir.path() + "/./in.gguf", "Q8_0"), "is the input");
    fs::create_symlink(in, dir.file("link.gguf"));
    refused(opts(dir.file("link.gguf"), in, "Q8_0"), "is the input");
    refused(opts(in, dir.file("link.gguf"), "Q8_0"), "is the input");
    refused(opts(dir.file("missing.gguf"), dir.file("x.gguf"), "Q8_0"), "no such file");
    refused(opts(in, dir.file("no-dir/x.gguf"), "Q8_0"), "does not exist");

    // Already quantized input.
    MT_REQUIRE(write_model(spec(WeightType::Q8_0), dir.file("q8.gguf")).ok());
    refused(opts(dir.file("q8.gguf"), dir.file("keep.gguf"), "Q4_0"), "already quantized (Q8_0)");

    // A tensor whose bytes do not fit its type and shape (rows doubled: data past the end), and
    // a type id beyond the known ones.
    auto f = GgufFile::open(in);
    MT_REQUIRE(f.ok());
    {
        GgufImage img = GgufImage::from(*f, f->mapping->bytes());
        img.tensors.back().ne[1] *= 2;
        MT_REQUIRE(mini_test::write_file(dir.file("big.gguf"), img.serialize()));
        refused(opts(dir.file("big.gguf"), dir.file("keep.gguf"), "Q8_0"), "outside the file");
    }
    {
        GgufImage img = GgufImage::from(*f, f->mapping->bytes());
        img.tensors[1].type = 99;
        MT_REQUIRE(mini_test::write_file(dir.file("type.gguf"), img.serialize()));
        refused(opts(dir.file("type.gguf"), dir.file("keep.gguf"), "Q8_0"), "type id 99");
    }
    // A row length that neither the type nor a fallback holds (Q8_0 has none; 200 columns).
    ModelWriterSpec odd = spec();
    odd.intermediate_size = 200;
    MT_REQUIRE(write_model(odd, dir.file("odd.gguf")).ok());
    refused(opts(dir.file("odd.gguf"), dir.file("keep.gguf"), "Q8_0"), "blk.0.ffn_down.weight");
    // ... while Q4_K_M falls back to Q5_0 -> F16 for it, as the common quantizer does.
    MT_CHECK(quantize_model(opts(dir.file("odd.gguf"), dir.file("odd-q4.gguf"), "Q4_K_M")).ok());

    // Bad importance matrices.
    ImportanceMatrix im;
    im.entries["blk.0.attn_q.weight"].sum2.assign(256, 1.0f);
    im.entries["blk.0.attn_q.weight"].count = 4;
    auto with_imatrix = [&](const ImportanceMatrix& m) {
        MT_REQUIRE(write_imatrix(m, dir.file("im.gguf")).ok());
        QuantizeOptions o = opts(in, dir.file("keep.gguf"), "IQ4_XS");
        o.imatrix_path = dir.file("im.gguf");
        return o;
    };
    ImportanceMatrix bad = im;
    bad.entries["blk.0.attn_q.weight"].sum2[3] = std::nanf("");
    refused(with_imatrix(bad), "non-finite");
    bad = im;
    bad.entries["blk.0.attn_q.weight"].sum2[5] = -1;
    refused(with_imatrix(bad), "negative");
    bad = im;
    bad.entries["blk.0.attn_q.weight"].sum2.resize(128);
    refused(with_imatrix(bad), "128 columns");
    bad = im;
    bad.entries["blk.9.attn_q.weight"] = im.entries["blk.0.attn_q.weight"];
    refused(with_imatrix(bad), "names no weight matrix");
    MT_REQUIRE(mini_test::write_file(dir.file("junk.dat"), std::string("\x05\0\0\0\x40", 5)));
    QuantizeOptions o = opts(in, dir.file("keep.gguf"), "IQ4_XS");
    o.imatrix_path = dir.file("junk.dat");
    refused(o, "junk.dat");

    // Nothing was overwritten or left behind.
    MT_CHECK(mini_test::read_file(in) == in_bytes);
    MT_CHECK(mini_test::read_file(dir.file("keep.gguf")) == std::string("precious"));
    for (const auto& name : files_in(dir.path())) {
        MT_SCOPE("file %s", name.c_str());
        MT_CHECK(name.find(".tmp") == std::string::npos);
        MT_CHECK(name != "x.gguf");
    }
}

MT_TEST(cancelLeavesNoFile) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    const std::string in = dir.file("in.gguf");
    MT_REQUIRE(write_model(spec(), in).ok());
    MT_REQUIRE(mini_test::write_file(dir.file("out.gguf"), "old"));
    std::atomic<bool> cancel{false};
    bool saw_temp = false;
    auto r = quantize_model(
        opts(in, dir.file("out.gguf"), "Q4_K_M"),
        [&](const QuantizeProgress& p) {
            if (p.tensors_done >= 3) {
                for (const auto& n : files_in(dir.path()))
                    saw_temp |= n.find(".tmp") != std::string::npos;
                cancel = true;
            }
        },
        &cancel);
    MT_REQUIRE(!r.ok());
    MT_COMPARE(r.message(), "cancelled");
    MT_CHECK(saw_temp); // written under a temporary name ...
    // ... removed on cancel; the existing OUT is untouched.
    MT_COMPARE(files_in(dir.path()).size(), size_t(2));
    MT_CHECK(mini_test::read_file(dir.file("out.gguf")) == std::string("old"));
}

MT_TEST(imatrixRoundTripAndLegacy) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    ImportanceMatrix m;
    m.datasets = {"calib.txt"};
    m.chunk_count = 3;
    m.chunk_size = 512;
    m.entries["blk.0.ffn_down.weight"] = {{1.0f, 2.0f, 0.0f, 8.0f}, 2.0f};
    m.entries["blk.1.attn_q.weight"] = {{3.0f, 3.0f}, 0.0f};
    MT_REQUIRE(write_imatrix(m, dir.file("m.gguf")).ok());
    auto r = read_imatrix(dir.file("m.gguf"));
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    MT_COMPARE(r->entries.size(), size_t(2));
    MT_COMPARE(r->chunk_count, 3);
    MT_COMPARE(r->datasets.size(), size_t(1));
    auto w = r->importance("blk.0.ffn_down.weight");
    MT_REQUIRE_COMPARE(w.size(), size_t(4));
    MT_COMPARE(w[1], 1.0f);
    MT_COMPARE(w[3], 4.0f);
    MT_COMPARE(r->importance("blk.1.attn_q.weight")[0], 1.0f); // count 0: uniform
    auto f = GgufFile::open(dir.file("m.gguf"));
    MT_REQUIRE(f.ok());
    MT_CHECK(f->find_tensor("blk.0.ffn_down.weight.in_sum2") != nullptr);
    MT_CHECK(f->find_tensor("blk.0.ffn_down.weight.counts") != nullptr);
    MT_COMPARE(f->find("general.type")->as_string().value_or(""), "imatrix");

    // Legacy .dat: one entry of 2 values recorded over 4 calls.
    std::string dat;
    auto i32 = [&](int32_t v) { dat.append(reinterpret_cast<const char*>(&v), 4); };
    auto f32 = [&](float v) { dat.append(reinterpret_cast<const char*>(&v), 4); };
    i32(1);
    i32(5);
    dat += "w.abc";
    i32(4);
    i32(2);
    f32(8.0f);
    f32(2.0f);
    MT_REQUIRE(mini_test::write_file(dir.file("l.dat"), dat));
    auto l = read_imatrix(dir.file("l.dat"));
    MT_REQUIRE_MSG(l.ok(), "%s", l.ok() ? "" : l.message().c_str());
    MT_COMPARE(l->importance("w.abc")[0], 2.0f);
    // Truncated: refused with the file's name.
    MT_REQUIRE(mini_test::write_file(dir.file("t.dat"), dat.substr(0, dat.size() - 3)));
    auto t = read_imatrix(dir.file("t.dat"));
    MT_REQUIRE(!t.ok());
    MT_CHECK(t.message().find("t.dat") != std::string::npos);
}

MT_TEST(calibrationGathersImportance) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    const std::string in = dir.file("in.gguf");
    MT_REQUIRE(write_model(spec(), in).ok());
    std::string text;
    for (int i = 0; i < 40; ++i)
        text += "The workbench quantizes a model and measures what changed. ";
    auto im = gather_importance(in, text, 300, 2, nullptr);
    MT_REQUIRE_MSG(im.ok(), "%s", im.ok() ? "" : im.message().c_str());
    MT_COMPARE(im->entries.size(), size_t(3 * 7)); // every layer matrix, not the lm_head
    const auto& q = im->entries.at("blk.0.attn_q.weight");
    MT_COMPARE(q.sum2.size(), size_t(256));
    MT_CHECK(q.count > 100 && q.count <= 300);
    MT_COMPARE(im->entries.at("blk.2.ffn_down.weight").sum2.size(), size_t(512));
    for (float v : q.sum2)
        MT_CHECK(std::isfinite(v) && v >= 0);
    // Quantizing with it gives a valid, different file (IQ4_XS uses the importances).
    MT_REQUIRE(mini_test::write_file(dir.file("calib.txt"), text));
    QuantizeOptions o = opts(in, dir.file("c.gguf"), "IQ4_XS");
    o.calibration_path = dir.file("calib.txt");
    o.imatrix_out_path = dir.file("c.imatrix");
    auto rep = quantize_model(o);
    MT_REQUIRE_MSG(rep.ok(), "%s", rep.ok() ? "" : rep.message().c_str());
    MT_REQUIRE(quantize_model(opts(in, dir.file("p.gguf"), "IQ4_XS")).ok());
    MT_CHECK(mini_test::read_file(dir.file("c.gguf")) != mini_test::read_file(dir.file("p.gguf")));
    MT_CHECK(load_model(dir.file("c.gguf")).ok());
    auto back = read_imatrix(dir.file("c.imatrix"));
    MT_REQUIRE(back.ok());
    MT_COMPARE(back->entries.size(), size_t(21));
}

MINI_TEST_MAIN()
