// The endpoint vector format (tests/vectors/peer/README.md): parsing only.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace weft::test {

struct Step {
  std::string op;    // "-->", "<--", "call", "time", ...
  std::string rest;  // the remainder of the line, trimmed
  int line = 0;
};

struct ScriptCase {
  std::string name;
  std::vector<Step> steps;
};

inline std::vector<ScriptCase> parse_script(const std::string& path) {
  std::ifstream in(path);
  std::vector<ScriptCase> cases;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("## ", 0) == 0) {
      cases.push_back({line.substr(3), {}});
      continue;
    }
    if (line.empty() || line[0] == '#' || cases.empty()) continue;
    auto sp = line.find(' ');
    Step s;
    s.op = line.substr(0, sp);
    s.rest = sp == std::string::npos ? "" : line.substr(sp + 1);
    s.line = n;
    cases.back().steps.push_back(std::move(s));
  }
  return cases;
}

}  // namespace weft::test
