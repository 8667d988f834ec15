// HTML escaping of text (& < > " '), as Jinja2's `escape` filter writes it (markupsafe: &#34;
// and &#39; for the quotes). Used by the chat-template interpreter and by report.html.
#pragma once

#include <string>
#include <string_view>

namespace llmwb {

inline std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    for (const char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&#34;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

} // namespace llmwb
