// mcp_session.cpp — see mcp_session.h.
#include "net/mcp_session.h"

#include <algorithm>
#include <cstdlib>

#include "session.h"  // to_time_point

namespace weft::host::detail {

namespace {

constexpr std::size_t kEndedStreamsKept = 64;

// "<stream>-<seq>" → both numbers; false for anything else.
bool parse_event_id(const std::string& s, std::uint64_t& stream, std::uint64_t& seq) {
  auto dash = s.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 >= s.size() || s.size() > 41) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (i != dash && (s[i] < '0' || s[i] > '9')) return false;
  stream = std::strtoull(s.substr(0, dash).c_str(), nullptr, 10);
  seq = std::strtoull(s.substr(dash + 1).c_str(), nullptr, 10);
  return true;
}

}  // namespace

McpSession::McpSession(Hub& hub, std::string id, std::uint64_t serial)
    : hub_(hub), id_(std::move(id)), idle_(hub.io) {
  // MCP: JSON-RPC, UTF-8. A handshake names the session by its
  // Mcp-Session-Id, the id the client already holds.
  auto cfg = web_peer_config(hub, CodecKind::Json, "http#" + std::to_string(serial));
  if (cfg.handshake && !id_.empty()) cfg.handshake->session = id_;
  // The peer never outlives the session (end() and ~McpSession close it).
  peer_ = std::make_shared<MessagePeer>(hub.io, std::move(cfg),
                                        [this](const Outgoing& o, std::string bytes) { route(o, std::move(bytes)); });
  hub.install(peer_->peer());
  streams_[0];  // the GET stream; the idle clock starts with the first touch()
}

McpSession::~McpSession() {
  idle_.cancel();
  peer_->close(Error(code::kClosed, "session ended"));
}

void McpSession::begin_request(const Id& id) {
  waiters_[id];
  touch();
}

void McpSession::deliver(Document&& doc) {
  touch();
  peer_->deliver(std::move(doc));
}

std::optional<std::string> McpSession::settle(const Id& id, const std::shared_ptr<Exchange>& x,
                                              std::string& sse_start) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return std::string();  // cannot happen: answered and routed
  if (it->second.answer && it->second.early.empty()) {
    std::string body = std::move(*it->second.answer);
    waiters_.erase(it);
    return body;
  }
  const std::uint64_t s = next_stream_++;
  it->second.stream = s;
  Stream& st = streams_[s];
  st.sink = x;
  sse_start = event_text(s, 0, "");
  // What the handler sent for this request before now, then its answer if
  // given already: in order, on this stream (the sink sends them after
  // sse_start, which the caller writes first).
  std::vector<std::string> early = std::move(it->second.early);
  std::optional<std::string> answer = std::move(it->second.answer);
  if (answer) waiters_.erase(it);
  for (auto& e : early) emit(s, std::move(e), false);
  if (answer) emit(s, std::move(*answer), true);
  return std::nullopt;
}

namespace {

// The request a notification of ours belongs to: a stream's chunk names it
// by "id", progress by "token" (docs/streams.md, "On the wire").
std::optional<Id> related_request(const Notification& n) {
  if (!n.params || !n.params->is_object()) return std::nullopt;
  const char* key = n.method == "$/weft/chunk" ? "id" : n.method == "$/progress" ? "token" : nullptr;
  if (!key) return std::nullopt;
  auto v = n.params->find(key);
  if (v == n.params->end()) return std::nullopt;
  return Id::from_json(*v);
}

}  // namespace

void McpSession::route(const Outgoing& o, std::string bytes) {
  if (ended_) return;
  if (!o.batch && o.messages.size() == 1) {
    if (auto* r = std::get_if<Response>(&o.messages[0])) {
      auto it = waiters_.find(r->id);
      if (it != waiters_.end()) {
        if (it->second.stream == 0) {
          it->second.answer = std::move(bytes);
          return;
        }
        const std::uint64_t s = it->second.stream;
        waiters_.erase(it);
        emit(s, std::move(bytes), true);
        return;
      }
    }
    // A stream's chunks and progress go where the request's answer will:
    // its POST's SSE stream, ahead of the answer, so that the caller gets
    // them before it and in order (MCP transports: messages "related to the
    // originating client request" may precede the response on its stream).
    if (auto* n = std::get_if<Notification>(&o.messages[0])) {
      if (auto rid = related_request(*n)) {
        if (auto it = waiters_.find(*rid); it != waiters_.end()) {
          if (it->second.stream == 0) it->second.early.push_back(std::move(bytes));
          else emit(it->second.stream, std::move(bytes), false);
          return;
        }
      }
    }
  }
  emit(0, std::move(bytes), false);
}

std::string McpSession::event_text(std::uint64_t stream, std::uint64_t seq, const std::string& data) const {
  // JSON text from write_json has no raw newline, so one data line suffices.
  std::string t = "id: " + std::to_string(stream) + "-" + std::to_string(seq) + "\ndata: ";
  t += data;
  t += "\n\n";
  return t;
}

void McpSession::emit(std::uint64_t stream, std::string data, bool end_stream) {
  auto sit = streams_.find(stream);
  if (sit == streams_.end()) return;
  last_active_ = now_ms();
  Stream& st = sit->second;
  const std::uint64_t seq = st.next_seq++;
  std::string text = event_text(stream, seq, data);
  kept_bytes_ += data.size();
  st.events.push_back(Event{seq, std::move(data)});
  while (st.events.size() > std::max<std::size_t>(hub_.opts.web.sse_replay_events, 1)) drop_oldest(st);
  auto sink = st.sink.lock();
  if (sink) {
    st.sent = seq;
    sink->sse_send(std::move(text));
  }
  if (end_stream) {
    st.ended = true;
    st.sink.reset();
    if (sink) sink->sse_end();
    ended_streams_.push_back(stream);
    while (ended_streams_.size() > kEndedStreamsKept) {
      erase_stream(ended_streams_.front());
      ended_streams_.pop_front();
    }
  }
  trim(stream);
}

void McpSession::drop_oldest(Stream& st) {
  kept_bytes_ -= st.events.front().data.size();
  st.events.pop_front();
}

void McpSession::erase_stream(std::uint64_t stream) {
  auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  for (const Event& e : it->second.events) kept_bytes_ -= e.data.size();
  streams_.erase(it);
}

// Past WebOptions::sse_replay_bytes, what a resumption would need least goes
// first: the streams that ended with all their events sent, oldest first (a
// Last-Event-ID naming one then gets 400, "no longer kept"); then the events
// already handed to a connection; then events never sent (their stream's
// resumption is refused, as open_stream() says). The last event of a stream
// that ended, or of `current`, stays: an answer the client has not had yet,
// which resumption exists to deliver.
void McpSession::trim(std::uint64_t current) {
  const std::size_t budget = hub_.opts.web.sse_replay_bytes;
  if (budget == 0 || kept_bytes_ <= budget) return;
  for (auto it = ended_streams_.begin(); kept_bytes_ > budget && it != ended_streams_.end();) {
    auto sit = streams_.find(*it);
    const bool delivered = sit == streams_.end() || sit->second.sent + 1 >= sit->second.next_seq;
    if (*it == current || !delivered) {
      ++it;
      continue;
    }
    erase_stream(*it);
    it = ended_streams_.erase(it);
  }
  for (const bool sent_only : {true, false}) {
    for (auto& [s, st] : streams_) {
      const bool keep_last = s == current || st.ended;
      while (kept_bytes_ > budget && !st.events.empty() && (!sent_only || st.events.front().seq <= st.sent) &&
             !(keep_last && st.events.size() == 1))
        drop_oldest(st);
      if (kept_bytes_ <= budget) return;
    }
  }
}

McpSession::Opened McpSession::open_stream(const std::shared_ptr<Exchange>& x,
                                           const std::optional<std::string>& last_event_id) {
  Opened out;
  std::uint64_t s = 0, after = 0;
  bool resume = false;
  if (last_event_id) {
    if (!parse_event_id(*last_event_id, s, after) || !streams_.count(s)) {
      out.status = 400;
      out.error = "unknown Last-Event-ID '" + *last_event_id + "' (no such stream in this session, or no longer kept)";
      return out;
    }
    resume = true;
  }
  Stream& st = streams_[s];
  if (resume && after >= st.next_seq) {
    out.status = 400;
    out.error = "unknown Last-Event-ID '" + *last_event_id + "' (stream " + std::to_string(s) +
                " has sent no event after " + std::to_string(st.next_seq - 1) + ")";
    return out;
  }
  // Events after the one named were dropped (sse_replay_events and
  // sse_replay_bytes): replaying the rest would hide the gap.
  const std::uint64_t first_kept = st.events.empty() ? st.next_seq : st.events.front().seq;
  if (resume && after + 1 < first_kept) {
    out.status = 400;
    out.error = "events after Last-Event-ID '" + *last_event_id + "' are no longer kept (" +
                std::to_string(first_kept - after - 1) + " dropped)";
    return out;
  }
  if (auto live = st.sink.lock(); live && live.get() != x.get()) {
    out.status = 409;
    out.error = "stream " + std::to_string(s) + " is already open on another connection";
    return out;
  }
  touch();
  if (!resume) {
    // Priming: resume from here, which is past anything already dropped.
    after = std::max(st.sent, first_kept - 1);
    out.text = event_text(s, after, "");
  }
  for (const auto& e : st.events) {
    if (e.seq <= after) continue;
    out.text += event_text(s, e.seq, e.data);
    st.sent = std::max(st.sent, e.seq);
  }
  if (st.ended) {
    out.ended = true;
  } else {
    st.sink = x;
  }
  return out;
}

void McpSession::detach(const Exchange* x) {
  last_active_ = now_ms();  // idle from now, not from its last request
  for (auto& [s, st] : streams_) {
    if (auto live = st.sink.lock(); live && live.get() == x) st.sink.reset();
  }
  arm_idle();
}

void McpSession::end_get_connection() {
  Stream& st = streams_[0];
  if (auto sink = st.sink.lock()) {
    st.sink.reset();
    sink->sse_end();
  }
}

void McpSession::touch() {
  if (ended_) return;
  last_active_ = now_ms();
  arm_idle();
}

bool McpSession::busy() const {
  // Requests it serves or waits to answer, and calls it made to the client.
  if (!waiters_.empty() || peer_->in_flight() > 0 || peer_->peer().pending() > 0) return true;
  for (const auto& [s, st] : streams_)
    if (!st.sink.expired()) return true;
  return false;
}

void McpSession::arm_idle() {
  const Millis t = hub_.opts.web.session_idle_timeout;
  if (ended_ || id_.empty() || t == 0) return;
  idle_.expires_at(to_time_point(now_ms() + t));
  idle_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->ended_) return;
    if (self->busy()) return self->arm_idle();
    self->end("idle for " + std::to_string(self->hub_.opts.web.session_idle_timeout) + " ms");
  });
}

void McpSession::end(const std::string& why) {
  if (ended_) return;
  ended_ = true;
  auto self = shared_from_this();
  if (!why.empty() && hub_.log) hub_.log("session " + id_ + " ended: " + why);
  idle_.cancel();
  waiters_.clear();
  peer_->close(Error(code::kClosed, "session ended"));
  for (auto& [s, st] : streams_) {
    if (auto sink = st.sink.lock()) {
      st.sink.reset();
      sink->sse_end();
    }
  }
  if (on_end) {
    auto f = std::move(on_end);
    on_end = nullptr;
    f(*this);
  }
}

}  // namespace weft::host::detail
