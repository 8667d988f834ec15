// Result<T>: a value or an error message. Used for everything that reads external input
// (model files, tokenizer files, templates, JSON): such input never asserts or aborts.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace llmwb {

struct Error {
    std::string message; // one line, names the file/construct and the reason
};

template <class T> class [[nodiscard]] Result {
  public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error e) : v_(std::move(e)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(v_); }
    const T& value() const& { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<1>(v_); }
    const std::string& message() const { return error().message; }

  private:
    std::variant<T, Error> v_;
};

// Result<void>
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() {
    return Ok{};
}

inline Error make_error(std::string msg) {
    return Error{std::move(msg)};
}

} // namespace llmwb
