// streams.cpp — a Client's streamed calls (docs/streams.md, "Native host"):
// chunks delivered in order to the consumer, and credit granted back as it
// consumes them, so the server never has more than StreamPolicy::credit
// chunks beyond what the consumer took. Pause = stop granting, resume =
// grant what was consumed meanwhile, cancel = $/cancelRequest (calls.cpp).
#include <algorithm>

#include <boost/asio/post.hpp>

#include "client/impl.h"
#include "weft/host/server.h"  // now_ms

namespace weft::host {

CallId Client::Impl::stream(std::string method, std::optional<json> params, StreamPolicy policy,
                            ChunkReceiver on_chunk, Completion done) {
  auto st = std::make_unique<Stream>();
  // The credit the core will announce (it clamps to our max_stream_credit);
  // at least one chunk, or nothing could ever arrive.
  policy.credit = std::clamp<std::uint32_t>(policy.credit, 1, cfg.peer_limits.max_stream_credit);
  st->policy = policy;
  st->on_chunk = std::make_shared<ChunkReceiver>(std::move(on_chunk));
  CallPolicy cp;
  cp.timeout = policy.timeout;
  return call(std::move(method), std::move(params), cp, std::move(done), std::move(st));
}

Result<Id> Client::Impl::send_stream(CallId id, Call& c, std::optional<json> params, const weft::CallOptions& o) {
  weft::StreamOptions so;
  so.credit = c.stream->policy.credit;
  // Without a receiver the core refuses the stream (-32602), once sent.
  if (*c.stream->on_chunk)
    so.on_chunk = [w = weak_from_this(), id, l = link.get()](Chunk&& ch) {
      if (auto s = w.lock()) s->chunk(id, l, std::move(ch));
    };
  // A fresh connection: what was owed on an earlier one means nothing here.
  c.stream->owed = 0;
  return link->peer().stream(
      c.method, std::move(params), std::move(so),
      [w = weak_from_this(), id, l = link.get()](Result<json> res) {
        if (auto s = w.lock()) {
          s->answered(id, l, std::move(res));
          s->drain_check();  // the last call on a drained link closes it
        }
      },
      o, now_ms());
}

void Client::Impl::chunk(CallId id, Link* l, Chunk&& ch) {
  auto it = calls.find(id);
  if (it == calls.end()) return;
  Call& c = it->second;
  if (c.at != At::Wire || c.link != l || !c.stream || c.cancelling || c.timing_out) return;
  restart_deadline(id, c);
  auto receiver = c.stream->on_chunk;  // the receiver may settle the call
  (*receiver)(std::move(ch));
  it = calls.find(id);
  if (it != calls.end() && it->second.stream->policy.auto_grant) consumed(id, 1);
}

void Client::Impl::consumed(CallId id, std::uint32_t n) {
  auto it = calls.find(id);
  if (it == calls.end() || !it->second.stream) return;
  Call& c = it->second;
  Stream& st = *c.stream;
  st.owed += n;
  if (st.paused || st.owed == 0) return;
  // A step of credit/4 goes back at once, keeping the server busy; a
  // smaller remainder at the end of this turn (after the chunks already
  // read are delivered). Never left owed: the server may have been given
  // less credit than we asked for (its max_stream_credit), and then it
  // would wait for a grant that a larger step never reaches.
  if (st.owed >= std::max<std::uint32_t>(1, st.policy.credit / 4)) {
    const std::uint32_t g = st.owed;
    st.owed = 0;
    grant(id, g);
    return;
  }
  if (st.grant_posted) return;
  st.grant_posted = true;
  boost::asio::post(io, [w = weak_from_this(), id] {
    auto s = w.lock();
    if (!s) return;
    auto it = s->calls.find(id);
    if (it == s->calls.end() || !it->second.stream) return;
    Stream& st = *it->second.stream;
    st.grant_posted = false;
    if (st.paused || st.owed == 0) return;
    const std::uint32_t g = st.owed;
    st.owed = 0;
    s->grant(id, g);
  });
}

bool Client::Impl::grant(CallId id, std::uint32_t n) {
  auto it = calls.find(id);
  if (it == calls.end() || !it->second.stream) return false;
  Call& c = it->second;
  if (c.at != At::Wire || !link || c.link != link.get() || c.cancelling || c.timing_out) return false;
  if (!link->peer().grant(c.wire_id, n)) return false;
  restart_deadline(id, c);
  link->flush();
  return true;
}

bool Client::Impl::pause(CallId id, bool paused) {
  auto it = calls.find(id);
  if (it == calls.end() || !it->second.stream) return false;
  it->second.stream->paused = paused;
  if (!paused) consumed(id, 0);
  return true;
}

void Client::Impl::restart_deadline(CallId id, Call& c) {
  if (!c.deadline) return;
  wakeups.erase({*c.deadline, id});
  c.deadline = weft::detail::later(now_ms(), c.timeout);
  wakeups.insert({*c.deadline, id});
  rearm();
}

// ---- Client ----------------------------------------------------------------

CallId Client::stream(std::string method, std::optional<json> params, StreamPolicy policy, ChunkReceiver on_chunk,
                      Completion done) {
  return impl_->stream(std::move(method), std::move(params), policy, std::move(on_chunk), std::move(done));
}

bool Client::grant(CallId id, std::uint32_t n) { return impl_->grant(id, n); }
bool Client::pause(CallId id) { return impl_->pause(id, true); }
bool Client::resume(CallId id) { return impl_->pause(id, false); }

}  // namespace weft::host
