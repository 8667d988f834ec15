// The base URL of an OpenAI-compatible endpoint, as users copy it: "http://host:8000",
// "http://host:8000/v1" (the OpenAI SDK's base_url), "https://gpu-box.example/llm/v1". The API
// paths hang off the prefix ("/llm" + "/v1/completions"); /metrics off the prefix too.
#pragma once

#include <string>

#include "engine/util/result.h"

namespace llmwb::remote {

struct EndpointUrl {
    std::string scheme; // "http" or "https"
    std::string host;   // a name, an IPv4 address or a bracketed IPv6 address ("[::1]")
    int port = 0;       // explicit or the scheme's default
    std::string prefix; // "" or "/some/path" (no trailing '/', without a final "/v1")

    // "http://host:port" (what httplib's client takes).
    std::string origin() const;
    // origin + prefix: the endpoint as errors name it.
    std::string text() const;
    // prefix + path ("/v1/models" -> "/llm/v1/models").
    std::string path(const std::string& p) const { return prefix + p; }
};

// Errors: another scheme, no host, a bad port, user info, a query or fragment, control
// characters or spaces (the URL ends up in request lines).
Result<EndpointUrl> parse_endpoint_url(const std::string& url);

} // namespace llmwb::remote
