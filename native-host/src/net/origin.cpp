// origin.cpp — see origin.h.
#include "net/origin.h"

#include <algorithm>
#include <cctype>

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
