// origin.h — the checks every WebSocket and HTTP request passes first
// (docs/transports.md, "Security and limits").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weft::host::detail {

// An absent Origin (a non-browser client) is allowed; a present one must be
// listed exactly, or the list must hold "*" (MCP transports, Security Warning:
// "If the Origin header is present and invalid, servers MUST respond with
// HTTP 403 Forbidden").
bool origin_allowed(const std::vector<std::string>& allow, bool present, std::string_view origin);

// Does an Accept header list `type` (or type/* or */*)? Parameters (;q=…)
// are ignored.
bool accepts(std::string_view accept, std::string_view type);

// The tokens of a comma-separated header (Sec-WebSocket-Protocol), trimmed.
std::vector<std::string> header_tokens(std::string_view value);

}  // namespace weft::host::detail
