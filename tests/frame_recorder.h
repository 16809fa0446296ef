// What the framing tests share: a FrameHandler that records what a decoder
// reports, every framing, and a frame made by encode_frame.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "weft/framing.h"

namespace weft::test {

struct Event {
  enum Kind { Frame, Err, Eof } kind;
  std::string bytes;
  FrameError error;
};

struct Recorder : FrameHandler {
  std::vector<Event> events;
  void on_frame(std::string_view p) override { events.push_back({Event::Frame, std::string(p), {}}); }
  void on_frame_error(const FrameError& e) override { events.push_back({Event::Err, {}, e}); }
};

inline const Framing kAll[] = {Framing::Lsp, Framing::Ndjson, Framing::Len32Be, Framing::Len32Le};

// A frame for `f` holding `payload`, cut to its first `keep` bytes.
inline std::string framed(Framing f, std::string_view payload, std::size_t keep = std::string::npos) {
  std::string s;
  encode_frame(f, payload, s);
  return s.substr(0, keep);
}

}  // namespace weft::test
