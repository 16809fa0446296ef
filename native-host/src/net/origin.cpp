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

namespace {
// Whether an Accept or Accept-Encoding element, `value *( OWS ";" OWS
// name=value )`, allows its value: only q matters, "q=0" (0, 0.0, 0.00,
// 0.000) refusing it (RFC 9110 §12.4.2).
bool q_allows(std::string_view item) {
  bool allowed = true;
  for (auto semi = item.find(';'); semi != std::string_view::npos; semi = item.find(';')) {
    item.remove_prefix(semi + 1);
    const std::string_view p = trim(item.substr(0, item.find(';')));
    if (p.size() >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
      allowed = p.substr(2).find_first_not_of("0.") != std::string_view::npos;
  }
  return allowed;
}
}  // namespace

bool accepts_coding(std::string_view accept_encoding, std::string_view coding) {
  std::optional<bool> named, star;
  for (const auto& item : header_tokens(accept_encoding)) {
    const std::string_view t = trim(std::string_view(item).substr(0, item.find(';')));
    if (iequals(t, coding)) named = q_allows(item);
    else if (t == "*") star = q_allows(item);
  }
  return named ? *named : star.value_or(false);
}

bool accepts(std::string_view accept, std::string_view type) {
  // The most specific range decides (RFC 9110 §12.5.1): the type itself,
  // then "major/*", then "*/*"; a range with q=0 refuses.
  const auto slash = type.find('/');
  const std::string_view major = type.substr(0, slash);
  std::optional<bool> exact, range, any;
  for (const auto& item : header_tokens(accept)) {
    const std::string_view t = trim(std::string_view(item).substr(0, item.find(';')));
    if (iequals(t, type)) exact = q_allows(item);
    else if (t == "*/*") any = q_allows(item);
    else if (t.size() == major.size() + 2 && iequals(t.substr(0, major.size()), major) && t.substr(major.size()) == "/*")
      range = q_allows(item);
  }
  return exact ? *exact : range ? *range : any.value_or(false);
}

}  // namespace weft::host::detail
