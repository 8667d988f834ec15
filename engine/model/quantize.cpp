// quantize_model(): opens a float model (GGUF or Hugging Face folder) as a list of source
// tensors in GGUF naming and order, chooses each tensor's type with the recipes
// (quant_recipe.h), then streams tensor by tensor, row chunk by row chunk (rows in parallel on
// the thread pool), into a GGUF file under a temporary name that is renamed to OUT at the end.
#include "engine/model/quantize.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <unistd.h>

#include "engine/model/byte_reader.h"
#include "engine/model/gguf_file.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/imatrix_file.h"
#include "engine/model/loaded_model.h"
#include "engine/model/mapped_file.h"
#include "engine/model/model_writer.h"
#include "engine/model/quant_recipe.h"
#include "engine/model/quantize_calibration.h"
#include "engine/model/rope_factors.h"
#include "engine/model/weight_binding.h"
#include "engine/model/weight_plan.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

namespace {

namespace fs = std::filesystem;

constexpr int64_t kChunkElems = int64_t(1) << 22; // floats converted per chunk (16 MiB)

// One tensor to write, in GGUF naming: rows of `cols` elements in a float type.
struct SourceTensor {
    std::string name;
    DType type = DType::F32; // F32, F16 or BF16
    const uint8_t* data = nullptr;
    int64_t rows = 0, cols = 0;
    std::vector<uint64_t> ne; // GGUF dims (ne[0] = cols)
    int qk_head_dim = 0;      // llama-arch HF Q/K: GGUF row r is HF row llama_qk_source_row(r)
    bool qk_vector = false;   // ... for a Q/K bias the elements are permuted
};

struct Source {
    std::vector<SourceTensor> tensors;
    int n_head = 1, n_head_kv = 1;
    // Writes the metadata with general.file_type = file_type and quantization_version 2.
    std::function<void(GgufWriter&, uint32_t file_type)> metadata;
    // Keep-alive of what the tensors point into.
    std::shared_ptr<GgufFile> gguf;
    std::unique_ptr<LoadedModel> model;
    std::vector<std::vector<float>> owned;
};

Result<Source> open_gguf_source(const std::string& path) {
    auto f = GgufFile::open(path);
    if (!f)
        return f.error();
    Source s;
    s.gguf = std::make_shared<GgufFile>(std::move(f.value()));
    const GgufFile& g = *s.gguf;
    for (const auto& t : g.tensors) {
        if (!dtype_is_float(t.type)) {
            return make_error(path + ": tensor '" + printable(t.name) + "' is already quantized (" +
                              dtype_name(t.type) +
                              "); quantize needs a float model (F32, F16 or BF16)");
        }
        SourceTensor st;
        st.name = t.name;
        st.type = t.type;
        st.data = t.data;
        st.cols = t.cols();
        st.rows = t.rows();
        for (uint32_t d = 0; d < t.n_dims; ++d)
            st.ne.push_back(uint64_t(t.dims[d]));
        s.tensors.push_back(std::move(st));
    }
    std::string arch;
    if (const GgufValue* a = g.find("general.architecture"))
        arch = a->as_string().value_or("");
    auto get_int = [&](const std::string& key, int def) {
        const GgufValue* v = g.find(key);
        auto i = v ? v->as_int() : std::nullopt;
        return i && *i > 0 && *i < (1 << 20) ? int(*i) : def;
    };
    s.n_head = get_int(arch + ".attention.head_count", 1);
    s.n_head_kv = get_int(arch + ".attention.head_count_kv", s.n_head);
    std::shared_ptr<GgufFile> keep = s.gguf;
    s.metadata = [keep](GgufWriter& w, uint32_t file_type) {
        // Every key in file order; file_type and quantization_version replaced, the alignment
        // dropped (the writer uses the default, 32).
        bool wrote_type = false;
        for (const auto& [key, v] : keep->metadata) {
            if (key == "general.file_type" || key == "general.quantization_version") {
                if (!wrote_type) {
                    w.add_u32("general.file_type", file_type);
                    w.add_u32("general.quantization_version", 2);
                    wrote_type = true;
                }
                continue;
            }
            if (key == "general.alignment")
                continue;
            w.add_raw(key, uint32_t(v.type), v.encoded.data(), v.encoded.size());
        }
        if (!wrote_type) {
            w.add_u32("general.file_type", file_type);
            w.add_u32("general.quantization_version", 2);
        }
    };
    return s;
}

// A Hugging Face folder as the GGUF the converter would write: llama.cpp tensor names, llama Q/K
// rows permuted, llama3 rope scaling as a rope_freqs tensor, metadata as make-model writes it.
Result<Source> open_hf_source(const std::string& dir) {
    auto m = load_model(dir);
    if (!m)
        return m.error();
    Source s;
    s.model = std::move(m.value());
    const LoadedModel& lm = *s.model;
    ModelConfig c = lm.config;
    if (c.is_moe()) // GGUF stacks each layer's experts into one tensor; this source does not
        return make_error(dir + ": quantizing a mixture-of-experts Hugging Face folder is not "
                                "supported yet (quantize a float GGUF file of it instead)");
    const bool llama = c.arch == Architecture::Llama;
    const bool rope_freqs = llama && c.rope_scaling.kind == RopeScaling::Kind::Llama3;
    for (const PlannedTensor& p : plan_tensors(c, rope_freqs)) {
        SourceTensor st;
        st.name = p.gguf_name;
        st.rows = p.rows;
        st.cols = p.cols;
        st.ne = p.vector ? std::vector<uint64_t>{uint64_t(p.cols)}
                         : std::vector<uint64_t>{uint64_t(p.cols), uint64_t(p.rows)};
        if (p.role == TensorRole::RopeFreqs) {
            s.owned.push_back(llama3_rope_factors(c));
            st.type = DType::F32;
            st.data = reinterpret_cast<const uint8_t*>(s.owned.back().data());
        } else {
            const TensorView* v = planned_view(lm.weights, p);
            if (!v || !v->present() || v->rows != p.rows || v->cols != p.cols ||
                !dtype_is_float(v->type)) {
                return make_error(dir + ": tensor for " + p.gguf_name + " is missing or not float");
            }
            st.type = v->type;
            st.data = static_cast<const uint8_t*>(v->data);
        }
        if (llama && (p.role == TensorRole::Wq || p.role == TensorRole::Wk ||
                      p.role == TensorRole::Bq || p.role == TensorRole::Bk)) {
            st.qk_head_dim = c.head_dim;
            st.qk_vector = p.vector;
        }
        s.tensors.push_back(std::move(st));
    }
    for (auto& [name, values] : longrope_factor_tensors(c)) { // phi3: as the converter writes
        SourceTensor st;
        st.name = name;
        st.rows = 1;
        st.cols = int64_t(values.size());
        st.ne = {uint64_t(values.size())};
        st.type = DType::F32;
        s.owned.push_back(std::move(values));
        st.data = reinterpret_cast<const uint8_t*>(s.owned.back().data());
        s.tensors.push_back(std::move(st));
    }
    s.n_head = c.num_heads;
    s.n_head_kv = c.num_kv_heads;
    if (rope_freqs)
        c.rope_scaling = RopeScaling{}; // carried by rope_freqs
    const LoadedModel* mp = s.model.get();
    s.metadata = [mp, c](GgufWriter& w, uint32_t file_type) {
        add_gguf_model_metadata(w, c, mp->tokenizer, mp->chat_template, mp->name, file_type);
    };
    return s;
}

// Row r of a source tensor as floats (Q/K permutation applied).
void source_row(const SourceTensor& t, int64_t r, float* out) {
    if (t.qk_vector) {
        std::vector<float> tmp(size_t(t.cols));
        kernels::dequantize_row(t.type, t.data, tmp.data(), t.cols);
        for (int64_t e = 0; e < t.cols; ++e)
            out[e] = tmp[size_t(llama_qk_source_row(e, t.qk_head_dim))];
        return;
    }
    const int64_t src = t.qk_head_dim ? llama_qk_source_row(r, t.qk_head_dim) : r;
    kernels::dequantize_row(t.type, t.data + src * dtype_row_bytes(t.type, t.cols), out, t.cols);
}

bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(b, ec) && fs::equivalent(a, b, ec))
        return true;
    const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
    const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
    return !ca.empty() && ca == cb;
}

std::string temp_name_for(const std::string& out) {
    const fs::path p(out);
    return (p.parent_path() /
            ("." + p.filename().string() + ".llmwb-" + std::to_string(getpid()) + ".tmp"))
        .string();
}

std::string fmt_bpw(double b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", b);
    return buf;
}

} // namespace

Result<QuantizeReport> quantize_model(const QuantizeOptions& o, const QuantizeProgressFn& progress,
                                      const std::atomic<bool>* cancel) {
    const auto t0 = std::chrono::steady_clock::now();
    auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    auto cancelled = [&] { return cancel && cancel->load(std::memory_order_relaxed); };
    auto target = parse_quant_target(o.target);
    if (!target)
        return target.error();
    if (o.input.empty() || o.output.empty())
        return make_error("give an input model and an output file");
    std::error_code ec;
    if (!fs::exists(o.input, ec))
        return make_error(o.input + ": no such file or folder");
    if (same_file(o.input, o.output))
        return make_error("the output " + o.output + " is the input model; choose another name");
    if (fs::is_directory(o.output, ec))
        return make_error(o.output + ": is a folder; give the output file's name");
    const fs::path out_dir = fs::absolute(o.output, ec).parent_path();
    if (!fs::is_directory(out_dir, ec))
        return make_error(out_dir.string() + ": the output folder does not exist");

    auto src_or =
        fs::is_directory(o.input, ec) ? open_hf_source(o.input) : open_gguf_source(o.input);
    if (!src_or)
        return src_or.error();
    Source& src = src_or.value();

    // Importances: a file, or gathered from the calibration text.
    ImportanceMatrix imatrix;
    bool have_imatrix = false;
    QuantizeReport rep;
    if (!o.imatrix_path.empty() && !o.calibration_path.empty())
        return make_error("give --imatrix or --calibration, not both");
    if (!o.imatrix_path.empty()) {
        auto im = read_imatrix(o.imatrix_path);
        if (!im)
            return im.error();
        imatrix = std::move(im.value());
        have_imatrix = true;
        rep.notes.push_back("importance matrix: " + o.imatrix_path + " (" +
                            std::to_string(imatrix.entries.size()) + " entries)");
    } else if (!o.calibration_path.empty()) {
        auto mf = MappedFile::open(o.calibration_path);
        if (!mf)
            return mf.error();
        auto b = mf.value()->bytes();
        const int64_t kMaxText = int64_t(64) << 20;
        if (int64_t(b.size()) > kMaxText)
            return make_error(o.calibration_path + ": calibration text over 64 MiB");
        std::string text(reinterpret_cast<const char*>(b.data()), b.size());
        const int max_tokens =
            o.calibration_max_tokens > 0 ? o.calibration_max_tokens : kDefaultCalibrationTokens;
        QuantizeProgress p;
        p.stage = "calibrating";
        auto im = gather_importance(o.input, text, max_tokens, o.threads, cancel,
                                    [&](int done, int total) {
                                        if (!progress)
                                            return;
                                        p.tensors_done = done;
                                        p.tensors_total = total;
                                        p.seconds = seconds();
                                        progress(p);
                                    });
        if (!im)
            return im.error();
        imatrix = std::move(im.value());
        imatrix.datasets = {fs::path(o.calibration_path).filename().string()};
        have_imatrix = true;
        rep.calibration_seconds = seconds();
        rep.notes.push_back("importance gathered from " + o.calibration_path + " (" +
                            std::to_string(imatrix.chunk_count) + " chunks of at most " +
                            std::to_string(imatrix.chunk_size) + " tokens)");
        if (!o.imatrix_out_path.empty()) {
            if (Status s = write_imatrix(imatrix, o.imatrix_out_path); !s)
                return s.error();
            rep.notes.push_back("importance matrix written to " + o.imatrix_out_path);
        }
    }

    if (have_imatrix) {
        rep.notes.push_back("importances are used by the Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, "
                            "Q5_K and IQ4_XS quantizers (Q4_0, Q4_K, Q6_K and Q8_0 round to "
                            "nearest with their scale search)");
    }
    // Types.
    std::vector<RecipeTensor> rt;
    for (const auto& t : src.tensors)
        rt.push_back({t.name, int(t.ne.size()), t.cols});
    const auto choices = recipe_plan(*target, rt, src.n_head, src.n_head_kv, have_imatrix);
    std::map<std::string, int> fallback_groups;
    for (size_t i = 0; i < choices.size(); ++i) {
        const RecipeChoice& c = choices[i];
        if (c.unsupported)
            return make_error("tensor '" + src.tensors[i].name + "': " + c.reason);
        if (c.fallback)
            ++fallback_groups[c.reason];
    }
    // Importance entries must name weight matrices of this model, with their row length.
    std::vector<std::vector<float>> importance(src.tensors.size());
    if (have_imatrix) {
        std::map<std::string, size_t> by_name;
        for (size_t i = 0; i < src.tensors.size(); ++i)
            by_name[src.tensors[i].name] = i;
        for (const auto& [name, e] : imatrix.entries) {
            auto it = by_name.find(name);
            if (it == by_name.end() || !choices[it->second].quantizable)
                return make_error("importance matrix entry '" + printable(name) +
                                  "' names no weight matrix of " + o.input);
            if (int64_t(e.sum2.size()) != src.tensors[it->second].cols) {
                return make_error("importance matrix entry '" + printable(name) + "' has " +
                                  std::to_string(e.sum2.size()) + " columns, the weight " +
                                  std::to_string(src.tensors[it->second].cols));
            }
            importance[it->second] = imatrix.importance(name);
        }
    }

    GgufWriter w;
    src.metadata(w, target->file_type);
    for (size_t i = 0; i < src.tensors.size(); ++i) {
        const SourceTensor& t = src.tensors[i];
        const RecipeChoice& c = choices[i];
        w.add_tensor_dims(t.name, c.type, t.ne);
        QuantizedTensor q;
        q.name = t.name;
        q.type = c.type;
        q.wanted = c.wanted;
        q.rows = t.rows;
        q.cols = t.cols;
        rep.tensors.push_back(q);
        rep.bytes_in += t.rows * dtype_row_bytes(t.type, t.cols);
    }
    rep.fallback_tensors = 0;
    for (const auto& [why, n] : fallback_groups) {
        rep.fallback_tensors += n;
        rep.notes.push_back(std::to_string(n) + (n == 1 ? " tensor: " : " tensors: ") + why);
    }

    const std::string tmp = temp_name_for(o.output);
    auto abandon = [&](Error e) -> Result<QuantizeReport> {
        w.abandon();
        fs::remove(tmp, ec);
        return e;
    };
    if (Status s = w.begin(tmp); !s)
        return abandon(s.error());

    kernels::ThreadPool pool(o.threads);
    QuantizeProgress p;
    p.stage = "quantizing";
    p.tensors_total = int(src.tensors.size());
    p.bytes_total = rep.bytes_in;
    std::vector<uint8_t> out;
    int64_t elems_q = 0, bytes_q = 0;
    for (size_t i = 0; i < src.tensors.size(); ++i) {
        const SourceTensor& t = src.tensors[i];
        const DType type = choices[i].type;
        p.current_tensor = t.name;
        const int64_t row_bytes = dtype_row_bytes(type, t.cols);
        const int64_t in_row_bytes = dtype_row_bytes(t.type, t.cols);
        const float* imp = importance[i].empty() ? nullptr : importance[i].data();
        const int64_t chunk = std::max<int64_t>(1, kChunkElems / std::max<int64_t>(1, t.cols));
        for (int64_t r0 = 0; r0 < t.rows; r0 += chunk) {
            if (cancelled())
                return abandon(make_error("cancelled"));
            const int64_t n = std::min(chunk, t.rows - r0);
            out.resize(size_t(n * row_bytes));
            const int64_t cols = t.cols;
            auto rows_fn = [&](int64_t a, int64_t b) {
                std::vector<float> row(static_cast<size_t>(cols));
                for (int64_t r = a; r < b; ++r) {
                    source_row(t, r0 + r, row.data());
                    kernels::quantize_row(type, row.data(), out.data() + r * row_bytes, cols, imp);
                }
            };
            if (n * cols >= (int64_t(1) << 15))
                pool.parallel_for(n, 1, rows_fn);
            else
                rows_fn(0, n);
            if (Status s = w.append(out.data(), out.size()); !s)
                return abandon(s.error());
            p.bytes_done += n * in_row_bytes;
            p.seconds = seconds();
            if (progress)
                progress(p);
        }
        if (choices[i].quantizable) {
            elems_q += t.rows * t.cols;
            bytes_q += t.rows * row_bytes;
        }
        rep.bytes_out += t.rows * row_bytes;
        p.tensors_done = int(i + 1);
        if (progress)
            progress(p);
    }
    if (cancelled())
        return abandon(make_error("cancelled"));
    p.stage = "writing";
    if (progress)
        progress(p);
    if (Status s = w.finish(); !s)
        return abandon(s.error());
    fs::rename(tmp, o.output, ec);
    if (ec)
        return abandon(
            make_error(o.output + ": cannot rename the finished file into place: " + ec.message()));
    rep.bits_per_weight = elems_q ? double(bytes_q) * 8.0 / double(elems_q) : 0.0;
    rep.seconds = seconds();
    rep.notes.push_back(std::string("recipes of ") + quantize_recipe_version() + "; " +
                        fmt_bpw(rep.bits_per_weight) + " bits per weight over the matrices");
    return rep;
}

} // namespace llmwb
