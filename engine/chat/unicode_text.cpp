#include "engine/chat/unicode_text.h"

namespace llmwb::jinja {

char32_t utf8_next(std::string_view s, size_t& i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + size_t(len) > s.size()) {
        ++i;
        return 0xFFFD;
    }
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; k < len; ++k) {
        unsigned char cc = static_cast<unsigned char>(s[i + size_t(k)]);
        if ((cc & 0xC0) != 0x80) {
            ++i;
            return 0xFFFD;
        }
        cp = (cp << 6) | (cc & 0x3F);
    }
    i += size_t(len);
    return cp;
}

void utf8_append(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

std::u32string to_u32(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size())
        out += utf8_next(s, i);
    return out;
}

std::string to_utf8(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s)
        utf8_append(out, c);
    return out;
}

size_t utf8_length(std::string_view s) {
    size_t n = 0, i = 0;
    while (i < s.size()) {
        utf8_next(s, i);
        ++n;
    }
    return n;
}

bool is_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_printable(char32_t c) {
    if (c == U' ')
        return true;
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0xA0) || c == 0xAD)
        return false;
    if (is_space(c))
        return false;
    if ((c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
        (c >= 0x2060 && c <= 0x2064) || c == 0xFEFF || (c >= 0xD800 && c <= 0xDFFF) ||
        (c >= 0xE000 && c <= 0xF8FF) || c == 0xFFFE || c == 0xFFFF || c > 0x10FFFF)
        return false;
    return true;
}

static bool in_chars(char32_t c, const std::u32string& set) {
    return set.find(c) != std::u32string::npos;
}

std::string py_strip(std::string_view s, const std::string* chars, bool left, bool right) {
    std::u32string u = to_u32(s);
    std::u32string set = chars ? to_u32(*chars) : std::u32string();
    auto strip_it = [&](char32_t c) { return chars ? in_chars(c, set) : is_space(c); };
    size_t b = 0, e = u.size();
    if (left)
        while (b < e && strip_it(u[b]))
            ++b;
    if (right)
        while (e > b && strip_it(u[e - 1]))
            --e;
    return to_utf8(std::u32string_view(u).substr(b, e - b));
}

std::vector<std::string> py_split(std::string_view s, const std::string* sep, long maxsplit,
                                  bool from_right) {
    std::vector<std::string> out;
    if (sep) {
        // Separator split: byte search is exact for UTF-8.
        if (!from_right) {
            size_t pos = 0;
            long splits = 0;
            while (maxsplit < 0 || splits < maxsplit) {
                size_t f = s.find(*sep, pos);
                if (f == std::string_view::npos)
                    break;
                out.emplace_back(s.substr(pos, f - pos));
                pos = f + sep->size();
                ++splits;
            }
            out.emplace_back(s.substr(pos));
        } else {
            size_t end = s.size();
            long splits = 0;
            std::vector<std::string> rev;
            while (maxsplit < 0 || splits < maxsplit) {
                if (end < sep->size())
                    break;
                size_t f = s.rfind(*sep, end - sep->size());
                if (f == std::string_view::npos)
                    break;
                rev.emplace_back(s.substr(f + sep->size(), end - f - sep->size()));
                end = f;
                ++splits;
            }
            rev.emplace_back(s.substr(0, end));
            out.assign(rev.rbegin(), rev.rend());
        }
        return out;
    }
    std::u32string u = to_u32(s);
    if (!from_right) {
        size_t i = 0;
        long splits = 0;
        while (i < u.size()) {
            while (i < u.size() && is_space(u[i]))
                ++i;
            if (i >= u.size())
                break;
            if (maxsplit >= 0 && splits >= maxsplit) {
                size_t e = u.size();
                while (e > i && is_space(u[e - 1]))
                    --e;
                out.push_back(to_utf8(std::u32string_view(u).substr(i, e - i)));
                return out;
            }
            size_t j = i;
            while (j < u.size() && !is_space(u[j]))
                ++j;
            out.push_back(to_utf8(std::u32string_view(u).substr(i, j - i)));
            ++splits;
            i = j;
        }
        return out;
    }
    std::vector<std::string> rev;
    size_t e = u.size();
    long splits = 0;
    while (e > 0) {
        while (e > 0 && is_space(u[e - 1]))
            --e;
        if (e == 0)
            break;
        if (maxsplit >= 0 && splits >= maxsplit) {
            size_t b = 0;
            while (b < e && is_space(u[b]))
                ++b;
            rev.push_back(to_utf8(std::u32string_view(u).substr(b, e - b)));
            e = 0;
            break;
        }
        size_t b = e;
        while (b > 0 && !is_space(u[b - 1]))
            --b;
        rev.push_back(to_utf8(std::u32string_view(u).substr(b, e - b)));
        ++splits;
        e = b;
    }
    out.assign(rev.rbegin(), rev.rend());
    return out;
}

bool is_upper_cp(char32_t c) {
    return (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7) ||
           (c >= 0x391 && c <= 0x3A9) || (c >= 0x410 && c <= 0x42F) || (c >= 0x400 && c <= 0x40F);
}

bool is_lower_cp(char32_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 0xDF && c <= 0xFF && c != 0xF7) ||
           (c >= 0x3B1 && c <= 0x3C9) || (c >= 0x430 && c <= 0x44F) || (c >= 0x450 && c <= 0x45F);
}

static char32_t upper_cp(char32_t c) {
    if (c >= 'a' && c <= 'z')
        return c - 32;
    if (c >= 0xE0 && c <= 0xFE && c != 0xF7)
        return c - 32;
    if (c == 0xFF)
        return 0x178;
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2)
        return c - 32;
    if (c == 0x3C2)
        return 0x3A3;
    if (c >= 0x430 && c <= 0x44F)
        return c - 32;
    if (c >= 0x450 && c <= 0x45F)
        return c - 80;
    return c;
}

static char32_t lower_cp(char32_t c) {
    if (c >= 'A' && c <= 'Z')
        return c + 32;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7)
        return c + 32;
    if (c == 0x178)
        return 0xFF;
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2)
        return c + 32;
    if (c >= 0x410 && c <= 0x42F)
        return c + 32;
    if (c >= 0x400 && c <= 0x40F)
        return c + 80;
    return c;
}

static bool is_cased(char32_t c) {
    return is_upper_cp(c) || is_lower_cp(c) || upper_cp(c) != c || lower_cp(c) != c;
}

static std::string map_cps(std::string_view s, char32_t (*f)(char32_t)) {
    std::string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        char32_t c = utf8_next(s, i);
        if (c == 0xDF && f == upper_cp) {
            out += "SS"; // German sharp s upper-cases to two letters, as in Python
            continue;
        }
        utf8_append(out, f(c));
    }
    return out;
}

static bool py_is_case(std::string_view s, bool want_lower) {
    bool any = false;
    size_t i = 0;
    while (i < s.size()) {
        char32_t c = utf8_next(s, i);
        if (want_lower ? is_upper_cp(c) : is_lower_cp(c))
            return false;
        if (want_lower ? is_lower_cp(c) : is_upper_cp(c))
            any = true;
    }
    return any;
}

bool py_islower(std::string_view s) {
    return py_is_case(s, true);
}
bool py_isupper(std::string_view s) {
    return py_is_case(s, false);
}

std::string py_upper(std::string_view s) {
    return map_cps(s, upper_cp);
}
std::string py_lower(std::string_view s) {
    return map_cps(s, lower_cp);
}

std::string py_capitalize(std::string_view s) {
    std::u32string u = to_u32(s);
    for (size_t i = 0; i < u.size(); ++i)
        u[i] = i == 0 ? upper_cp(u[i]) : lower_cp(u[i]);
    return to_utf8(u);
}

std::string py_title(std::string_view s) {
    std::u32string u = to_u32(s);
    bool prev_cased = false;
    for (char32_t& c : u) {
        bool cased = is_cased(c);
        c = prev_cased ? lower_cp(c) : upper_cp(c);
        prev_cased = cased;
    }
    return to_utf8(u);
}

} // namespace llmwb::jinja
