#include "engine/chat/lexer.h"

#include <algorithm>

#include "engine/chat/unicode_text.h"

namespace llmwb::jinja {

const char* token_type_name(TokenType t) {
    switch (t) {
    case TokenType::Data:
        return "template data";
    case TokenType::VariableBegin:
        return "'{{'";
    case TokenType::VariableEnd:
        return "'}}'";
    case TokenType::BlockBegin:
        return "'{%'";
    case TokenType::BlockEnd:
        return "'%}'";
    case TokenType::Name:
        return "name";
    case TokenType::String:
        return "string";
    case TokenType::Integer:
        return "integer";
    case TokenType::Float:
        return "float";
    case TokenType::Operator:
        return "operator";
    case TokenType::Eof:
        return "end of template";
    }
    return "token";
}

namespace {

Error lex_error(int line, const std::string& what) {
    return make_error("chat template syntax error at line " + std::to_string(line) + ": " + what);
}

// Only \r\n, \r and \n are line breaks (Jinja2 >= 3.0); all become \n. One trailing newline is
// dropped unless keep_trailing_newline.
std::string normalize_newlines(const std::string& s, bool keep_trailing) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\r') {
            out += '\n';
            if (i + 1 < s.size() && s[i + 1] == '\n')
                ++i;
        } else {
            out += s[i];
        }
    }
    if (!keep_trailing && !out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

// Python's str.rstrip() (Unicode whitespace).
std::string rstrip_ws(const std::string& s) {
    return py_strip(s, nullptr, false, true);
}

// Length of the run of Unicode whitespace at s[pos].
size_t skip_ws(const std::string& s, size_t pos) {
    size_t i = pos;
    while (i < s.size()) {
        size_t j = i;
        char32_t c = utf8_next(s, j);
        if (!is_space(c))
            break;
        i = j;
    }
    return i;
}

bool only_ws(const std::string& s, size_t from) {
    if (from >= s.size())
        return false; // `\s+` needs at least one character
    return skip_ws(s, from) == s.size();
}

int count_newlines(const std::string& s, size_t b, size_t e) {
    return int(std::count(s.begin() + long(b), s.begin() + long(e), '\n'));
}

bool is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
    return is_name_start(c) || (c >= '0' && c <= '9');
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Digits with single underscores between them: (\d+_)*\d+ ; returns end or pos when none.
size_t scan_digits(const std::string& s, size_t pos) {
    size_t i = pos;
    if (i >= s.size() || !is_digit(s[i]))
        return pos;
    while (i < s.size()) {
        if (is_digit(s[i]))
            ++i;
        else if (s[i] == '_' && i + 1 < s.size() && is_digit(s[i + 1]))
            ++i;
        else
            break;
    }
    return i;
}

std::string without_underscores(const std::string& s) {
    std::string out;
    for (char c : s)
        if (c != '_')
            out += c;
    return out;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// Python's "unicode-escape" decoding of a string literal body, as Jinja2 applies it.
Result<std::string> decode_string(const std::string& body, int line) {
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
        char c = body[i];
        if (c != '\\' || i + 1 >= body.size()) {
            out += c;
            continue;
        }
        char e = body[++i];
        switch (e) {
        case '\n':
            break;
        case '\\':
            out += '\\';
            break;
        case '\'':
            out += '\'';
            break;
        case '"':
            out += '"';
            break;
        case 'a':
            out += '\a';
            break;
        case 'b':
            out += '\b';
            break;
        case 'f':
            out += '\f';
            break;
        case 'n':
            out += '\n';
            break;
        case 'r':
            out += '\r';
            break;
        case 't':
            out += '\t';
            break;
        case 'v':
            out += '\v';
            break;
        case 'x':
        case 'u':
        case 'U': {
            size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            char32_t cp = 0;
            for (size_t k = 1; k <= n; ++k) {
                int h = i + k < body.size() ? hex_value(body[i + k]) : -1;
                if (h < 0)
                    return lex_error(line,
                                     std::string("truncated \\") + e + " escape in string literal");
                cp = cp * 16 + char32_t(h);
            }
            if (cp > 0x10FFFF)
                return lex_error(line, "illegal Unicode character in string literal");
            utf8_append(out, cp);
            i += n;
            break;
        }
        case 'N':
            return lex_error(line, "\\N{...} escapes are not supported in string literals");
        default:
            if (e >= '0' && e <= '7') {
                char32_t cp = char32_t(e - '0');
                for (int k = 0;
                     k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
                    cp = cp * 8 + char32_t(body[++i] - '0');
                utf8_append(out, cp);
            } else {
                out += '\\';
                out += e;
            }
        }
    }
    return out;
}

class Lexer {
  public:
    Lexer(std::string src, const LexerOptions& o) : s_(std::move(src)), opt_(o) {}

    Result<std::vector<Token>> run() {
        while (pos_ < s_.size()) {
            size_t f = find_tag(pos_);
            if (f == std::string::npos) {
                emit(TokenType::Data, s_.substr(pos_));
                line_ += count_newlines(s_, pos_, s_.size());
                pos_ = s_.size();
                break;
            }
            char kind = s_[f + 1];
            char sign =
                (f + 2 < s_.size() && (s_[f + 2] == '-' || s_[f + 2] == '+')) ? s_[f + 2] : 0;
            std::string text = s_.substr(pos_, f - pos_);
            int text_lines = count_newlines(s_, pos_, f);
            size_t raw_end = kind == '%' ? match_raw_begin(f) : 0;
            if (sign == '-') {
                text = rstrip_ws(text);
            } else if (sign != '+' && opt_.lstrip_blocks && kind != '{') {
                size_t l_pos = text.rfind('\n');
                l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
                if ((l_pos > 0 || line_starting_) && only_ws(text, l_pos))
                    text.resize(l_pos);
            }
            if (!text.empty())
                emit(TokenType::Data, text);
            line_ += text_lines;
            if (raw_end) {
                auto st = lex_raw(raw_end);
                if (!st)
                    return st.error();
                continue;
            }
            pos_ = f + 2 + (sign ? 1 : 0);
            Status st = kind == '#' ? lex_comment() : lex_tag(kind == '{');
            if (!st)
                return st.error();
        }
        emit(TokenType::Eof, "");
        return std::move(tokens_);
    }

  private:
    void emit(TokenType t, std::string v) { tokens_.push_back(Token{t, std::move(v), line_}); }

    size_t find_tag(size_t from) const {
        size_t i = from;
        while ((i = s_.find('{', i)) != std::string::npos) {
            if (i + 1 < s_.size() && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#'))
                return i;
            ++i;
        }
        return std::string::npos;
    }

    // {%(-|+|)\s*raw\s*(-%}\s*|%}) at f: returns the position after it, 0 when no match.
    size_t match_raw_begin(size_t f) const {
        size_t i = f + 2;
        if (i < s_.size() && (s_[i] == '-' || s_[i] == '+'))
            ++i;
        i = skip_ws(s_, i);
        if (s_.compare(i, 3, "raw") != 0)
            return 0;
        i = skip_ws(s_, i + 3);
        if (s_.compare(i, 3, "-%}") == 0)
            return skip_ws(s_, i + 3);
        if (s_.compare(i, 2, "%}") == 0)
            return i + 2;
        return 0;
    }

    // Block end at i: "+%}" | "-%}\s*" | "%}\n?" ; returns the end or npos.
    size_t match_block_end(size_t i, const char* close) const {
        if ((s_[i] == '+' || s_[i] == '-') && s_.compare(i + 1, 2, close) == 0) {
            return s_[i] == '-' ? skip_ws(s_, i + 3) : i + 3;
        }
        if (s_.compare(i, 2, close) == 0) {
            size_t e = i + 2;
            if (opt_.trim_blocks && e < s_.size() && s_[e] == '\n')
                ++e;
            return e;
        }
        return std::string::npos;
    }

    Status lex_raw(size_t body_start) {
        size_t i = body_start;
        while ((i = s_.find("{%", i)) != std::string::npos) {
            size_t j = i + 2;
            char sign = 0;
            if (j < s_.size() && (s_[j] == '-' || s_[j] == '+'))
                sign = s_[j++];
            j = skip_ws(s_, j);
            if (s_.compare(j, 6, "endraw") == 0) {
                j = skip_ws(s_, j + 6);
                size_t e = match_block_end(j, "%}");
                if (e != std::string::npos) {
                    std::string text = s_.substr(body_start, i - body_start);
                    if (sign == '-')
                        text = rstrip_ws(text);
                    if (!text.empty())
                        emit(TokenType::Data, text);
                    line_ += count_newlines(s_, body_start, e);
                    line_starting_ = s_[e - 1] == '\n';
                    pos_ = e;
                    return ok_status();
                }
            }
            i += 2;
        }
        return lex_error(line_, "missing end of raw directive");
    }

    Status lex_comment() {
        size_t m = s_.find("#}", pos_);
        if (m == std::string::npos)
            return lex_error(line_, "missing end of comment tag");
        size_t e;
        if (m > pos_ && s_[m - 1] == '-')
            e = skip_ws(s_, m + 2);
        else if (m > pos_ && s_[m - 1] == '+')
            e = m + 2;
        else {
            e = m + 2;
            if (opt_.trim_blocks && e < s_.size() && s_[e] == '\n')
                ++e;
        }
        line_ += count_newlines(s_, pos_, e);
        line_starting_ = s_[e - 1] == '\n';
        pos_ = e;
        return ok_status();
    }

    Status lex_tag(bool variable) {
        emit(variable ? TokenType::VariableBegin : TokenType::BlockBegin, "");
        std::vector<char> balance;
        for (;;) {
            if (pos_ >= s_.size())
                return lex_error(line_, variable ? "missing '}}'" : "missing '%}'");
            if (balance.empty()) {
                size_t e = std::string::npos;
                if (variable) {
                    if (s_.compare(pos_, 3, "-}}") == 0)
                        e = skip_ws(s_, pos_ + 3);
                    else if (s_.compare(pos_, 2, "}}") == 0)
                        e = pos_ + 2;
                } else {
                    e = match_block_end(pos_, "%}");
                }
                if (e != std::string::npos) {
                    emit(variable ? TokenType::VariableEnd : TokenType::BlockEnd, "");
                    line_ += count_newlines(s_, pos_, e);
                    line_starting_ = s_[e - 1] == '\n';
                    pos_ = e;
                    return ok_status();
                }
            }
            char c = s_[pos_];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
                if (c == '\n')
                    ++line_;
                ++pos_;
                continue;
            }
            if (is_digit(c)) {
                size_t i = scan_digits(s_, pos_);
                size_t frac_end = i;
                bool is_float = false;
                if (i + 1 < s_.size() && s_[i] == '.' && is_digit(s_[i + 1])) {
                    frac_end = scan_digits(s_, i + 1);
                    is_float = true;
                }
                size_t end = frac_end;
                if (end < s_.size() && (s_[end] == 'e' || s_[end] == 'E')) {
                    size_t k = end + 1;
                    if (k < s_.size() && (s_[k] == '+' || s_[k] == '-'))
                        ++k;
                    size_t d = scan_digits(s_, k);
                    if (d > k) {
                        end = d;
                        is_float = true;
                    }
                }
                emit(is_float ? TokenType::Float : TokenType::Integer,
                     without_underscores(s_.substr(pos_, end - pos_)));
                pos_ = end;
                continue;
            }
            if (is_name_start(c)) {
                size_t i = pos_;
                while (i < s_.size() && is_name_char(s_[i]))
                    ++i;
                emit(TokenType::Name, s_.substr(pos_, i - pos_));
                pos_ = i;
                continue;
            }
            if (c == '\'' || c == '"') {
                size_t i = pos_ + 1;
                while (i < s_.size() && s_[i] != c)
                    i += s_[i] == '\\' ? 2 : 1;
                if (i >= s_.size())
                    return lex_error(line_, "unterminated string literal");
                auto decoded = decode_string(s_.substr(pos_ + 1, i - pos_ - 1), line_);
                if (!decoded)
                    return decoded.error();
                emit(TokenType::String, std::move(*decoded));
                line_ += count_newlines(s_, pos_, i);
                pos_ = i + 1;
                continue;
            }
            static const char* two[] = {"**", "//", "==", "!=", ">=", "<="};
            std::string op;
            for (const char* t : two)
                if (s_.compare(pos_, 2, t) == 0)
                    op = t;
            if (op.empty()) {
                if (std::string("+-/*%~[](){}|,.:=<>;").find(c) == std::string::npos)
                    return lex_error(line_, std::string("unexpected char '") + c + "'");
                op = std::string(1, c);
            }
            if (op == "(" || op == "[" || op == "{") {
                balance.push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
            } else if (op == ")" || op == "]" || op == "}") {
                if (balance.empty())
                    return lex_error(line_, "unexpected '" + op + "'");
                if (balance.back() != op[0])
                    return lex_error(line_, "unexpected '" + op + "', expected '" +
                                                std::string(1, balance.back()) + "'");
                balance.pop_back();
            }
            emit(TokenType::Operator, op);
            pos_ += op.size();
        }
    }

    std::string s_;
    LexerOptions opt_;
    size_t pos_ = 0;
    int line_ = 1;
    bool line_starting_ = true;
    std::vector<Token> tokens_;
};

} // namespace

Result<std::vector<Token>> tokenize(const std::string& source, const LexerOptions& options) {
    Lexer lx(normalize_newlines(source, options.keep_trailing_newline), options);
    return lx.run();
}

} // namespace llmwb::jinja
