#include "engine/model/gguf_file.h"

#include <algorithm>
#include <cstring>

#include "engine/model/byte_reader.h"

namespace llmwb {

namespace {

constexpr uint64_t kMaxStringLength = uint64_t(1) << 30; // 1 GiB: far above any real key/value
constexpr uint32_t kMaxGgufDims = 4;

} // namespace

const char* gguf_type_name(GgufType t) {
    switch (t) {
    case GgufType::U8:
        return "uint8";
    case GgufType::I8:
        return "int8";
    case GgufType::U16:
        return "uint16";
    case GgufType::I16:
        return "int16";
    case GgufType::U32:
        return "uint32";
    case GgufType::I32:
        return "int32";
    case GgufType::F32:
        return "float32";
    case GgufType::Bool:
        return "bool";
    case GgufType::String:
        return "string";
    case GgufType::Array:
        return "array";
    case GgufType::U64:
        return "uint64";
    case GgufType::I64:
        return "int64";
    case GgufType::F64:
        return "float64";
    }
    return "unknown";
}

size_t gguf_scalar_size(GgufType t) {
    switch (t) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::Bool:
        return 1;
    case GgufType::U16:
    case GgufType::I16:
        return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32:
        return 4;
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64:
        return 8;
    case GgufType::String:
    case GgufType::Array:
        return 0;
    }
    return 0;
}

const char* ggml_type_name(uint32_t id) {
    static const char* const names[] = {
        "F32",     "F16",    "Q4_0",    "Q4_1",  "Q4_2",   "Q4_3",  "Q5_0",  "Q5_1",
        "Q8_0",    "Q8_1",   "Q2_K",    "Q3_K",  "Q4_K",   "Q5_K",  "Q6_K",  "Q8_K",
        "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
        "I8",      "I16",    "I32",     "I64",   "F64",    "IQ1_M", "BF16"};
    if (id < sizeof(names) / sizeof(names[0]))
        return names[id];
    return "unknown";
}

bool GgufValue::is_integer() const {
    switch (type) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::U16:
    case GgufType::I16:
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::U64:
    case GgufType::I64:
        return true;
    default:
        return false;
    }
}

std::optional<int64_t> GgufValue::as_int() const {
    if (!is_integer())
        return std::nullopt;
    if (type == GgufType::U64 && u > uint64_t(INT64_MAX))
        return std::nullopt;
    return i;
}

std::optional<double> GgufValue::as_number() const {
    if (is_float())
        return f;
    if (is_integer())
        return type == GgufType::U64 ? double(u) : double(i);
    return std::nullopt;
}

std::optional<bool> GgufValue::as_bool() const {
    if (type == GgufType::Bool)
        return b;
    return std::nullopt;
}

std::optional<std::string> GgufValue::as_string() const {
    if (type == GgufType::String)
        return std::string(str);
    return std::nullopt;
}

namespace {

template <class T> T load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

// Decodes the scalar at p (of a type with gguf_scalar_size > 0) into v.
void decode_scalar(GgufType t, const char* p, GgufValue& v) {
    switch (t) {
    case GgufType::U8:
        v.u = load<uint8_t>(p);
        v.i = int64_t(v.u);
        break;
    case GgufType::I8:
        v.i = load<int8_t>(p);
        v.u = uint64_t(v.i);
        break;
    case GgufType::U16:
        v.u = load<uint16_t>(p);
        v.i = int64_t(v.u);
        break;
    case GgufType::I16:
        v.i = load<int16_t>(p);
        v.u = uint64_t(v.i);
        break;
    case GgufType::U32:
        v.u = load<uint32_t>(p);
        v.i = int64_t(v.u);
        break;
    case GgufType::I32:
        v.i = load<int32_t>(p);
        v.u = uint64_t(v.i);
        break;
    case GgufType::U64:
        v.u = load<uint64_t>(p);
        v.i = int64_t(v.u);
        break;
    case GgufType::I64:
        v.i = load<int64_t>(p);
        v.u = uint64_t(v.i);
        break;
    case GgufType::F32:
        v.f = load<float>(p);
        break;
    case GgufType::F64:
        v.f = load<double>(p);
        break;
    case GgufType::Bool:
        v.b = load<uint8_t>(p) != 0;
        v.u = v.b;
        v.i = v.b;
        break;
    default:
        break;
    }
}

} // namespace

double GgufValue::array_number(uint64_t idx) const {
    GgufValue tmp;
    size_t sz = gguf_scalar_size(elem_type);
    decode_scalar(elem_type, elems.data() + idx * sz, tmp);
    if (elem_type == GgufType::F32 || elem_type == GgufType::F64)
        return tmp.f;
    if (elem_type == GgufType::U64)
        return double(tmp.u);
    return double(tmp.i);
}

int64_t GgufValue::array_int(uint64_t idx) const {
    GgufValue tmp;
    size_t sz = gguf_scalar_size(elem_type);
    decode_scalar(elem_type, elems.data() + idx * sz, tmp);
    if (elem_type == GgufType::F32 || elem_type == GgufType::F64)
        return int64_t(tmp.f);
    return tmp.i;
}

const GgufValue* GgufFile::find(std::string_view key) const {
    auto it = kv_index_.find(std::string(key));
    return it == kv_index_.end() ? nullptr : &metadata[it->second].second;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
    auto it = tensor_index_.find(std::string(name));
    return it == tensor_index_.end() ? nullptr : &tensors[it->second];
}

class GgufParser {
  public:
    GgufParser(std::span<const uint8_t> bytes, const std::string& name)
        : bytes_(bytes), r_(bytes), name_(name) {}

    Result<GgufFile> run() {
        GgufFile f;
        if (!parse_header(f) || !parse_metadata(f) || !parse_tensor_infos(f) || !place_tensors(f)) {
            return make_error(name_ + ": " + (r_.ok() ? err_ : r_.error()));
        }
        return f;
    }

  private:
    bool fail(std::string msg) {
        if (err_.empty())
            err_ = std::move(msg);
        return false;
    }
    bool check() { return r_.ok() && err_.empty(); }

    std::string_view read_string(const char* what) {
        uint64_t n = r_.read<uint64_t>(what);
        if (!r_.ok())
            return {};
        if (n > kMaxStringLength) {
            r_.fail(std::string(what) + " length " + std::to_string(n) + " is too large");
            return {};
        }
        return r_.read_bytes(n, what);
    }

    bool parse_header(GgufFile& f) {
        if (bytes_.size() < 4 || std::memcmp(bytes_.data(), "GGUF", 4) != 0) {
            return fail("not a GGUF file (bad magic)");
        }
        r_.skip(4, "magic");
        f.version = r_.read<uint32_t>("header version");
        if (!r_.ok())
            return false;
        if (f.version != 2 && f.version != 3) {
            return fail("unsupported GGUF version " + std::to_string(f.version) +
                        " (supported: 2, 3)");
        }
        n_tensors_ = r_.read<uint64_t>("header tensor count");
        n_kv_ = r_.read<uint64_t>("header key/value count");
        if (!r_.ok())
            return false;
        // A key/value needs at least 12 bytes (key length + type), a tensor info 32.
        if (!r_.check_count(n_kv_, 12, "key/value"))
            return false;
        if (!r_.check_count(n_tensors_, 32, "tensor"))
            return false;
        return true;
    }

    bool parse_value(GgufType t, GgufValue& v, const std::string& key) {
        v.type = t;
        size_t start = r_.offset();
        if (t == GgufType::String) {
            v.str = read_string("string value");
        } else if (t == GgufType::Array) {
            uint32_t et = r_.read<uint32_t>("array element type");
            uint64_t n = r_.read<uint64_t>("array length");
            if (!r_.ok())
                return false;
            v.elem_type = static_cast<GgufType>(et);
            v.count = n;
            if (v.elem_type == GgufType::Array) {
                return fail("key '" + printable(key) + "': nested arrays are not supported");
            }
            if (v.elem_type == GgufType::String) {
                if (!r_.check_count(n, 8, "string array"))
                    return false;
                v.strings.reserve(n);
                for (uint64_t i = 0; i < n && r_.ok(); ++i) {
                    v.strings.push_back(read_string("array string"));
                }
            } else {
                size_t sz = gguf_scalar_size(v.elem_type);
                if (sz == 0) {
                    return fail("key '" + printable(key) + "': unknown array element type " +
                                std::to_string(et));
                }
                if (!r_.check_count(n, sz, "array"))
                    return false;
                v.elems = r_.read_bytes(n * sz, "array data");
            }
        } else {
            size_t sz = gguf_scalar_size(t);
            if (sz == 0) {
                return fail("key '" + printable(key) + "': unknown value type " +
                            std::to_string(static_cast<uint32_t>(t)));
            }
            std::string_view raw = r_.read_bytes(sz, "value");
            if (!r_.ok())
                return false;
            decode_scalar(t, raw.data(), v);
        }
        if (!r_.ok())
            return false;
        v.encoded = bytes_.subspan(start, r_.offset() - start);
        return true;
    }

    bool parse_metadata(GgufFile& f) {
        f.metadata.reserve(n_kv_);
        for (uint64_t k = 0; k < n_kv_; ++k) {
            std::string key(read_string("key"));
            uint32_t t = r_.read<uint32_t>("value type");
            if (!r_.ok())
                return false;
            if (key.empty())
                return fail("key/value " + std::to_string(k) + " has an empty key");
            GgufValue v;
            if (!parse_value(static_cast<GgufType>(t), v, key))
                return false;
            if (!f.kv_index_.emplace(key, f.metadata.size()).second) {
                return fail("duplicate key '" + printable(key) + "'");
            }
            f.metadata.emplace_back(std::move(key), std::move(v));
        }
        if (const GgufValue* a = f.find("general.alignment")) {
            auto n = a->as_int();
            if (a->type != GgufType::U32 || !n || *n == 0 || (*n & (*n - 1)) != 0) {
                return fail("bad alignment: general.alignment must be a power-of-two uint32");
            }
            f.alignment = static_cast<uint32_t>(*n);
        }
        return true;
    }

    bool parse_tensor_infos(GgufFile& f) {
        f.tensors.reserve(n_tensors_);
        for (uint64_t k = 0; k < n_tensors_; ++k) {
            GgufTensorInfo t;
            t.info_offset = r_.offset();
            t.name = std::string(read_string("tensor name"));
            t.n_dims = r_.read<uint32_t>("tensor n_dims");
            if (!r_.ok())
                return false;
            std::string tn = "tensor '" + printable(t.name) + "'";
            if (t.n_dims == 0 || t.n_dims > kMaxGgufDims) {
                return fail(tn + ": n_dims " + std::to_string(t.n_dims) + " is outside 1..4");
            }
            int64_t n = 1;
            for (uint32_t d = 0; d < t.n_dims; ++d) {
                uint64_t dim = r_.read<uint64_t>("tensor dimension");
                if (!r_.ok())
                    return false;
                if (dim == 0)
                    return fail(tn + ": zero dimension " + std::to_string(d));
                if (dim > uint64_t(INT64_MAX))
                    return fail(tn + ": dimension overflow");
                t.dims[d] = int64_t(dim);
                auto m = checked_mul(n, t.dims[d]);
                if (!m)
                    return fail(tn + ": element count overflows (dimension overflow)");
                n = *m;
            }
            t.n_elements = n;
            uint32_t type_id = r_.read<uint32_t>("tensor type");
            t.offset = int64_t(r_.read<uint64_t>("tensor offset"));
            if (!r_.ok())
                return false;
            auto dt = dtype_from_ggml(type_id);
            if (!dt) {
                return fail(tn + ": unsupported tensor type id " + std::to_string(type_id) + " (" +
                            ggml_type_name(type_id) + ")");
            }
            t.type = *dt;
            int64_t be = dtype_block_elems(t.type);
            if (t.dims[0] % be != 0) {
                return fail(tn + ": row length " + std::to_string(t.dims[0]) +
                            " is not a multiple of the " + dtype_name(t.type) + " block size " +
                            std::to_string(be));
            }
            auto bytes = checked_mul(n / be, dtype_block_bytes(t.type));
            if (!bytes)
                return fail(tn + ": byte size overflows (dimension overflow)");
            t.bytes = *bytes;
            if (t.offset < 0)
                return fail(tn + ": offset outside the file");
            if (!f.tensor_index_.emplace(t.name, f.tensors.size()).second) {
                return fail("duplicate tensor '" + printable(t.name) + "'");
            }
            f.tensors.push_back(std::move(t));
        }
        return true;
    }

    bool place_tensors(GgufFile& f) {
        uint64_t pos = r_.offset();
        uint64_t aligned = (pos + f.alignment - 1) / f.alignment * f.alignment;
        f.data_offset = int64_t(aligned);
        const int64_t file_size = int64_t(bytes_.size());
        if (f.tensors.empty())
            return true;
        if (f.data_offset > file_size) {
            return fail("truncated: data section starts at " + std::to_string(f.data_offset) +
                        " beyond the end of the file (" + std::to_string(file_size) + " bytes)");
        }
        const int64_t data_size = file_size - f.data_offset;
        for (auto& t : f.tensors) {
            std::string tn = "tensor '" + printable(t.name) + "'";
            if (t.offset % f.alignment != 0) {
                return fail(tn + ": offset " + std::to_string(t.offset) + " is not aligned to " +
                            std::to_string(f.alignment));
            }
            auto end = checked_add(t.offset, t.bytes);
            if (!end || *end > data_size) {
                return fail(tn + ": data [" + std::to_string(t.offset) + ", +" +
                            std::to_string(t.bytes) + ") is outside the file (data section " +
                            std::to_string(data_size) + " bytes; truncated data?)");
            }
            t.data = bytes_.data() + f.data_offset + t.offset;
        }
        std::vector<const GgufTensorInfo*> order;
        order.reserve(f.tensors.size());
        for (auto& t : f.tensors)
            order.push_back(&t);
        std::sort(order.begin(), order.end(),
                  [](auto* a, auto* b) { return a->offset < b->offset; });
        for (size_t i = 1; i < order.size(); ++i) {
            if (order[i]->offset < order[i - 1]->offset + order[i - 1]->bytes) {
                return fail("tensors '" + printable(order[i - 1]->name) + "' and '" +
                            printable(order[i]->name) + "' overlap");
            }
        }
        return true;
    }

    std::span<const uint8_t> bytes_;
    ByteReader r_;
    std::string name_;
    std::string err_;
    uint64_t n_tensors_ = 0, n_kv_ = 0;
};

Result<GgufFile> GgufFile::parse(std::span<const uint8_t> bytes, const std::string& name) {
    return GgufParser(bytes, name).run();
}

Result<GgufFile> GgufFile::open(const std::string& path) {
    auto m = MappedFile::open(path);
    if (!m)
        return m.error();
    auto f = parse(m.value()->bytes(), path);
    if (!f)
        return f.error();
    f->mapping = std::move(m.value());
    return f;
}

} // namespace llmwb
