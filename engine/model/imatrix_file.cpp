#include "engine/model/imatrix_file.h"

#include <cmath>
#include <cstring>

#include "engine/model/byte_reader.h"
#include "engine/model/gguf_file.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/mapped_file.h"

namespace llmwb {

namespace {

constexpr int64_t kMaxEntries = 1 << 20;
constexpr int64_t kMaxCols = int64_t(1) << 24;
constexpr int64_t kMaxName = 4096;

Status check_values(const std::string& file, const std::string& name, const std::vector<float>& v) {
    for (float x : v) {
        if (!std::isfinite(x) || x < 0) {
            return make_error(file + ": entry '" + printable(name) +
                              "' holds a negative or non-finite value");
        }
    }
    return ok_status();
}

Result<ImportanceMatrix> read_gguf_imatrix(const std::string& path) {
    auto f = GgufFile::open(path);
    if (!f)
        return f.error();
    ImportanceMatrix m;
    if (const GgufValue* v = f->find("imatrix.datasets"); v && v->is_array_of(GgufType::String)) {
        for (auto s : v->strings)
            m.datasets.emplace_back(s);
    }
    if (const GgufValue* v = f->find("imatrix.chunk_count"))
        m.chunk_count = int(std::max<int64_t>(0, v->as_int().value_or(0)));
    if (const GgufValue* v = f->find("imatrix.chunk_size"))
        m.chunk_size = int(std::max<int64_t>(0, v->as_int().value_or(0)));
    std::map<std::string, const GgufTensorInfo*> sums, counts;
    for (const auto& t : f->tensors) {
        const bool is_sum = t.name.ends_with(".in_sum2");
        const bool is_count = t.name.ends_with(".counts");
        if (!is_sum && !is_count) {
            return make_error(path + ": tensor '" + printable(t.name) +
                              "' is not <weight>.in_sum2 or <weight>.counts");
        }
        if (t.type != DType::F32)
            return make_error(path + ": tensor '" + printable(t.name) + "' is not F32");
        const std::string base = t.name.substr(0, t.name.size() - (is_sum ? 8 : 7));
        (is_sum ? sums : counts)[base] = &t;
    }
    if (sums.empty())
        return make_error(path + ": no importance entries (<weight>.in_sum2 tensors)");
    for (const auto& [name, s] : sums) {
        auto c = counts.find(name);
        if (c == counts.end())
            return make_error(path + ": '" + printable(name) + "' has in_sum2 but no counts");
        if (s->n_dims > 2 || s->dims[1] != 1 || c->second->n_elements != 1) {
            return make_error(path + ": '" + printable(name) +
                              "' holds several matrices (experts); only dense models are "
                              "supported");
        }
        ImportanceEntry e;
        e.sum2.resize(size_t(s->dims[0]));
        std::memcpy(e.sum2.data(), s->data, e.sum2.size() * sizeof(float));
        std::memcpy(&e.count, c->second->data, sizeof(float));
        if (Status st = check_values(path, name, e.sum2); !st)
            return st.error();
        if (!std::isfinite(e.count) || e.count < 0)
            return make_error(path + ": '" + printable(name) + "' has a bad count");
        m.entries.emplace(name, std::move(e));
    }
    for (const auto& [name, c] : counts) {
        (void)c;
        if (!sums.count(name))
            return make_error(path + ": '" + printable(name) + "' has counts but no in_sum2");
    }
    return m;
}

// Legacy: int32 n_entries; per entry int32 name length, name, int32 ncall, int32 nval,
// float[nval] (mean x^2 times ncall); then optionally int32 last_call, int32 length, dataset.
Result<ImportanceMatrix> read_legacy_imatrix(const std::string& path,
                                             std::span<const uint8_t> bytes) {
    ByteReader r(bytes);
    ImportanceMatrix m;
    const int32_t n = r.read<int32_t>("entry count");
    if (r.ok() && (n <= 0 || n > kMaxEntries))
        return make_error(path + ": not an imatrix file (bad entry count " + std::to_string(n) +
                          ")");
    for (int32_t i = 0; i < n && r.ok(); ++i) {
        const int32_t len = r.read<int32_t>("name length");
        if (r.ok() && (len <= 0 || len > kMaxName))
            return make_error(path + ": entry " + std::to_string(i) + ": bad name length");
        std::string name(r.read_bytes(uint64_t(std::max(len, 0)), "name"));
        const int32_t ncall = r.read<int32_t>("call count");
        const int32_t nval = r.read<int32_t>("value count");
        if (!r.ok())
            break;
        if (ncall <= 0 || nval <= 0 || nval > kMaxCols)
            return make_error(path + ": entry '" + printable(name) + "': bad counts");
        if (r.remaining() < uint64_t(nval) * 4)
            return make_error(path + ": entry '" + printable(name) + "': truncated values");
        ImportanceEntry e;
        e.sum2.resize(size_t(nval));
        std::memcpy(e.sum2.data(), r.read_bytes(uint64_t(nval) * 4, "values").data(),
                    size_t(nval) * 4);
        e.count = float(ncall);
        if (Status st = check_values(path, name, e.sum2); !st)
            return st.error();
        if (!m.entries.emplace(name, std::move(e)).second)
            return make_error(path + ": duplicate entry '" + printable(name) + "'");
    }
    if (!r.ok())
        return make_error(path + ": " + r.error());
    if (r.remaining() >= 8) {
        m.chunk_count = std::max(0, r.read<int32_t>("last call"));
        const int32_t len = r.read<int32_t>("dataset length");
        if (r.ok() && len > 0 && len <= kMaxName && uint64_t(len) <= r.remaining())
            m.datasets.emplace_back(r.read_bytes(uint64_t(len), "dataset"));
    }
    return m;
}

} // namespace

std::vector<float> ImportanceMatrix::importance(const std::string& name) const {
    auto it = entries.find(name);
    if (it == entries.end())
        return {};
    const ImportanceEntry& e = it->second;
    std::vector<float> w(e.sum2.size(), 1.0f);
    if (e.count > 0) {
        for (size_t i = 0; i < w.size(); ++i)
            w[i] = e.sum2[i] / e.count;
    }
    return w;
}

Result<ImportanceMatrix> read_imatrix(const std::string& path) {
    auto mf = MappedFile::open(path);
    if (!mf)
        return mf.error();
    auto bytes = mf.value()->bytes();
    if (bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0)
        return read_gguf_imatrix(path);
    return read_legacy_imatrix(path, bytes);
}

Status write_imatrix(const ImportanceMatrix& m, const std::string& path) {
    GgufWriter w;
    w.add_string("general.type", "imatrix");
    w.add_string_array("imatrix.datasets", m.datasets);
    w.add_u32("imatrix.chunk_count", uint32_t(m.chunk_count));
    w.add_u32("imatrix.chunk_size", uint32_t(m.chunk_size));
    for (const auto& [name, e] : m.entries) {
        w.add_tensor(name + ".in_sum2", DType::F32, 1, int64_t(e.sum2.size()));
        w.add_tensor(name + ".counts", DType::F32, 1, 1);
    }
    if (Status s = w.begin(path); !s)
        return s;
    for (const auto& [name, e] : m.entries) {
        (void)name;
        if (Status s = w.append(e.sum2.data(), e.sum2.size() * sizeof(float)); !s)
            return s;
        if (Status s = w.append(&e.count, sizeof(float)); !s)
            return s;
    }
    return w.finish();
}

} // namespace llmwb
