#include "engine/model/safetensors_writer.h"

#include <nlohmann/json.hpp>

namespace llmwb {

void SafetensorsWriter::add_tensor(const std::string& name, DType type,
                                   std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    tensors_.push_back({name, type, std::move(shape), uint64_t(n * dtype_block_bytes(type))});
}

Status SafetensorsWriter::begin(const std::string& path,
                                const std::map<std::string, std::string>& metadata) {
    path_ = path;
    nlohmann::ordered_json h = nlohmann::ordered_json::object();
    if (!metadata.empty())
        h["__metadata__"] = metadata;
    uint64_t off = 0;
    for (const Tensor& t : tensors_) {
        h[t.name] = {{"dtype", dtype_name(t.type)},
                     {"shape", t.shape},
                     {"data_offsets", {off, off + t.bytes}}};
        off += t.bytes;
    }
    total_ = off;
    std::string js = h.dump();
    while ((8 + js.size()) % 32 != 0)
        js += ' ';
    out_.open(path, std::ios::binary | std::ios::trunc);
    if (!out_)
        return make_error(path + ": cannot create file");
    uint64_t len = js.size();
    out_.write(reinterpret_cast<const char*>(&len), 8);
    out_.write(js.data(), std::streamsize(js.size()));
    return out_ ? ok_status() : make_error(path + ": write failed");
}

Status SafetensorsWriter::append(const void* data, size_t bytes) {
    if (written_ + bytes > total_)
        return make_error(path_ + ": more tensor data than declared");
    out_.write(static_cast<const char*>(data), std::streamsize(bytes));
    written_ += bytes;
    return out_ ? ok_status() : make_error(path_ + ": write failed");
}

Status SafetensorsWriter::finish() {
    if (written_ != total_)
        return make_error(path_ + ": tensor data incomplete");
    out_.close();
    if (!out_)
        return make_error(path_ + ": write failed");
    return ok_status();
}

} // namespace llmwb
