// Streamed results and progress (docs/streams.md): the caller's $/weft/open
// and $/weft/credit, the serving side's $/weft/chunk and $/progress, and the
// credit that keeps both sides' memory bounded: the sender never has more
// chunks in flight than the receiver granted, and queues at most
// PeerLimits::max_stream_queue beyond that.
#include "weft/peer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "peer/state.h"

namespace weft {
namespace detail {
namespace {

const std::string kOpen = "$/weft/open";
const std::string kCredit = "$/weft/credit";
const std::string kChunk = "$/weft/chunk";
const std::string kProgress = "$/progress";

// A non-negative integer member of an object, or nullopt.
std::optional<std::uint64_t> count_of(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  if (it->is_number_unsigned()) return it->get<std::uint64_t>();
  if (it->is_number_integer() && it->get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(it->get<std::int64_t>());
  return std::nullopt;
}

// A grant of credit: any non-negative number, its fraction dropped and a
// huge one clamped (the caller clamps it again to max_stream_credit, as
// docs/streams.md says); absent: 0; nullopt: not a non-negative number.
std::optional<std::uint64_t> credit_of(const json& o) {
  auto it = o.find("credit");
  if (it == o.end()) return 0;
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (!(d >= 0)) return std::nullopt;
    return d >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(d);
  }
  return count_of(o, "credit");
}

std::optional<Id> id_of(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  return Id::from_json(*it);
}

bool flag_of(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_boolean() && it->get<bool>();
}

Notification chunk_message(const Id& id, Chunk&& c) {
  json p = json::object();
  p["id"] = id.to_json();
  p["seq"] = c.seq;
  p["value"] = std::move(c.value);
  if (c.final) p["final"] = true;
  if (c.total) p["total"] = *c.total;
  return Notification{kChunk, std::move(p)};
}

// Whether object `v` is the JSON codec's form of a binary value,
// {"bytes":[0–255…],"subtype":null or an integer} (nlohmann's). It counts as
// the bytes it stands for: its sender measured the binary value, and the
// receiver must come to the same size (docs/streams.md, "Binary").
// A JSON number whose value is an integer (1, 1.0, 1e2, -0), as JavaScript's
// Number.isInteger has it, within [lo, hi].
bool integral(const json& e, double lo, double hi) {
  if (!e.is_number()) return false;
  const double v = e.get<double>();
  return std::isfinite(v) && v == std::floor(v) && v >= lo && v <= hi;
}

bool binary_form(const json& v) {
  if (v.size() != 2) return false;
  const auto b = v.find("bytes");
  const auto t = v.find("subtype");
  if (b == v.end() || t == v.end() || !b->is_array()) return false;
  if (!t->is_null() && !integral(*t, -HUGE_VAL, HUGE_VAL)) return false;
  for (const json& e : *b)
    if (!integral(e, 0, 255)) return false;
  return true;
}

// chunk_size's walk: adds to `n` and stops once it passes `stop`.
void add_size(const json& v, std::size_t stop, std::size_t& n) {
  switch (v.type()) {
    case json::value_t::string: n += v.get_ref<const std::string&>().size(); return;
    case json::value_t::binary: n += v.get_binary().size(); return;
    case json::value_t::array:
      for (const json& e : v) {
        if (n > stop) return;
        n += 1;
        add_size(e, stop, n);
      }
      return;
    case json::value_t::object:
      if (binary_form(v)) {
        n += v.find("bytes")->size();
        return;
      }
      for (auto it = v.begin(); it != v.end() && n <= stop; ++it) {
        n += it.key().size() + 1;
        add_size(it.value(), stop, n);
      }
      return;
    default: n += 8; return;
  }
}

}  // namespace

std::unique_ptr<StreamOut> take_opening(PeerState& s, const Id& id) {
  auto it = s.openings.find(id);
  if (it == s.openings.end()) return nullptr;
  auto out = std::make_unique<StreamOut>();
  out->stream = it->second.stream;
  out->progress = it->second.progress;
  out->credit = it->second.credit;
  out->malformed = it->second.malformed;
  s.openings.erase(it);
  return out;
}

void PeerState::drop_chunks(StreamOut& out, const Id& id) {
  for (std::size_t i = out.head; i < out.queue.size(); ++i) {
    if (!opts.discard) break;
    Outgoing o;
    o.messages.emplace_back(chunk_message(id, std::move(out.queue[i])));
    opts.discard(std::move(o));
  }
  out.queue.clear();
  out.head = 0;
  if (out.answer) {
    Response r{id, {}};
    if (out.answer->ok()) r.outcome = std::move(out.answer->value());
    else r.outcome = out.answer->error();
    out.answer.reset();
    drop(std::move(r));
  }
}

void PeerState::pump(std::uint64_t slot) {
  Serving* e = find_serving(slot);
  if (!e || !e->out || e->out->pumping) return;
  e->out->pumping = true;
  // Sending may re-enter (a loopback transport grants credit from inside
  // emit): the entry is looked up again after every send.
  while (e && e->out->credit > 0 && e->out->head < e->out->queue.size()) {
    StreamOut& o = *e->out;
    --o.credit;
    Outgoing msg;
    msg.messages.emplace_back(chunk_message(e->id, std::move(o.queue[o.head++])));
    emit(std::move(msg));
    e = find_serving(slot);
  }
  if (!e) return;
  StreamOut& o = *e->out;
  o.pumping = false;
  if (o.head < o.queue.size()) return;
  o.queue.clear();
  o.head = 0;
  if (o.answer) {
    // The handler answered while chunks were queued: the answer follows them.
    Result<json> r = std::move(*o.answer);
    o.answer.reset();
    return complete(slot, std::move(r));
  }
  if (o.credit > 0 && o.on_writable) {
    auto f = std::move(o.on_writable);
    o.on_writable = nullptr;
    f();
  }
}

std::optional<Id> PeerState::chunk_of(const Notification& n) const {
  if (n.method != kChunk || !n.params) return std::nullopt;
  std::optional<json> p = n.params;  // a copy: the host may rewrite it (inspect)
  if (opts.inspect) opts.inspect(*p, "value");
  return p->is_object() ? id_of(*p, "id") : std::nullopt;
}

void PeerState::chunk_undelivered(const Id& id, const Error& why) {
  // The caller's stream now misses a chunk: it fails rather than going on
  // without it (or failing later as out of order). The handler learns it as
  // a cancellation, and its writes and answer are refused from now on.
  auto range = serving_ids.equal_range(id);
  std::vector<std::uint64_t> slots;
  for (auto i = range.first; i != range.second; ++i) slots.push_back(i->second);
  for (auto slot : slots) {
    Serving* e = find_serving(slot);
    if (!e || e->cancelled || !e->out || !e->out->stream) continue;
    e->cancelled = true;
    drop_chunks(*e->out, id);
    if (!(e = find_serving(slot))) continue;
    auto f = std::move(e->on_cancel);  // kept until the answer has gone (cancel_serving)
    if (f) f();  // may re-enter and reply
    if (find_serving(slot))
      complete(slot, Error(code::kInternalError, "Internal error: a stream chunk could not be sent: " + why.message));
  }
}

bool PeerState::stream_control(const std::string& method, std::optional<json>& params) {
  if (method.size() < 3 || method[0] != '$' || method[1] != '/') return false;
  const bool open = method == kOpen, credit = method == kCredit, chunk = method == kChunk,
             progress = method == kProgress;
  if (!open && !credit && !chunk && !progress) return false;
  if (params && opts.inspect) opts.inspect(*params, chunk || progress ? "value" : nullptr);
  if (!params || !params->is_object()) {
    if (progress) return false;  // somebody else's $/progress: an ordinary notification
    diag(Diagnostic::Kind::IgnoredMessage, method + " without an object of params; ignored");
    return true;
  }
  const json& p = *params;

  if (open || credit) {  // serving side: the caller opens a stream or grants credit
    auto id = id_of(p, "id");
    if (!id) {
      diag(Diagnostic::Kind::IgnoredMessage, method + " without a valid id; ignored");
      return true;
    }
    const auto grant = credit_of(p);
    if (!grant)
      diag(Diagnostic::Kind::IgnoredMessage, method + " whose credit is not a non-negative number; none granted");
    const std::uint64_t n = std::min<std::uint64_t>(grant.value_or(0), opts.limits.max_stream_credit);
    if (credit) {
      auto range = serving_ids.equal_range(*id);
      std::vector<std::uint64_t> slots;
      for (auto i = range.first; i != range.second; ++i) slots.push_back(i->second);
      for (auto slot : slots) {
        Serving* e = find_serving(slot);
        if (!e || !e->out || !e->out->stream) continue;
        e->out->credit += n;
        pump(slot);
      }
      return true;
    }
    // $/weft/open precedes its request; the request picks it up (dispatch).
    // One whose request never comes (refused at its frame, unsendable on the
    // caller's side) would stay: past max_in_flight the older half goes, so
    // the table stays bounded and a new stream still opens. Half, not one:
    // finding the oldest is a walk of the table, and a flood of opens would
    // pay that walk per message; once per max_in_flight / 2 opens it is O(1)
    // per open. An open waits for a request sent right after it, so the
    // newer half holds every open still expected.
    if (openings.size() >= opts.limits.max_in_flight && !openings.count(*id)) {
      // Orders are unique and below openings_seen: at most `keep` are at or
      // past the cutoff.
      const std::uint64_t keep = opts.limits.max_in_flight / 2;
      const std::uint64_t cutoff = openings_seen - std::min<std::uint64_t>(keep, openings_seen);
      for (auto i = openings.begin(); i != openings.end();) i = i->second.order < cutoff ? openings.erase(i) : std::next(i);
      diag(Diagnostic::Kind::IgnoredMessage, "too many $/weft/open awaiting their requests; the older half dropped");
    }
    // After a handshake, only what was agreed is opened.
    Opening& o = openings[*id];
    o.order = openings_seen++;
    o.stream = p.contains("credit") && allows("streams");
    o.credit = n;
    o.progress = flag_of(p, "progress") && allows("progress");
    o.malformed = !grant && o.stream;  // an open not agreed to is ignored, whatever its credit
    return true;
  }

  // Calling side: a chunk or a progress value for one of our calls.
  auto id = id_of(p, chunk ? "id" : "token");
  Pending* call = id && id->kind() == Id::Kind::Int ? pending.find(id->as_int()) : nullptr;
  if (progress) {
    if (!call || !call->stream || !call->stream->on_progress) return false;
    const std::int64_t n = id->as_int();
    StreamIn& in = *call->stream;
    if (in.progress_resets) restart_deadline(n, *call);
    auto f = in.on_progress;  // copy: it may settle the call
    auto v = params->find("value");
    f(v == params->end() ? json() : std::move(*v));
    return true;
  }
  if (!call) {
    diag(Diagnostic::Kind::UnknownResponse, "$/weft/chunk for no pending stream; dropped");
    return true;
  }
  const std::int64_t n = id->as_int();
  StreamIn* in = call->stream.get();
  std::string wrong;
  const auto seq = count_of(p, "seq");
  if (!in || !in->on_chunk) wrong = "a chunk for a call that is not a stream";
  else if (in->finished) wrong = "a chunk after the final one";
  else if (!seq || *seq != in->next_seq)
    wrong = "chunk out of order (expected seq " + std::to_string(in->next_seq) + ")";
  else if (in->credit == 0) wrong = "more chunks than granted";
  else if (const std::size_t max = opts.limits.max_stream_chunk; max) {
    auto v = params->find("value");
    if (const std::size_t n = v == params->end() ? 0 : measure_chunk(*v, max); n > max)
      wrong = "a chunk larger than max_stream_chunk (" + std::to_string(max) + " bytes)";
  }
  if (!wrong.empty()) {
    // The sender broke the stream's rules: the call fails, and the other side
    // is told to stop (its answer will find no pending call).
    Outgoing o;
    o.messages.emplace_back(Notification{"$/cancelRequest", json{{"id", n}}});
    emit(std::move(o));
    settle(Id::integer(n), Error(code::kInvalidRequest, "Invalid Request: stream: " + wrong));
    return true;
  }
  --in->credit;
  ++in->next_seq;
  Chunk c;
  c.seq = *seq;
  c.final = flag_of(p, "final");
  c.total = count_of(p, "total");
  in->finished = c.final;
  if (auto v = params->find("value"); v != params->end()) c.value = std::move(*v);
  restart_deadline(n, *call);
  auto f = in->on_chunk;  // copy: it may settle or cancel the call
  f(std::move(c));
  return true;
}

std::size_t PeerState::measure_chunk(const json& value, std::size_t stop) const {
  return opts.chunk_size ? opts.chunk_size(value, stop) : weft::chunk_size(value, stop);
}

}  // namespace detail

using detail::PeerState;

std::size_t chunk_size(const json& value, std::size_t stop) {
  std::size_t n = 0;
  detail::add_size(value, stop, n);
  return n;
}

// ---- Calling side -------------------------------------------------------------

Result<Id> Peer::stream(std::string method, std::optional<json> params, StreamOptions so,
                        CallCallback done, CallOptions opts, Millis now) {
  if (!so.on_chunk) return Error(code::kInvalidParams, "Invalid params: a stream needs on_chunk");
  if (!s_->allows("streams"))
    return Error(code::kInvalidRequest, "Invalid Request: streams were not agreed in the handshake");
  return start_call(std::move(method), std::move(params), std::move(done), std::move(opts), now, &so);
}

bool Peer::grant(const Id& id, std::uint32_t n) {
  auto self = s_;
  PeerState& s = *self;
  if (id.kind() != Id::Kind::Int) return false;
  detail::Pending* call = s.pending.find(id.as_int());
  if (!call || !call->stream || !call->stream->on_chunk) return false;
  if (n == 0) return true;
  call->stream->credit += n;
  // A consumer taking chunks is activity too: a slow one is not timed out.
  s.restart_deadline(id.as_int(), *call);
  Outgoing o;
  o.messages.emplace_back(Notification{detail::kCredit, json{{"credit", n}, {"id", id.as_int()}}});
  s.emit(std::move(o));
  return true;
}

// ---- Serving side: Reply ------------------------------------------------------

bool Reply::streaming() const {
  auto s = state_.lock();
  const detail::Serving* e = s ? s->find_serving(slot_) : nullptr;
  return e && e->out && e->out->stream;
}

bool Reply::wants_progress() const {
  auto s = state_.lock();
  const detail::Serving* e = s ? s->find_serving(slot_) : nullptr;
  return e && e->out && e->out->progress;
}

Result<bool> Reply::write(json value, bool final, std::optional<std::uint64_t> total) {
  auto s = state_.lock();
  detail::Serving* e = s && slot_ ? s->find_serving(slot_) : nullptr;
  auto refuse = [&](Error err) -> Result<bool> {
    if (s && s->opts.discard) {  // the value is given up either way
      Outgoing o;
      o.messages.emplace_back(detail::chunk_message(e ? e->id : Id(), Chunk{0, std::move(value), false, std::nullopt}));
      s->opts.discard(std::move(o));
    }
    return err;
  };
  if (!e || e->cancelled) return refuse(Error(code::kClosed, "stream: the request is answered or cancelled"));
  if (!e->out || !e->out->stream)
    return refuse(Error(code::kInvalidRequest, "stream: the caller did not open a stream for this request"));
  detail::StreamOut& o = *e->out;
  if (o.final_sent) return refuse(Error(code::kInvalidRequest, "stream: a chunk after the final one"));
  // The receiving side would fail the whole stream over an oversized chunk
  // (stream_control): refused here, the writer can still send smaller ones.
  if (const std::size_t max = s->opts.limits.max_stream_chunk; max && s->measure_chunk(value, max) > max)
    return refuse(Error(code::kInvalidRequest, "stream: the chunk is larger than max_stream_chunk (" +
                                                   std::to_string(max) + " bytes): split it"));
  if (o.queue.size() - o.head >= s->opts.limits.max_stream_queue)
    return refuse(Error(code::kOverloaded, "stream: queue full (limit " +
                                               std::to_string(s->opts.limits.max_stream_queue) +
                                               " chunks): wait for on_writable"));
  o.queue.push_back(Chunk{o.seq++, std::move(value), final, total});
  o.final_sent = final;
  const std::uint64_t slot = slot_;
  s->pump(slot);
  if (final) return true;  // nothing more will be written: no need to wait
  e = s->find_serving(slot);
  return e && e->out->credit > 0 && e->out->head == e->out->queue.size();
}

void Reply::on_writable(std::function<void()> f) {
  auto s = state_.lock();
  detail::Serving* e = s && slot_ ? s->find_serving(slot_) : nullptr;
  if (!e || !e->out || !f) return;
  if (e->out->credit > 0 && e->out->head == e->out->queue.size()) return f();
  e->out->on_writable = std::move(f);
}

void Reply::progress(json value) {
  auto s = state_.lock();
  detail::Serving* e = s && slot_ ? s->find_serving(slot_) : nullptr;
  Outgoing o;
  json p = json::object();
  p["token"] = e ? e->id.to_json() : json();
  p["value"] = std::move(value);
  o.messages.emplace_back(Notification{detail::kProgress, std::move(p)});
  if (e && e->out && e->out->progress && !e->cancelled) return s->emit(std::move(o));
  if (s && s->opts.discard) s->opts.discard(std::move(o));  // not asked for: the value is dropped
}

}  // namespace weft
