// Limits and drain (docs/protocol.md): the rate limit on incoming requests
// (a token bucket on the host's clock), and the graceful drain — this side
// refusing new requests, the other side's announcement stopping our calls.
#include "weft/peer.h"

#include <algorithm>
#include <cmath>

#include "peer/state.h"

namespace weft {
namespace detail {
namespace {
const std::string kDrain = "$/weft/drain";

json drain_data(const DrainNotice& n) {
  return json{{"retry_after", n.reconnect_after}, {"reason", n.reason}};
}

// The refusals, out of refuse_request()'s way (cold.h): it runs per request.
WEFT_COLD Error draining_error(const DrainNotice& n) {
  return Error(code::kUnavailable, "Service unavailable: draining (" + n.reason + ")", drain_data(n));
}
WEFT_COLD Error rate_limited(const PeerLimits& l, Millis retry_after) {
  return Error(code::kRateLimited,
               "Rate limit exceeded: " + std::to_string(l.rate_limit) + " requests per " +
                   std::to_string(l.rate_window) + " ms",
               json{{"limit", l.rate_limit}, {"window", l.rate_window}, {"retry_after", retry_after}});
}
}  // namespace

std::optional<Error> PeerState::refuse_request() {
  if (draining) return draining_error(*draining);
  const auto& l = opts.limits;
  if (l.rate_limit == 0 || l.rate_window <= 0 || !opts.clock) return std::nullopt;
  const Millis now = opts.clock();
  const double cap = static_cast<double>(l.rate_limit);
  if (!bucket_started) {
    bucket_started = true;
    tokens = cap;
  } else if (now > refilled_at) {
    tokens = std::min(cap, tokens + static_cast<double>(now - refilled_at) * cap / static_cast<double>(l.rate_window));
  }
  refilled_at = now;
  if (tokens >= 1) {
    tokens -= 1;
    return std::nullopt;
  }
  const auto retry_after =
      static_cast<Millis>(std::ceil((1 - tokens) * static_cast<double>(l.rate_window) / cap));
  return rate_limited(l, retry_after);
}

std::optional<Error> PeerState::refuse_call() const {
  // Its answer would be ignored (PeerOptions::role): refused now rather than
  // left to time out.
  if (opts.role == Role::Server)
    return Error(code::kInvalidRequest,
                 "Invalid Request: a server endpoint (Role::Server, JSONRPCServer) ignores responses, so its "
                 "calls could never be answered: use a Peer");
  if (!remote_draining) return std::nullopt;
  return Error(code::kUnavailable,
               "Service unavailable: the other side is draining (" + remote_draining->reason + ")",
               drain_data(*remote_draining));
}

void PeerState::remote_drain(std::optional<json>& params) {
  if (params && opts.inspect) opts.inspect(*params, nullptr);
  DrainNotice n;
  if (params && params->is_object()) {
    const json& p = *params;
    if (auto r = p.find("reason"); r != p.end() && r->is_string()) n.reason = r->get<std::string>();
    auto ms = [&](const char* k) -> Millis {
      auto it = p.find(k);
      return it != p.end() && it->is_number() && it->get<double>() > 0 ? static_cast<Millis>(it->get<double>()) : 0;
    };
    n.downtime = ms("downtime");
    n.reconnect_after = ms("reconnect_after");
  }
  remote_draining = n;
  if (opts.on_drain) opts.on_drain(n);
}

}  // namespace detail

void Peer::drain(DrainNotice notice) {
  auto self = s_;
  detail::PeerState& s = *self;
  if (s.closed || s.draining) return;
  s.draining = notice;
  Outgoing o;
  o.messages.emplace_back(Notification{
      detail::kDrain, json{{"reason", notice.reason},
                           {"downtime", notice.downtime},
                           {"reconnect_after", notice.reconnect_after}}});
  s.emit(std::move(o));
}

bool Peer::draining() const { return s_->draining.has_value(); }

}  // namespace weft
