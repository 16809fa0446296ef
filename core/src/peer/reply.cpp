// Reply: a deferrable or async handler's way to answer its request later
// (weft/peer.h). It holds the peer weakly: a Reply that outlives its peer
// answers nothing. The answer goes to PeerState::complete (serving.cpp).
#include <utility>

#include "weft/peer.h"
#include "peer/state.h"

namespace weft {

Reply::Reply(Reply&& o) noexcept : state_(std::move(o.state_)), slot_(std::exchange(o.slot_, 0)) {}

Reply& Reply::operator=(Reply&& o) noexcept {
  if (this != &o) {
    release();
    state_ = std::move(o.state_);
    slot_ = std::exchange(o.slot_, 0);
  }
  return *this;
}

// A request must never be left hanging: an unanswered Reply answers -32603.
Reply::~Reply() { release(); }

void Reply::release() {
  if (slot_ == 0) return;
  // A cancelled or closed request is not left hanging: the core answers it
  // (cancel_serving) or has (close). Letting go of its Reply is no late
  // answer: nothing to drop, no LateReply (docs/protocol.md "$/cancelRequest").
  if (cancelled()) {
    slot_ = 0;
    return;
  }
  respond(Error(code::kInternalError, "Internal error: request dropped without a reply"));
}

void Reply::ok(json result) { respond(std::move(result)); }
void Reply::error(Error e) { respond(std::move(e)); }

void Reply::respond(Result<json> r) {
  const std::uint64_t slot = std::exchange(slot_, 0);
  if (slot == 0) return;
  if (auto s = state_.lock()) s->complete(slot, std::move(r));
}

bool Reply::cancelled() const {
  auto s = state_.lock();
  if (!s) return true;
  const detail::Serving* e = s->find_serving(slot_);
  return !e || e->cancelled;
}

void Reply::on_cancel(std::function<void()> f) {
  auto s = state_.lock();
  if (!s || !f || slot_ == 0) return;
  detail::Serving* e = s->find_serving(slot_);
  // No entry while this Reply is unanswered: the core answered for it
  // (cancellation, close), so the request is cancelled.
  if (!e || e->cancelled) f();
  else e->on_cancel = std::move(f);
}

}  // namespace weft
