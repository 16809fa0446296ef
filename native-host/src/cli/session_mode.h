// session_mode.h — `weft call --session`: many requests over one connection,
// read from stdin one per line, answered on stdout one per line.
#pragma once

#include <cstdio>
#include <string>

#include "weft/codec.h"
#include "weft/host/client.h"

namespace weft::cli {

// A line of input, parsed. Either form:
//   {"jsonrpc":"2.0","id":7,"method":"sum","params":[1,2]}   (no "id": a notification)
//   sum [1,2]                                                 (id: the line number)
struct SessionLine {
  enum class Kind { Blank, Call, Notify, Bad };
  Kind kind = Kind::Blank;
  Id id;                      // the id echoed in the answer, exactly (a number keeps its text)
  std::string method;
  std::optional<json> params;
  Error error;                // Bad: -32700 / -32600 / -32602 naming the problem
};
// A JSON line is read by the JSON codec, within `limits` (--max-depth).
SessionLine parse_session_line(const std::string& line, std::size_t number, const CodecLimits& limits = {});

// The answer line printed for `id` (a JSON-RPC 2.0 response, no newline).
std::string session_answer(const Id& id, const host::Outcome& o);

// Runs the session: reads `in` to its end, writes answers to `out` in input
// order. Returns the highest exit code among the answers (0, 1, 3 or 4).
int run_session(const host::ClientConfig& config, std::FILE* in, std::FILE* out);

}  // namespace weft::cli
