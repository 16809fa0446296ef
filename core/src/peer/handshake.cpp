// The optional handshake (docs/protocol.md, "Handshake"): rpc.handshake
// (§4: "rpc." names are for rpc-internal methods) carries the protocol
// version, capabilities, limits and a session id; what both sides support
// then gates streams and progress, and switches on metrics and compression
// (the serving side picks the algorithm from the caller's preferences).
#include "weft/peer.h"

#include <algorithm>
#include <string_view>

#include "peer/state.h"

namespace weft {
namespace detail {
namespace {

const std::string kHandshake = "rpc.handshake";

// Whether `s` is a version number part: decimal digits, no leading zero
// (as in Semantic Versioning 2.0.0 §2), at most 6 of them.
bool number_part(std::string_view s) {
  if (s.empty() || s.size() > 6 || (s.size() > 1 && s[0] == '0')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The major part of "major.minor", or nullopt when `v` is not exactly of that
// form: "1" and "01.0" are not versions, so they are refused rather than read.
std::optional<long> major_of(const std::string& v) {
  const auto dot = v.find('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string_view major_part(v.data(), dot);
  if (!number_part(major_part) || !number_part(std::string_view(v).substr(dot + 1))) return std::nullopt;
  long major = 0;
  for (char c : major_part) major = major * 10 + (c - '0');
  return major;
}

json to_json(const Handshake& h) {
  json caps = json::array();
  for (const auto& c : h.capabilities) caps.push_back(c);
  json j{{"version", h.version}, {"capabilities", std::move(caps)}, {"limits", h.limits}};
  if (!h.session.empty()) j["session"] = h.session;
  if (!h.compression_preference.empty()) j["compression_preference"] = h.compression_preference;
  if (!h.compression_used.empty()) j["compression_used"] = h.compression_used;
  return j;
}

bool has(const std::vector<std::string>& list, const std::string& x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

// Whether the capabilities agreed include `c`.
bool agreed_on(const Handshake& h, const char* c) { return has(h.capabilities, c); }

// A handshake object from params or an answer; Error -32602 names what is wrong.
Result<Handshake> from_json(const json& j, const char* what) {
  auto bad = [&](const std::string& m) {
    return Error(code::kInvalidParams, std::string("Invalid params: ") + what + ": " + m);
  };
  if (!j.is_object()) return bad("must be an object");
  Handshake h;
  auto v = j.find("version");
  if (v == j.end() || !v->is_string() || !major_of(v->get<std::string>()))
    return bad("\"version\" must be a string \"major.minor\"");
  h.version = v->get<std::string>();
  if (auto c = j.find("capabilities"); c != j.end()) {
    if (!c->is_array()) return bad("\"capabilities\" must be an array of strings");
    for (const auto& x : *c) {
      if (!x.is_string()) return bad("\"capabilities\" must be an array of strings");
      h.capabilities.push_back(x.get<std::string>());
    }
  }
  if (auto l = j.find("limits"); l != j.end()) {
    if (!l->is_object()) return bad("\"limits\" must be an object");
    h.limits = *l;
  }
  if (auto s = j.find("session"); s != j.end()) {
    if (!s->is_string()) return bad("\"session\" must be a string");
    h.session = s->get<std::string>();
  }
  if (auto c = j.find("compression_preference"); c != j.end()) {
    if (!c->is_array()) return bad("\"compression_preference\" must be an array of strings");
    for (const auto& x : *c) {
      if (!x.is_string()) return bad("\"compression_preference\" must be an array of strings");
      h.compression_preference.push_back(x.get<std::string>());
    }
  }
  if (auto c = j.find("compression_used"); c != j.end()) {
    if (!c->is_string()) return bad("\"compression_used\" must be a string");
    h.compression_used = c->get<std::string>();
  }
  return h;
}

json limits_json(const PeerLimits& l) {
  json j{{"max_in_flight", l.max_in_flight}, {"max_batch", l.max_batch},
         {"max_stream_queue", l.max_stream_queue}, {"max_stream_credit", l.max_stream_credit},
         {"max_stream_chunk", l.max_stream_chunk}};
  if (l.rate_limit) j["rate"] = json{{"limit", l.rate_limit}, {"window", l.rate_window}};
  return j;
}

}  // namespace

bool PeerState::allows(const char* capability) const {
  if (!agreed) return true;
  const auto& c = agreed->capabilities;
  return std::find(c.begin(), c.end(), capability) != c.end();
}

// Serves rpc.handshake (registered by the Peer when PeerOptions::handshake is set).
Result<json> answer_handshake(PeerState& s, const json& params) {
  auto theirs = from_json(params, "rpc.handshake");
  if (!theirs) return theirs.error();
  const Handshake& mine = *s.opts.handshake;
  if (major_of(theirs->version) != major_of(mine.version))
    return Error(code::kVersionMismatch,
                 "Unsupported protocol version " + theirs->version + " (this side speaks " + mine.version + ")",
                 json{{"supported", mine.version}});
  Handshake agreed;
  agreed.version = mine.version;
  // Compression: the first of the caller's preferences this side lists too
  // ("none" is no algorithm); without one, "compression" is not agreed.
  if (has(mine.capabilities, "compression") && has(theirs->capabilities, "compression"))
    for (const auto& a : theirs->compression_preference)
      if (a != "none" && has(mine.compression_preference, a)) {
        agreed.compression_used = a;
        break;
      }
  for (const auto& c : mine.capabilities) {
    if (!has(theirs->capabilities, c)) continue;
    if (c == "compression" && agreed.compression_used.empty()) continue;
    if (c == "metrics" && !s.opts.clock_us) continue;  // nothing to measure with
    agreed.capabilities.push_back(c);
  }
  agreed.limits = mine.limits.empty() ? limits_json(s.opts.limits) : mine.limits;
  agreed.session = mine.session;
  s.agreed = agreed;
  s.measure = s.opts.clock_us && agreed_on(agreed, "metrics");
  return to_json(agreed);
}

}  // namespace detail

Result<Id> Peer::handshake(Handshake mine, std::function<void(Result<Handshake>)> done, CallOptions opts,
                           Millis now) {
  if (mine.limits.empty()) mine.limits = detail::limits_json(s_->opts.limits);
  json params = detail::to_json(mine);
  std::weak_ptr<detail::PeerState> weak = s_;
  auto on_answer = [weak, mine = std::move(mine), done = std::move(done)](Result<json> r) {
    if (!r) return done(r.error());
    auto s = weak.lock();
    json answer = std::move(*r);
    if (s && s->opts.inspect) s->opts.inspect(answer, nullptr);  // a host placeholder → the value
    auto theirs = detail::from_json(answer, "rpc.handshake answer");
    if (!theirs) return done(theirs.error());
    if (detail::major_of(theirs->version) != detail::major_of(mine.version))
      return done(Error(code::kVersionMismatch, "Unsupported protocol version " + theirs->version +
                                                    " (this side speaks " + mine.version + ")"));
    // The answer lists what both support; keep only what this side offered.
    Handshake agreed = *theirs;
    agreed.capabilities.erase(
        std::remove_if(agreed.capabilities.begin(), agreed.capabilities.end(),
                       [&](const std::string& c) {
                         return std::find(mine.capabilities.begin(), mine.capabilities.end(), c) ==
                                mine.capabilities.end();
                       }),
        agreed.capabilities.end());
    // Compression: only an algorithm this side offered, with the capability.
    if (!detail::has(agreed.capabilities, "compression") ||
        !detail::has(mine.compression_preference, agreed.compression_used)) {
      agreed.compression_used.clear();
      agreed.capabilities.erase(std::remove(agreed.capabilities.begin(), agreed.capabilities.end(), "compression"),
                                agreed.capabilities.end());
    }
    agreed.compression_preference.clear();
    if (s) {
      s->agreed = agreed;
      s->measure = s->opts.clock_us && detail::agreed_on(agreed, "metrics");
    }
    done(std::move(agreed));
  };
  return call(detail::kHandshake, std::move(params), std::move(on_answer), std::move(opts), now);
}

const std::optional<Handshake>& Peer::agreed() const { return s_->agreed; }

json handshake_json(const Handshake& h) { return detail::to_json(h); }
Result<Handshake> parse_handshake(const json& j) { return detail::from_json(j, "handshake"); }

}  // namespace weft
