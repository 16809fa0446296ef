// address.cpp — see address.h.
#include "address.h"

namespace weft::host::detail {

namespace {

constexpr const char* kForms =
    " (expected unix:PATH, tcp:HOST:PORT, exec:COMMAND, ws://HOST[:PORT]/PATH or http://HOST[:PORT]/PATH)";

Error bad(std::string_view text, const std::string& why) {
  return Error(code::kInvalidParams, "bad address '" + std::string(text) + "': " + why + kForms);
}

bool parse_port(std::string_view p, std::uint16_t& port) {
  if (p.empty() || p.size() > 5) return false;
  unsigned v = 0;
  for (char c : p) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > 65535) return false;
  port = static_cast<std::uint16_t>(v);
  return true;
}

// scheme://authority/path → host, port (default 80), path (default "/").
Result<Address> parse_url(std::string_view text, std::string_view rest, Address a) {
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  a.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (authority.find('@') != std::string_view::npos) return bad(text, "user info is not supported");
  const bool bracketed = !authority.empty() && authority.front() == '[';
  const auto colon = authority.rfind(':');
  const bool has_port = colon != std::string_view::npos && (!bracketed || colon > authority.find(']'));
  if (has_port) {
    if (!split_host_port(authority, a.host, a.port)) return bad(text, "bad host or port");
  } else {
    a.host = std::string(authority);
    if (bracketed) {
      if (a.host.size() < 3 || a.host.back() != ']') return bad(text, "bad IPv6 host");
      a.host = a.host.substr(1, a.host.size() - 2);
    }
    a.port = 80;
  }
  if (a.host.empty()) return bad(text, "missing host");
  return a;
}

}  // namespace

bool split_host_port(std::string_view s, std::string& host, std::uint16_t& port) {
  std::string_view h, p;
  if (!s.empty() && s.front() == '[') {
    const auto close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') return false;
    h = s.substr(1, close - 1);
    p = s.substr(close + 2);
  } else {
    const auto colon = s.rfind(':');
    if (colon == std::string_view::npos) return false;
    h = s.substr(0, colon);
    p = s.substr(colon + 1);
  }
  if (h.empty() || !parse_port(p, port)) return false;
  host = std::string(h);
  return true;
}

Result<Address> parse_address(std::string_view text) {
  Address a;
  a.text = std::string(text);
  auto starts = [&](std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; };
  if (starts("unix:")) {
    a.kind = Address::Kind::Unix;
    a.path = std::string(text.substr(5));
    if (a.path.empty()) return bad(text, "missing socket path");
    return a;
  }
  if (starts("tcp:")) {
    a.kind = Address::Kind::Tcp;
    if (!split_host_port(text.substr(4), a.host, a.port)) return bad(text, "expected tcp:HOST:PORT");
    return a;
  }
  if (starts("exec:")) {
    a.kind = Address::Kind::Exec;
    a.command = std::string(text.substr(5));
    if (a.command.find_first_not_of(" \t") == std::string::npos) return bad(text, "missing command");
    return a;
  }
  if (starts("ws://")) {
    a.kind = Address::Kind::WebSocket;
    return parse_url(text, text.substr(5), std::move(a));
  }
  if (starts("http://")) {
    a.kind = Address::Kind::Http;
    return parse_url(text, text.substr(7), std::move(a));
  }
  if (starts("wss://") || starts("https://")) return bad(text, "TLS is not supported");
  return bad(text, "unknown transport");
}

}  // namespace weft::host::detail
