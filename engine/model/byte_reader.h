// Bounded little-endian reads from a byte span. Every read checks the remaining bytes first;
// a failed read sets an error (first one wins) and returns zero/empty, so parsers can check
// ok() once per record. Counts are capped and sizes multiplied with overflow checks.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace llmwb {

// a * b, or nullopt when the product overflows int64 or an operand is negative.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
    if (a < 0 || b < 0)
        return std::nullopt;
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        return std::nullopt;
    return r;
}
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
    if (a < 0 || b < 0)
        return std::nullopt;
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        return std::nullopt;
    return r;
}

class ByteReader {
  public:
    explicit ByteReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

    bool ok() const { return error_.empty(); }
    const std::string& error() const { return error_; }
    void fail(std::string message) {
        if (error_.empty())
            error_ = std::move(message);
    }

    size_t offset() const { return pos_; }
    size_t size() const { return bytes_.size(); }
    size_t remaining() const { return bytes_.size() - pos_; }

    // Reads a trivially copyable little-endian value (the host is little-endian: x86/ARM).
    template <class T> T read(const char* what) {
        static_assert(std::is_trivially_copyable_v<T>);
        T v{};
        if (!ok())
            return v;
        if (remaining() < sizeof(T)) {
            fail(std::string("truncated: ") + what + " needs " + std::to_string(sizeof(T)) +
                 " bytes at offset " + std::to_string(pos_) + ", " + std::to_string(remaining()) +
                 " left");
            return v;
        }
        std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    // A view of the next n bytes (empty + error when fewer remain).
    std::string_view read_bytes(uint64_t n, const char* what) {
        if (!ok())
            return {};
        if (n > remaining()) {
            fail("truncated: " + std::string(what) + " length " + std::to_string(n) +
                 " exceeds the " + std::to_string(remaining()) + " bytes left at offset " +
                 std::to_string(pos_));
            return {};
        }
        std::string_view s(reinterpret_cast<const char*>(bytes_.data() + pos_),
                           static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n);
        return s;
    }

    // Skips n bytes (error when fewer remain).
    void skip(uint64_t n, const char* what) { (void)read_bytes(n, what); }

    // Checks that `count` items of at least `min_item_bytes` each could still follow; use it
    // before reserving memory for a count read from the input.
    bool check_count(uint64_t count, uint64_t min_item_bytes, const char* what) {
        if (!ok())
            return false;
        if (min_item_bytes == 0)
            min_item_bytes = 1;
        if (count > remaining() / min_item_bytes) {
            fail(std::string(what) + " count " + std::to_string(count) + " is too large for the " +
                 std::to_string(remaining()) + " bytes left (truncated or corrupt)");
            return false;
        }
        return true;
    }

  private:
    std::span<const uint8_t> bytes_;
    size_t pos_ = 0;
    std::string error_;
};

} // namespace llmwb

namespace llmwb {

// Text from an untrusted file made safe for a one-line message: control characters and
// non-ASCII bytes are escaped, long text is cut.
inline std::string printable(std::string_view s, size_t max_len = 80) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < s.size() && i < max_len; ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (s.size() > max_len)
        out += "...";
    return out;
}

} // namespace llmwb
