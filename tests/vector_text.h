// vector_text.h — a tiny parser for weft's readable golden-vector files
// (llhttp style). Header-only; used by framing_test.cpp, open to other tests.
//
// Format, one directive per line:
//
//   # comment                       lines starting with a single '#'; blank lines ignored
//   ## case name                    starts a case (named after the rule it pins)
//   limit max_frame=16 max_header=8 optional; key=value pairs, any keys
//   in  "Content-Length: 2\r\n"     input bytes; several `in` lines are concatenated
//   frame "{}"                      any other line is an expectation: a keyword,
//   error -32600 at=12 reply=false  then arguments, each one of:
//   eof                               "escaped bytes"  → Expect::bytes
//                                     integer          → Expect::number
//                                     key=value        → Expect::attrs[key]
//
// Escapes inside "...": \r \n \t \0 \\ \" \xHH. A case runs until the next
// "##". Expectations keep their order. What they mean is up to the test; for
// framing: `frame` = one delivered payload, `error CODE [reply=false] [at=N]`
// = one FrameError (at = its stream offset), `eof` = finish() is called here
// and the expectations after it are what finish() produced.
//
// No exceptions (weft builds must not depend on them): errors are returned.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace weft::test {

struct Expect {
  std::string kind;                          // "frame", "error", "eof", ...
  std::string bytes;                         // from a "quoted" argument
  std::optional<long long> number;           // from an integer argument
  std::map<std::string, std::string> attrs;  // from key=value arguments
  int line = 0;                              // source line, for messages
};

struct Case {
  std::string name;
  int line = 0;                                    // line of the "##"
  std::map<std::string, std::uint64_t> limits;    // from `limit` lines
  std::string input;                               // all `in` lines, concatenated
  std::vector<Expect> expect;
};

namespace vector_text_detail {

inline int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses a "quoted string" starting at s[i] == '"'; leaves i after the close.
inline bool unquote(std::string_view s, std::size_t& i, std::string& out, std::string& err) {
  for (++i; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      ++i;
      return true;
    }
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i == s.size()) break;
    switch (s[i]) {
      case 'r': out.push_back('\r'); break;
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case '0': out.push_back('\0'); break;
      case '\\': out.push_back('\\'); break;
      case '"': out.push_back('"'); break;
      case 'x': {
        int a = i + 2 < s.size() ? hex(s[i + 1]) : -1, b = a >= 0 ? hex(s[i + 2]) : -1;
        if (a < 0 || b < 0) {
          err = "bad \\x escape";
          return false;
        }
        out.push_back(static_cast<char>(a * 16 + b));
        i += 2;
        break;
      }
      default: err = std::string("unknown escape \\") + s[i]; return false;
    }
  }
  err = "unterminated string";
  return false;
}

// Splits the arguments after a keyword into an Expect (also used for `in`/`limit`).
inline bool parse_args(std::string_view s, Expect& e, std::string& err) {
  std::size_t i = 0;
  while (true) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i == s.size()) return true;
    if (s[i] == '"') {
      if (!unquote(s, i, e.bytes, err)) return false;
      continue;
    }
    std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    std::string word(s.substr(start, i - start));
    std::size_t eq = word.find('=');
    if (eq != std::string::npos) {
      e.attrs[word.substr(0, eq)] = word.substr(eq + 1);
      continue;
    }
    char* end = nullptr;
    long long v = std::strtoll(word.c_str(), &end, 10);
    if (word.empty() || *end != '\0') {
      err = "unexpected argument '" + word + "'";
      return false;
    }
    e.number = v;
  }
}

}  // namespace vector_text_detail

// Parses vector text. On failure returns false with `err` naming the line.
inline bool parse_vectors(std::string_view text, std::vector<Case>& out, std::string& err) {
  using namespace vector_text_detail;
  int lineno = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++lineno;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    std::size_t lead = line.find_first_not_of(" \t");
    if (lead == std::string_view::npos) continue;
    line.remove_prefix(lead);
    if (line.rfind("##", 0) == 0) {
      Case c;
      std::string_view name = line.substr(2);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      c.name = std::string(name);
      c.line = lineno;
      out.push_back(std::move(c));
      continue;
    }
    if (line.front() == '#') continue;
    std::size_t sp = line.find_first_of(" \t");
    std::string kind(line.substr(0, sp));
    std::string_view rest = sp == std::string_view::npos ? std::string_view() : line.substr(sp);
    if (out.empty()) {
      err = "line " + std::to_string(lineno) + ": directive before the first ## case";
      return false;
    }
    Expect e;
    e.kind = kind;
    e.line = lineno;
    std::string why;
    if (!parse_args(rest, e, why)) {
      err = "line " + std::to_string(lineno) + ": " + why;
      return false;
    }
    Case& c = out.back();
    if (kind == "in") {
      c.input += e.bytes;
    } else if (kind == "limit") {
      for (auto& [k, v] : e.attrs) c.limits[k] = std::strtoull(v.c_str(), nullptr, 10);
    } else {
      c.expect.push_back(std::move(e));
    }
  }
  return true;
}

// Reads and parses a vector file.
inline bool load_vectors(const std::string& path, std::vector<Case>& out, std::string& err) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    err = "cannot open " + path;
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  if (!parse_vectors(ss.str(), out, err)) {
    err = path + ": " + err;
    return false;
  }
  return true;
}

}  // namespace weft::test
