// http_server.cpp — the Streamable HTTP listener (HttpService): its table of
// live sessions, drain and close, and make_http_service. The transport as a
// whole is described in net/http_server.h.
#include <random>

#include "net/http_server.h"
#include "session.h"  // to_time_point

namespace weft::host::detail {

namespace {

// 128 random bits as hex: visible ASCII (MCP: 0x21–0x7E), not guessable.
std::string new_session_id() {
  static std::random_device rd;
  std::string s;
  static const char* hex = "0123456789abcdef";
  for (int i = 0; i < 4; ++i) {
    std::uint32_t v = rd();
    for (int j = 0; j < 8; ++j, v >>= 4) s += hex[v & 15];
  }
  return s;
}

}  // namespace

std::size_t HttpService::in_flight() const {
  std::size_t n = 0;
  for (auto& [id, s] : sessions_) n += s->peer().in_flight();
  return n;
}

void HttpService::drain(Millis deadline, const DrainNotice& notice) {
  stop_accepting();
  // Each session's peer announces it (docs/protocol.md, "Drain"): the
  // notice goes on the GET stream (kept for a resuming client if none is
  // open), and a request POSTed into the session from now on is answered
  // -32005 by the core.
  for (auto& [id, s] : sessions_) {
    s->peer().peer().drain(notice);
    s->peer().rearm();
  }
  notice_ = notice;
  // Sessions end when the grace period is over; connections close once
  // their current request is answered.
  grace_.emplace(hub().io);
  grace_->expires_at(to_time_point(deadline));
  grace_->async_wait([this](beast::error_code e) {
    if (!e) close_all();
  });
  // GET streams would hold the server for the whole grace period.
  auto sessions = sessions_;
  for (auto& [id, s] : sessions) s->end_get_connection();
  for (auto& c : snapshot()) c->drain();
  notify_idle();
}

bool HttpService::working() const {
  for (auto& [id, s] : sessions_)
    if (s->peer().in_flight() > 0) return true;
  for (auto& c : snapshot())
    if (c->busy()) return true;
  return false;
}

void HttpService::drain_step() {
  if (!notice_ || working()) return;
  for (auto& c : snapshot()) c->drain();
}

void HttpService::close_all() {
  stop_accepting();
  auto sessions = sessions_;
  for (auto& [id, s] : sessions) s->end("server stopped");
  for (auto& c : snapshot()) c->close_now();
  notify_idle();
}

std::shared_ptr<McpSession> HttpService::find(const std::string& id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

std::shared_ptr<McpSession> HttpService::create(bool stateful) {
  if (stateful && sessions_.size() >= hub().opts.web.max_sessions) {
    // Full: the session idle longest makes room (clients that never DELETE
    // theirs, as the MCP SDK's close() does not, would otherwise fill the
    // table until the idle timeout). Its next request gets 404, on which an
    // MCP client starts a new session (MCP transports, "Session Management").
    std::shared_ptr<McpSession> oldest;
    for (const auto& [id, s] : sessions_)
      if (!s->busy() && (!oldest || s->last_active() < oldest->last_active())) oldest = s;
    if (!oldest) return nullptr;
    oldest->end("ended to make room: --max-sessions (" + std::to_string(hub().opts.web.max_sessions) +
                ") are live and it was idle longest");
  }
  auto s = std::make_shared<McpSession>(hub(), stateful ? new_session_id() : std::string(), next_session_++);
  if (stateful) {
    sessions_.emplace(s->id(), s);
    s->on_end = [this](McpSession& gone) { sessions_.erase(gone.id()); };
  }
  return s;
}

const Codec& HttpService::codec() {
  if (!codec_) codec_ = make_codec(CodecKind::Json, hub().opts.codec_limits);
  return *codec_;
}

Result<std::unique_ptr<WebService>> make_http_service(Hub hub, const std::string& host, std::uint16_t port) {
  return HttpService::make(std::move(hub), host, port);
}

}  // namespace weft::host::detail
