// sse.cpp — see sse.h.
#include "client/sse.h"

namespace weft::host::detail {

void SseParser::feed(std::string_view bytes) {
  for (char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;  // CRLF: the CR already ended the line
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      line(partial_);
      partial_.clear();
      continue;
    }
    if (partial_.size() > max_event_ + 64) {
      if (!skipping_ && on_error_) on_error_("an event stream line longer than " + std::to_string(max_event_) + " bytes");
      skipping_ = true;
      partial_.clear();
    }
    partial_ += c;
  }
}

void SseParser::line(std::string_view l) {
  if (l.empty()) {  // dispatch
    if (has_data_ && !skipping_) {
      SseEvent e;
      if (!type_.empty()) e.type = type_;
      e.data = std::move(data_);
      if (!e.data.empty() && e.data.back() == '\n') e.data.pop_back();
      e.id = last_id_;
      on_event_(std::move(e));
    }
    data_.clear();
    type_.clear();
    has_data_ = false;
    skipping_ = false;
    return;
  }
  if (l[0] == ':' || skipping_) return;  // comment (keep-alive)
  const auto colon = l.find(':');
  std::string_view field = l.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : l.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (data_.size() + value.size() > max_event_) {
      if (on_error_) on_error_("an event larger than " + std::to_string(max_event_) + " bytes");
      skipping_ = true;
      data_.clear();
      return;
    }
    data_.append(value);
    data_ += '\n';
    has_data_ = true;
  } else if (field == "event") {
    type_ = std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_ = std::string(value);
  }
  // "retry" and unknown fields are ignored.
}

}  // namespace weft::host::detail
