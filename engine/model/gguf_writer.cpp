#include "engine/model/gguf_writer.h"

#include <cstring>

#include "engine/model/gguf_file.h"

namespace llmwb {

template <class T> void GgufWriter::put(std::string& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}

void GgufWriter::put_string(std::string& out, const std::string& s) {
    put<uint64_t>(out, s.size());
    out += s;
}

void GgufWriter::begin_kv(const std::string& key, uint32_t type) {
    put_string(kv_, key);
    put<uint32_t>(kv_, type);
    ++n_kv_;
}

void GgufWriter::add_u32(const std::string& key, uint32_t v) {
    begin_kv(key, uint32_t(GgufType::U32));
    put(kv_, v);
}
void GgufWriter::add_i32(const std::string& key, int32_t v) {
    begin_kv(key, uint32_t(GgufType::I32));
    put(kv_, v);
}
void GgufWriter::add_f32(const std::string& key, float v) {
    begin_kv(key, uint32_t(GgufType::F32));
    put(kv_, v);
}
void GgufWriter::add_bool(const std::string& key, bool v) {
    begin_kv(key, uint32_t(GgufType::Bool));
    put<uint8_t>(kv_, v ? 1 : 0);
}
void GgufWriter::add_string(const std::string& key, const std::string& v) {
    begin_kv(key, uint32_t(GgufType::String));
    put_string(kv_, v);
}
void GgufWriter::add_string_array(const std::string& key, const std::vector<std::string>& v) {
    begin_kv(key, uint32_t(GgufType::Array));
    put<uint32_t>(kv_, uint32_t(GgufType::String));
    put<uint64_t>(kv_, v.size());
    for (const auto& s : v)
        put_string(kv_, s);
}
void GgufWriter::add_f32_array(const std::string& key, const std::vector<float>& v) {
    begin_kv(key, uint32_t(GgufType::Array));
    put<uint32_t>(kv_, uint32_t(GgufType::F32));
    put<uint64_t>(kv_, v.size());
    for (float x : v)
        put(kv_, x);
}
void GgufWriter::add_i32_array(const std::string& key, const std::vector<int32_t>& v) {
    begin_kv(key, uint32_t(GgufType::Array));
    put<uint32_t>(kv_, uint32_t(GgufType::I32));
    put<uint64_t>(kv_, v.size());
    for (int32_t x : v)
        put(kv_, x);
}

void GgufWriter::add_u64(const std::string& key, uint64_t v) {
    begin_kv(key, uint32_t(GgufType::U64));
    put(kv_, v);
}

void GgufWriter::add_raw(const std::string& key, uint32_t type, const void* encoded, size_t bytes) {
    begin_kv(key, type);
    kv_.append(static_cast<const char*>(encoded), bytes);
}

void GgufWriter::add_tensor(const std::string& name, DType type, int64_t rows, int64_t cols,
                            bool one_dim) {
    add_tensor_dims(name, type,
                    one_dim ? std::vector<uint64_t>{uint64_t(cols)}
                            : std::vector<uint64_t>{uint64_t(cols), uint64_t(rows)});
}

void GgufWriter::add_tensor_dims(const std::string& name, DType type,
                                 const std::vector<uint64_t>& ne) {
    Tensor t;
    t.name = name;
    t.type = type;
    t.ne = ne;
    uint64_t rows = 1;
    for (size_t i = 1; i < ne.size(); ++i)
        rows *= ne[i];
    t.bytes = rows * uint64_t(dtype_row_bytes(type, int64_t(ne.empty() ? 0 : ne[0])));
    uint64_t off = 0;
    if (!tensors_.empty()) {
        const Tensor& p = tensors_.back();
        off = (p.offset + p.bytes + kAlignment - 1) / kAlignment * kAlignment;
    }
    t.offset = off;
    tensors_.push_back(std::move(t));
}

Status GgufWriter::pad(uint64_t m) {
    static const char zeros[64] = {};
    uint64_t n = (m - pos_ % m) % m;
    out_.write(zeros, std::streamsize(n));
    pos_ += n;
    return out_ ? ok_status() : make_error(path_ + ": write failed");
}

Status GgufWriter::begin(const std::string& path) {
    path_ = path;
    out_.open(path, std::ios::binary | std::ios::trunc);
    if (!out_)
        return make_error(path + ": cannot create file");
    std::string h = "GGUF";
    put<uint32_t>(h, 3);
    put<uint64_t>(h, tensors_.size());
    put<uint64_t>(h, n_kv_);
    h += kv_;
    for (const Tensor& t : tensors_) {
        put_string(h, t.name);
        put<uint32_t>(h, uint32_t(t.ne.size()));
        for (uint64_t d : t.ne)
            put<uint64_t>(h, d);
        put<uint32_t>(h, uint32_t(t.type));
        put<uint64_t>(h, t.offset);
    }
    out_.write(h.data(), std::streamsize(h.size()));
    pos_ = h.size();
    kv_.clear();
    cur_ = 0;
    cur_written_ = 0;
    return pad(kAlignment);
}

Status GgufWriter::append(const void* data, size_t bytes) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
        if (cur_ >= tensors_.size())
            return make_error(path_ + ": more tensor data than declared");
        const Tensor& t = tensors_[cur_];
        uint64_t n = std::min<uint64_t>(bytes, t.bytes - cur_written_);
        out_.write(p, std::streamsize(n));
        pos_ += n;
        p += n;
        bytes -= n;
        cur_written_ += n;
        if (cur_written_ == t.bytes) {
            ++cur_;
            cur_written_ = 0;
            if (cur_ < tensors_.size()) {
                Status s = pad(kAlignment);
                if (!s)
                    return s;
            }
        }
    }
    return out_ ? ok_status() : make_error(path_ + ": write failed");
}

void GgufWriter::abandon() {
    if (out_.is_open())
        out_.close();
}

Status GgufWriter::finish() {
    if (cur_ != tensors_.size())
        return make_error(path_ + ": tensor data incomplete");
    out_.close();
    if (!out_)
        return make_error(path_ + ": write failed");
    return ok_status();
}

} // namespace llmwb
