// Python container access: `in`, obj[i], obj[a:b:c], iteration, and argument helpers.
#include "engine/chat/builtins.h"
#include "engine/chat/render_budget.h"
#include "engine/chat/unicode_text.h"

namespace llmwb::jinja {

const Value* arg_at(const CallArgs& a, size_t pos, const char* name) {
    if (pos < a.positional.size())
        return &a.positional[pos];
    if (name)
        return a.kwarg(name);
    return nullptr;
}

Result<int64_t> to_int_arg(const Value& v, const char* what) {
    if (v.is_int() || v.is_bool())
        return v.int_value();
    return make_error(std::string(what) + " must be an integer, not '" + type_name(v) + "'");
}

Result<bool> contains(const Value& container, const Value& item) {
    if (container.is_string()) {
        if (!item.is_string())
            return make_error("'in <string>' requires string as left operand, not " +
                              type_name(item));
        return container.as_string().find(item.as_string()) != std::string::npos;
    }
    if (container.is_list()) {
        for (const auto& e : container.as_list().items)
            if (equals(e, item))
                return true;
        return false;
    }
    if (container.is_dict()) {
        if ((item.is_list() && !item.as_list().is_tuple) || item.is_dict() || item.is_namespace())
            return make_error("unhashable type: '" + type_name(item) + "'");
        if (!item.is_string())
            return false;
        return container.as_dict().find(item.as_string()) != nullptr;
    }
    if (container.is_undefined())
        return false;
    return make_error("argument of type '" + type_name(container) + "' is not iterable");
}

std::optional<Value> get_item(const Value& obj, const Value& index) {
    if (obj.is_dict()) {
        if (!index.is_string())
            return std::nullopt;
        const Value* v = obj.as_dict().find(index.as_string());
        if (!v)
            return std::nullopt;
        return *v;
    }
    if (obj.is_namespace()) {
        if (!index.is_string())
            return std::nullopt;
        const Value* v = obj.as_namespace().attrs.find(index.as_string());
        if (!v)
            return std::nullopt;
        return *v;
    }
    if (!(index.is_int() || index.is_bool()))
        return std::nullopt;
    int64_t i = index.int_value();
    if (obj.is_list()) {
        const auto& items = obj.as_list().items;
        int64_t n = int64_t(items.size());
        if (i < 0)
            i += n;
        if (i < 0 || i >= n)
            return std::nullopt;
        return items[size_t(i)];
    }
    if (obj.is_string()) {
        std::u32string u = to_u32(obj.as_string());
        int64_t n = int64_t(u.size());
        if (i < 0)
            i += n;
        if (i < 0 || i >= n)
            return std::nullopt;
        return Value(to_utf8(std::u32string(1, u[size_t(i)])));
    }
    return std::nullopt;
}

Result<Value> get_slice(const Value& obj, const Value& start_v, const Value& stop_v,
                        const Value& step_v) {
    auto opt_int = [](const Value& v, const char* what) -> Result<std::optional<int64_t>> {
        if (v.is_undefined() || v.is_none())
            return std::optional<int64_t>();
        if (v.is_int() || v.is_bool())
            return std::optional<int64_t>(v.int_value());
        return make_error(std::string("slice ") + what + " must be an integer or None");
    };
    auto start = opt_int(start_v, "start");
    if (!start)
        return start.error();
    auto stop = opt_int(stop_v, "stop");
    if (!stop)
        return stop.error();
    auto step_o = opt_int(step_v, "step");
    if (!step_o)
        return step_o.error();
    int64_t step = step_o->value_or(1);
    if (step == 0)
        return make_error("slice step cannot be zero");

    std::u32string chars;
    const std::vector<Value>* items = nullptr;
    int64_t len = 0;
    if (obj.is_string()) {
        chars = to_u32(obj.as_string());
        len = int64_t(chars.size());
    } else if (obj.is_list()) {
        items = &obj.as_list().items;
        len = int64_t(items->size());
    } else {
        return make_error("'" + type_name(obj) + "' object is not subscriptable");
    }
    auto adjust = [&](std::optional<int64_t> v, bool is_start) {
        if (!v)
            return step < 0 ? (is_start ? len - 1 : int64_t(-1)) : (is_start ? int64_t(0) : len);
        int64_t x = *v;
        if (x < 0) {
            x += len;
            if (x < 0)
                x = step < 0 ? -1 : 0;
        } else if (x >= len) {
            x = step < 0 ? len - 1 : len;
        }
        return x;
    };
    int64_t b = adjust(*start, true), e = adjust(*stop, false);
    std::vector<size_t> idx;
    if (step > 0)
        for (int64_t i = b; i < e; i += step)
            idx.push_back(size_t(i));
    else
        for (int64_t i = b; i > e; i += step)
            idx.push_back(size_t(i));
    if (items) {
        std::vector<Value> out;
        out.reserve(idx.size());
        for (size_t i : idx)
            out.push_back((*items)[i]);
        return Value::list(std::move(out), obj.as_list().is_tuple);
    }
    std::u32string out;
    for (size_t i : idx)
        out += chars[i];
    return Value(to_utf8(out));
}

Result<std::vector<Value>> iterate(const Value& v) {
    if (v.is_list())
        return v.as_list().items;
    if (v.is_dict()) {
        std::vector<Value> keys;
        for (const auto& kv : v.as_dict().items)
            keys.emplace_back(kv.first);
        return keys;
    }
    if (v.is_string()) {
        std::vector<Value> chars;
        const std::string& s = v.as_string();
        // One Value per character: refuse before making them when that does not fit.
        uint64_t n = 0;
        for (unsigned char c : s)
            n += (c & 0xC0) != 0x80;
        if (!budget_require(n * sizeof(Value)))
            return make_error(budget_error_text());
        size_t i = 0;
        while (i < s.size()) {
            size_t b = i;
            utf8_next(s, i);
            chars.emplace_back(s.substr(b, i - b));
        }
        return chars;
    }
    if (v.is_undefined())
        return std::vector<Value>{};
    return make_error("'" + type_name(v) + "' object is not iterable");
}

} // namespace llmwb::jinja
