#include "engine/chat/operators.h"

#include <cmath>

#include "engine/chat/render_budget.h"

namespace llmwb::jinja {

namespace {

Error unsupported(const std::string& op, const Value& a, const Value& b) {
    return make_error("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" +
                      type_name(b) + "'");
}

Error overflow() {
    return make_error("integer overflow");
}

// The result's size is computed (with overflow checks) and refused by the render budget before
// anything is made.
Result<Value> repeat(const Value& seq, int64_t n) {
    if (n < 0)
        n = 0;
    if (seq.is_string()) {
        const std::string& s = seq.as_string();
        uint64_t bytes = 0;
        if (__builtin_mul_overflow(uint64_t(s.size()), uint64_t(n), &bytes) ||
            !budget_require(bytes))
            return make_error(budget_error_text());
        if (s.size() == 1)
            return Value(std::string(size_t(n), s[0]));
        std::string out;
        out.reserve(s.size() * size_t(n));
        for (int64_t i = 0; i < n; ++i)
            out += s;
        return Value(std::move(out));
    }
    const auto& items = seq.as_list().items;
    uint64_t item_bytes = 0;
    for (const auto& e : items)
        item_bytes += shallow_bytes(e);
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(item_bytes, uint64_t(n), &bytes) || !budget_require(bytes))
        return make_error(budget_error_text());
    std::vector<Value> out;
    for (int64_t i = 0; i < n; ++i)
        out.insert(out.end(), items.begin(), items.end());
    return Value::list(std::move(out), seq.as_list().is_tuple);
}

Result<Value> int_pow(int64_t base, int64_t exp) {
    int64_t result = 1;
    while (exp > 0) {
        if (exp & 1)
            if (__builtin_mul_overflow(result, base, &result))
                return overflow();
        exp >>= 1;
        if (exp && __builtin_mul_overflow(base, base, &base))
            return overflow();
    }
    return Value(result);
}

// Python's `str % args` for the conversions %s %r %d %i %% (others are an error). A tuple
// supplies the arguments; a list or dict counts as a mapping (no positional arguments).
Result<Value> printf_format(const std::string& fmt, const Value& args) {
    std::vector<Value> list;
    bool mapping = false;
    if (args.is_list() && args.as_list().is_tuple)
        list = args.as_list().items;
    else if (args.is_list() || args.is_dict() || args.is_undefined())
        mapping = true;
    else
        list.push_back(args);
    size_t next = 0;
    std::string out;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i >= fmt.size())
            return make_error("incomplete format");
        char c = fmt[i];
        if (c == '%') {
            out += '%';
            continue;
        }
        if (c != 's' && c != 'r' && c != 'd' && c != 'i')
            return make_error(std::string("unsupported format character '") + c +
                              "' in % formatting");
        if (mapping || next >= list.size())
            return make_error("not enough arguments for format string");
        if (!budget_require(out.size()))
            return make_error(budget_error_text());
        const Value& v = list[next++];
        if (c == 's')
            out += to_str(v);
        else if (c == 'r')
            out += to_repr(v);
        else if (v.is_int() || v.is_bool())
            out += std::to_string(v.int_value());
        else if (v.is_float() && std::isfinite(v.as_float()) && std::fabs(v.as_float()) < 9.2e18)
            out += std::to_string(int64_t(v.as_float()));
        else
            return make_error("%d format: a real number is required, not " + type_name(v));
    }
    if (!mapping && next < list.size())
        return make_error("not all arguments converted during string formatting");
    return Value(std::move(out));
}

} // namespace

Result<Value> binary_op(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") {
        std::string l = to_str(a);
        std::string r = to_str(b);
        if (!budget_require(uint64_t(l.size()) + r.size()))
            return make_error(budget_error_text());
        return Value(l + r);
    }
    if (op == "%" && a.is_string() && b.is_undefined())
        return printf_format(a.as_string(), b); // a mapping
    if (a.is_undefined())
        return make_error(a.undefined_message());
    if (b.is_undefined())
        return make_error(b.undefined_message());
    bool nums = a.is_number() && b.is_number();
    bool ints = nums && !a.is_float() && !b.is_float();
    if (op == "+") {
        if (ints) {
            int64_t r;
            if (__builtin_add_overflow(a.int_value(), b.int_value(), &r))
                return overflow();
            return Value(r);
        }
        if (nums)
            return Value(a.number_value() + b.number_value());
        if (a.is_string() && b.is_string()) {
            if (!budget_require(uint64_t(a.as_string().size()) + b.as_string().size()))
                return make_error(budget_error_text());
            return Value(a.as_string() + b.as_string());
        }
        if (a.is_list() && b.is_list() && a.as_list().is_tuple == b.as_list().is_tuple) {
            uint64_t bytes = 0;
            for (const auto* l : {&a.as_list(), &b.as_list()})
                for (const auto& e : l->items)
                    bytes += shallow_bytes(e);
            if (!budget_require(bytes))
                return make_error(budget_error_text());
            std::vector<Value> items = a.as_list().items;
            items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
            return Value::list(std::move(items), a.as_list().is_tuple);
        }
        if (a.is_string())
            return make_error("can only concatenate str (not \"" + type_name(b) + "\") to str");
        if (a.is_list())
            return make_error("can only concatenate " + type_name(a) + " (not \"" + type_name(b) +
                              "\") to " + type_name(a));
        return unsupported(op, a, b);
    }
    if (op == "-") {
        if (ints) {
            int64_t r;
            if (__builtin_sub_overflow(a.int_value(), b.int_value(), &r))
                return overflow();
            return Value(r);
        }
        if (nums)
            return Value(a.number_value() - b.number_value());
        return unsupported(op, a, b);
    }
    if (op == "*") {
        if (ints) {
            int64_t r;
            if (__builtin_mul_overflow(a.int_value(), b.int_value(), &r))
                return overflow();
            return Value(r);
        }
        if (nums)
            return Value(a.number_value() * b.number_value());
        if ((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool()))
            return repeat(a, b.int_value());
        if ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool()))
            return repeat(b, a.int_value());
        return unsupported(op, a, b);
    }
    if (op == "/") {
        if (!nums)
            return unsupported(op, a, b);
        if (b.number_value() == 0)
            return make_error(ints ? "division by zero" : "float division by zero");
        return Value(a.number_value() / b.number_value());
    }
    if (op == "//" || op == "%") {
        if (!nums) {
            if (op == "%" && a.is_string())
                return printf_format(a.as_string(), b);
            return unsupported(op, a, b);
        }
        if (ints) {
            int64_t x = a.int_value(), y = b.int_value();
            if (y == 0)
                return make_error(op == "%" ? "integer modulo by zero"
                                            : "integer division or modulo by zero");
            if (x == INT64_MIN && y == -1)
                return overflow();
            int64_t q = x / y, r = x % y;
            if (r != 0 && ((r < 0) != (y < 0))) {
                --q;
                r += y;
            }
            return op == "//" ? Value(q) : Value(r);
        }
        double x = a.number_value(), y = b.number_value();
        if (y == 0)
            return make_error(op == "%" ? "float modulo" : "float floor division by zero");
        // CPython's float_divmod.
        double mod = std::fmod(x, y);
        double div = (x - mod) / y;
        if (mod != 0) {
            if ((y < 0) != (mod < 0)) {
                mod += y;
                div -= 1.0;
            }
        } else {
            mod = std::copysign(0.0, y);
        }
        double floordiv;
        if (div != 0) {
            floordiv = std::floor(div);
            if (div - floordiv > 0.5)
                floordiv += 1.0;
        } else {
            floordiv = std::copysign(0.0, x / y);
        }
        return op == "%" ? Value(mod) : Value(floordiv);
    }
    if (op == "**") {
        if (!nums)
            return unsupported("** or pow()", a, b);
        if (ints && b.int_value() >= 0)
            return int_pow(a.int_value(), b.int_value());
        if (a.number_value() == 0 && b.number_value() < 0)
            return make_error("0.0 cannot be raised to a negative power");
        return Value(std::pow(a.number_value(), b.number_value()));
    }
    return make_error("unknown operator '" + op + "'");
}

Result<Value> unary_op(const std::string& op, const Value& a) {
    if (a.is_undefined())
        return make_error(a.undefined_message());
    if (!a.is_number())
        return make_error("bad operand type for unary " + op + ": '" + type_name(a) + "'");
    if (op == "+")
        return a.is_bool() ? Value(a.int_value()) : a;
    if (a.is_float())
        return Value(-a.as_float());
    if (a.int_value() == INT64_MIN)
        return make_error("integer overflow");
    return Value(-a.int_value());
}

} // namespace llmwb::jinja
