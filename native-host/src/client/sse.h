// sse.h — a streaming parser for Server-Sent Events (the WHATWG "event
// stream" format), as the MCP Streamable HTTP transport uses them: lines
// ending in LF, CRLF or CR; "data:" lines joined with LF; "id:" sets the last
// event id; "event:" names the type; a blank line dispatches; lines starting
// with ':' are comments. Fed arbitrary chunks; no I/O.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace weft::host::detail {

struct SseEvent {
  std::string type = "message";
  std::string data;
  std::string id;  // the last event id so far (for Last-Event-ID)
};

class SseParser {
 public:
  // `max_event`: data bytes one event may carry; beyond it `on_error` runs
  // once and the parser discards input until the next dispatch.
  SseParser(std::size_t max_event, std::function<void(SseEvent&&)> on_event,
            std::function<void(const std::string&)> on_error)
      : max_event_(max_event), on_event_(std::move(on_event)), on_error_(std::move(on_error)) {}

  void feed(std::string_view bytes);
  const std::string& last_event_id() const { return last_id_; }

 private:
  void line(std::string_view l);

  std::size_t max_event_;
  std::function<void(SseEvent&&)> on_event_;
  std::function<void(const std::string&)> on_error_;
  std::string partial_;
  std::string data_;
  std::string type_;
  std::string last_id_;
  bool has_data_ = false;
  bool skipping_ = false;
  bool after_cr_ = false;
};

}  // namespace weft::host::detail
