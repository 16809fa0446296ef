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

// Does an Accept header allow `type`? The most specific of `type`, its
// "major/*" and "*/*" that is listed decides, refusing with q=0 (RFC 9110
// §12.5.1); other parameters are ignored.
bool accepts(std::string_view accept, std::string_view type);

// Does an Accept-Encoding header allow the content coding `coding` (RFC 9110
// §12.5.3)? Named with a weight above 0, or not named and "*" allowed with
// one. An empty or absent header allows none here: weft compresses only
// for a client that asked for it.
bool accepts_coding(std::string_view accept_encoding, std::string_view coding);

// Is `type` ("application/json") the media type of Content-Type `value`?
// Type and subtype are case-insensitive, parameters follow after OWS ";"
// (RFC 9110 §8.3.1).
bool media_type_is(std::string_view value, std::string_view type);

// The tokens of a comma-separated header (Sec-WebSocket-Protocol), trimmed.
std::vector<std::string> header_tokens(std::string_view value);

}  // namespace weft::host::detail
