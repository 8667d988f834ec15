#include "app/remote/endpoint_url.h"

#include <charconv>

namespace llmwb::remote {

std::string EndpointUrl::origin() const {
    return scheme + "://" + host + ":" + std::to_string(port);
}

std::string EndpointUrl::text() const {
    return origin() + prefix;
}

Result<EndpointUrl> parse_endpoint_url(const std::string& url) {
    const std::string where = "endpoint '" + url + "'";
    if (url.size() > 2048)
        return make_error("endpoint URL longer than 2048 characters");
    for (char c : url)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
            return make_error(where + ": spaces or control characters in the URL");
    EndpointUrl u;
    size_t pos = url.find("://");
    if (pos == std::string::npos)
        return make_error(where + ": give the scheme, e.g. http://127.0.0.1:8000");
    u.scheme = url.substr(0, pos);
    for (char& c : u.scheme)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (u.scheme != "http" && u.scheme != "https")
        return make_error(where + ": the scheme must be http or https, not '" + u.scheme + "'");
    pos += 3;
    const size_t slash = url.find('/', pos);
    std::string authority =
        url.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    std::string path = slash == std::string::npos ? "" : url.substr(slash);
    if (authority.find('@') != std::string::npos)
        return make_error(where + ": user info in the URL is not supported (use --api-key)");
    if (path.find_first_of("?#") != std::string::npos)
        return make_error(where + ": a query or fragment in the base URL is not supported");
    std::string port_text;
    if (!authority.empty() && authority[0] == '[') {
        const size_t close = authority.find(']');
        if (close == std::string::npos)
            return make_error(where + ": unterminated IPv6 address");
        u.host = authority.substr(0, close + 1);
        if (close + 1 < authority.size()) {
            if (authority[close + 1] != ':')
                return make_error(where + ": junk after the IPv6 address");
            port_text = authority.substr(close + 2);
        }
    } else {
        const size_t colon = authority.find(':');
        u.host = authority.substr(0, colon);
        if (colon != std::string::npos)
            port_text = authority.substr(colon + 1);
    }
    if (u.host.empty() || u.host == "[]")
        return make_error(where + ": no host");
    u.port = u.scheme == "https" ? 443 : 80;
    if (!port_text.empty()) {
        int p = 0;
        auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), p);
        if (ec != std::errc() || end != port_text.data() + port_text.size() || p < 1 || p > 65535)
            return make_error(where + ": bad port '" + port_text + "'");
        u.port = p;
    }
    while (!path.empty() && path.back() == '/')
        path.pop_back();
    if (path.size() >= 3 && path.compare(path.size() - 3, 3, "/v1") == 0)
        path.resize(path.size() - 3);
    u.prefix = path;
    return u;
}

} // namespace llmwb::remote
