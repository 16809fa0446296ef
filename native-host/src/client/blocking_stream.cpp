// blocking_stream.cpp — BlockingClient::stream: a streamed call pulled chunk
// by chunk. Chunks wait in a buffer that credit bounds: one taken by next()
// is granted back (in steps of credit/4, and whatever is owed before next()
// waits), so a caller that stops pulling stops the server after `credit`.
#include <algorithm>
#include <deque>
#include <utility>

#include "weft/host/client.h"

namespace weft::host {

struct BlockingStream::State {
  CallId id = 0;
  std::deque<Chunk> buffer;  // received, not taken; at most `credit`
  std::optional<Outcome> outcome;
  std::uint32_t step = 1;    // grant back once this many were taken
  std::uint32_t owed = 0;    // taken and not granted back yet
};

BlockingStream BlockingClient::stream(const std::string& method, const std::optional<json>& params,
                                      StreamPolicy policy) {
  auto st = std::make_shared<BlockingStream::State>();
  policy.auto_grant = false;
  policy.credit = std::max<std::uint32_t>(policy.credit, 1);
  st->step = std::max<std::uint32_t>(1, policy.credit / 4);
  st->id = client_->stream(
      method, params, policy, [st](Chunk&& c) { st->buffer.push_back(std::move(c)); },
      [st](Outcome o) { st->outcome = std::move(o); });
  return BlockingStream(this, st);
}

BlockingStream::BlockingStream(BlockingStream&& o) noexcept : owner_(o.owner_), st_(std::move(o.st_)) {
  o.owner_ = nullptr;
}

BlockingStream& BlockingStream::operator=(BlockingStream&& o) noexcept {
  if (this != &o) {
    cancel();
    owner_ = o.owner_;
    st_ = std::move(o.st_);
    o.owner_ = nullptr;
  }
  return *this;
}

BlockingStream::~BlockingStream() { cancel(); }

std::optional<Chunk> BlockingStream::next() {
  if (!owner_ || !st_) return std::nullopt;
  State& s = *st_;
  Client& c = owner_->client();
  if (s.buffer.empty() && !s.outcome) {
    // About to wait: whatever was taken goes back first, or the server
    // (given less credit than asked, or at its end of credit) would wait too.
    if (s.owed) c.grant(s.id, std::exchange(s.owed, 0));
    owner_->run_until([&] { return !s.buffer.empty() || s.outcome.has_value(); });
  }
  if (s.buffer.empty()) {
    if (!s.outcome) {
      Outcome o;
      o.status = Outcome::Status::ConnectFailed;
      o.error = Error(code::kClosed, "the event loop ran out of work before the stream ended");
      s.outcome = std::move(o);
    }
    return std::nullopt;
  }
  Chunk ch = std::move(s.buffer.front());
  s.buffer.pop_front();
  if (!s.outcome && ++s.owed >= s.step) c.grant(s.id, std::exchange(s.owed, 0));
  return ch;
}

const Outcome& BlockingStream::outcome() const {
  static const Outcome none = [] {
    Outcome o;
    o.status = Outcome::Status::Cancelled;
    o.error = Error(code::kRequestCancelled, "the stream has not ended (or was moved from)");
    return o;
  }();
  return st_ && st_->outcome ? *st_->outcome : none;
}

void BlockingStream::cancel() {
  if (!owner_ || !st_) return;
  st_->buffer.clear();
  if (!st_->outcome) owner_->client().cancel(st_->id);  // settles now: outcome is Cancelled
}

}  // namespace weft::host
