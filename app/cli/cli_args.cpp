#include "app/cli/cli_args.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace llmwb::cli {

Result<CliArgs> CliArgs::parse(const std::vector<std::string>& args,
                               const std::set<std::string>& value_options,
                               const std::set<std::string>& flags) {
    CliArgs out;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.rfind("--", 0) != 0)
            return make_error("unexpected argument '" + a + "'");
        std::string name = a.substr(2);
        std::optional<std::string> inline_value;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inline_value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flags.count(name)) {
            if (inline_value)
                return make_error("option --" + name + " takes no value");
            out.flags_.insert(name);
        } else if (value_options.count(name)) {
            if (inline_value) {
                out.values_[name].push_back(*inline_value);
            } else {
                if (i + 1 >= args.size())
                    return make_error("option --" + name + " needs a value");
                out.values_[name].push_back(args[++i]);
            }
        } else {
            return make_error("unknown option --" + name);
        }
    }
    return out;
}

bool CliArgs::has(const std::string& name) const {
    return flags_.count(name) || values_.count(name);
}

std::optional<std::string> CliArgs::get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end())
        return std::nullopt;
    return it->second.back();
}

std::vector<std::string> CliArgs::get_all(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::string CliArgs::get_or(const std::string& name, const std::string& fallback) const {
    return get(name).value_or(fallback);
}

Result<std::optional<int64_t>> CliArgs::get_int(const std::string& name, int64_t min,
                                                int64_t max) const {
    auto v = get(name);
    if (!v)
        return std::optional<int64_t>{};
    int64_t x = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
    if (ec != std::errc() || p != v->data() + v->size())
        return make_error("--" + name + ": '" + *v + "' is not an integer");
    if (x < min || x > max)
        return make_error("--" + name + ": " + *v + " is outside [" + std::to_string(min) + ", " +
                          std::to_string(max) + "]");
    return std::optional<int64_t>{x};
}

Result<std::optional<double>> CliArgs::get_double(const std::string& name, double min,
                                                  double max) const {
    auto v = get(name);
    if (!v)
        return std::optional<double>{};
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(v->c_str(), &end);
    if (v->empty() || end != v->c_str() + v->size() || errno != 0 || !std::isfinite(x))
        return make_error("--" + name + ": '" + *v + "' is not a number");
    if (x < min || x > max) {
        std::ostringstream os;
        os << "--" << name << ": " << *v << " is outside [" << min << ", " << max << "]";
        return make_error(os.str());
    }
    return std::optional<double>{x};
}

Result<std::optional<bool>> CliArgs::get_bool(const std::string& name) const {
    auto v = get(name);
    if (!v)
        return std::optional<bool>{};
    if (*v == "true" || *v == "1" || *v == "yes")
        return std::optional<bool>{true};
    if (*v == "false" || *v == "0" || *v == "no")
        return std::optional<bool>{false};
    return make_error("--" + name + ": '" + *v + "' is not true or false");
}

Result<std::vector<int32_t>> CliArgs::get_ids(const std::string& name) const {
    std::vector<int32_t> ids;
    auto v = get(name);
    if (!v)
        return ids;
    std::string s = *v;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        std::string item =
            s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        // allow spaces and surrounding brackets: "[1, 2, 3]"
        std::string t;
        for (char c : item)
            if (c != ' ' && c != '[' && c != ']' && c != '\t' && c != '\n')
                t += c;
        if (!t.empty()) {
            int64_t x = 0;
            auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
            if (ec != std::errc() || p != t.data() + t.size() || x < 0 || x > INT32_MAX)
                return make_error("--" + name + ": '" + t + "' is not a token id");
            ids.push_back(static_cast<int32_t>(x));
        } else if (comma != std::string::npos) {
            return make_error("--" + name + ": empty item in '" + s + "'");
        }
        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return ids;
}

Result<std::string> read_text_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return make_error(path + ": cannot open file");
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad())
        return make_error(path + ": read error");
    return ss.str();
}

} // namespace llmwb::cli
