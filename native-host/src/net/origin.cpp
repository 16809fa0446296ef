// origin.cpp — see origin.h.
#include "net/origin.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace weft::host::detail {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

bool media_type_is(std::string_view value, std::string_view type) {
  return iequals(trim(value.substr(0, value.find(';'))), type);
}

bool origin_allowed(const std::vector<std::string>& allow, bool present, std::string_view origin) {
  if (!present) return true;
  for (const auto& a : allow)
    if (a == "*" || a == origin) return true;
  return false;
}

std::vector<std::string> header_tokens(std::string_view value) {
  std::vector<std::string> out;
  while (!value.empty()) {
    auto comma = value.find(',');
    auto tok = trim(value.substr(0, comma));
    if (!tok.empty()) out.emplace_back(tok);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

bool accepts_coding(std::string_view accept_encoding, std::string_view coding) {
  // Each element is `coding *( OWS ";" OWS name=value )`; only q matters,
  // "q=0" (0, 0.0, 0.00, 0.000) refusing the coding (RFC 9110 §12.4.2).
  std::optional<bool> named, star;
  for (const auto& item : header_tokens(accept_encoding)) {
    std::string_view rest(item);
    const std::string_view t = trim(rest.substr(0, rest.find(';')));
    bool allowed = true;
    for (auto semi = rest.find(';'); semi != std::string_view::npos; semi = rest.find(';')) {
      rest.remove_prefix(semi + 1);
      std::string_view p = trim(rest.substr(0, rest.find(';')));
      if (p.size() >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
        allowed = p.substr(2).find_first_not_of("0.") != std::string_view::npos;
    }
    if (iequals(t, coding)) named = allowed;
    else if (t == "*") star = allowed;
  }
  return named ? *named : star.value_or(false);
}

bool accepts(std::string_view accept, std::string_view type) {
  const auto slash = type.find('/');
  const std::string_view major = type.substr(0, slash);
  for (const auto& item : header_tokens(accept)) {
    std::string_view t = trim(std::string_view(item).substr(0, item.find(';')));
    if (iequals(t, type) || t == "*/*") return true;
    if (t.size() == major.size() + 2 && iequals(t.substr(0, major.size()), major) &&
        t.substr(major.size()) == "/*")
      return true;
  }
  return false;
}

}  // namespace weft::host::detail
