#include "gguf_image.h"

#include <algorithm>
#include <cstring>

std::string GgufImage::u32(uint32_t v) {
    std::string s(4, '\0');
    std::memcpy(s.data(), &v, 4);
    return s;
}
std::string GgufImage::u64(uint64_t v) {
    std::string s(8, '\0');
    std::memcpy(s.data(), &v, 8);
    return s;
}
std::string GgufImage::str(const std::string& s) {
    return u64(s.size()) + s;
}

GgufImage GgufImage::from(const llmwb::GgufFile& f, std::span<const uint8_t> bytes) {
    GgufImage img;
    img.version = f.version;
    img.alignment = f.alignment;
    for (const auto& [k, v] : f.metadata) {
        img.kvs.push_back(
            {k, uint32_t(v.type),
             std::string(reinterpret_cast<const char*>(v.encoded.data()), v.encoded.size())});
    }
    for (const auto& t : f.tensors) {
        Tensor x;
        x.name = t.name;
        x.ne.assign(t.dims, t.dims + t.n_dims);
        x.type = uint32_t(t.type);
        x.offset = uint64_t(t.offset);
        img.tensors.push_back(x);
    }
    img.data.assign(reinterpret_cast<const char*>(bytes.data()) + f.data_offset,
                    bytes.size() - size_t(f.data_offset));
    return img;
}

std::string GgufImage::serialize() const {
    std::string out = "GGUF" + u32(version);
    out += u64(n_tensors_override ? *n_tensors_override : tensors.size());
    out += u64(n_kv_override ? *n_kv_override : kvs.size());
    for (const auto& kv : kvs)
        out += str(kv.key) + u32(kv.type) + kv.encoded;
    for (const auto& t : tensors) {
        out += str(t.name) + u32(uint32_t(t.ne.size()));
        for (uint64_t d : t.ne)
            out += u64(d);
        out += u32(t.type) + u64(t.offset);
    }
    while (out.size() % alignment != 0)
        out += '\0';
    return out + data;
}

GgufImage::Kv* GgufImage::kv(const std::string& key) {
    for (auto& k : kvs) {
        if (k.key == key)
            return &k;
    }
    return nullptr;
}

GgufImage::Tensor* GgufImage::tensor(const std::string& name) {
    for (auto& t : tensors) {
        if (t.name == name)
            return &t;
    }
    return nullptr;
}

void GgufImage::remove_kv(const std::string& key) {
    kvs.erase(std::remove_if(kvs.begin(), kvs.end(), [&](const Kv& k) { return k.key == key; }),
              kvs.end());
}

void GgufImage::remove_tensor(const std::string& name) {
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [&](const Tensor& t) { return t.name == name; }),
                  tensors.end());
}
