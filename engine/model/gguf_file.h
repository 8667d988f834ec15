// A parsed GGUF (v2/v3) file: metadata key/values, tensor infos and the data section.
// Parsing is bounded (see byte_reader.h): every count, length, dimension, offset and
// alignment is validated; the first defect is an Error "<file>: <reason>". Values and tensor
// data are views into the parsed bytes, which must outlive the GgufFile (open() keeps its
// mapping in `mapping`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/mapped_file.h"
#include "engine/util/result.h"
#include "kernels/cpu/dtype.h"

namespace llmwb {

enum class GgufType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};
const char* gguf_type_name(GgufType t);
// Size of a scalar of type t (0 for String/Array/unknown).
size_t gguf_scalar_size(GgufType t);
// GGML tensor type name for any id ("Q5_K", ...), or "unknown".
const char* ggml_type_name(uint32_t id);

struct GgufValue {
    GgufType type = GgufType::U8;
    // Scalars (numbers converted; the original type is `type`).
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    bool b = false;
    std::string_view str; // String
    // Arrays.
    GgufType elem_type = GgufType::U8;
    uint64_t count = 0;
    std::string_view elems;                // numeric arrays: count * elem size bytes
    std::vector<std::string_view> strings; // string arrays
    // The value's encoded bytes (after the type id), for tools and tests.
    std::span<const uint8_t> encoded;

    bool is_integer() const;
    bool is_float() const { return type == GgufType::F32 || type == GgufType::F64; }
    std::optional<int64_t> as_int() const;   // any integer type (u64 above int64 -> nullopt)
    std::optional<double> as_number() const; // integer or float
    std::optional<bool> as_bool() const;
    std::optional<std::string> as_string() const;
    bool is_array_of(GgufType t) const { return type == GgufType::Array && elem_type == t; }
    // Element i of a numeric array as double / int64 (precondition: i < count, numeric).
    double array_number(uint64_t i) const;
    int64_t array_int(uint64_t i) const;
};

struct GgufTensorInfo {
    std::string name;
    DType type = DType::F32;
    uint32_t n_dims = 0;
    int64_t dims[4] = {1, 1, 1, 1}; // dims[0] is the contiguous (column) dimension
    int64_t offset = 0;             // relative to the data section
    int64_t n_elements = 0;
    int64_t bytes = 0;
    const uint8_t* data = nullptr;
    size_t info_offset = 0; // where the tensor info record starts in the file

    int64_t cols() const { return dims[0]; }
    int64_t rows() const { return n_elements / dims[0]; }
};

class GgufFile {
  public:
    // Parses an in-memory image; `name` prefixes error messages.
    static Result<GgufFile> parse(std::span<const uint8_t> bytes, const std::string& name);
    // Maps and parses a file.
    static Result<GgufFile> open(const std::string& path);

    uint32_t version = 0;
    uint32_t alignment = 32;
    int64_t data_offset = 0; // start of the data section in the file
    std::vector<std::pair<std::string, GgufValue>> metadata; // in file order
    std::vector<GgufTensorInfo> tensors;                     // in file order
    std::shared_ptr<MappedFile> mapping;                     // set by open()

    const GgufValue* find(std::string_view key) const;
    const GgufTensorInfo* find_tensor(std::string_view name) const;

  private:
    std::unordered_map<std::string, size_t> kv_index_;
    std::unordered_map<std::string, size_t> tensor_index_;
    friend class GgufParser;
};

} // namespace llmwb
