// Private: the state behind a Peer. Replies hold a weak_ptr to it, so a Reply
// outliving its Peer is inert instead of dangling.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/peer.h"

#include "cold.h"
#include "peer/pending.h"
#include "rpc/made.h"

namespace weft::detail {

struct Registered {
  bool notification = false;  // registered with Peer::notification
  MethodHandler async;
  SyncHandler sync;
  DeferrableHandler deferrable;
  NotificationHandler notify;
  std::optional<ParamSpec> spec;
  // Set when `spec` is unusable (detail::spec_problem): every call is
  // refused -32603 with this message instead of being checked.
  std::string bad_spec;
  std::string description;
};

// What the caller side keeps of a streamed call or one that asked for
// progress (docs/streams.md).
struct StreamIn {
  ChunkHandler on_chunk;         // empty: not a stream (progress only)
  ProgressHandler on_progress;
  std::uint64_t credit = 0;      // chunks granted and not yet received
  std::uint64_t next_seq = 0;
  bool finished = false;         // the final chunk arrived
  bool progress_resets = false;
};

// An outgoing call awaiting its response.
struct Pending {
  CallCallback done;
  Millis timeout = 0;         // for the timeout message
  Millis at = 0;              // its deadline (the live entry in deadlines)
  bool has_deadline = false;  // an entry in PeerState::deadlines stands for it
  std::string method;         // for the timeout message
  std::unique_ptr<StreamIn> stream;
  std::function<void(const ResponseMetrics&)> on_metrics;  // CallOptions::on_metrics
  std::int32_t tag = -1;      // CallOptions::tag (Peer::take_result)
};

// Deadlines of outgoing calls: a binary min-heap on (at, id) in a vector, with
// lazy deletion. A settled call leaves its entry behind; entries whose call is
// gone are popped as soon as they reach the top (so the top is always live),
// and the heap is rebuilt when stale entries outnumber live ones: memory stays
// proportional to the calls pending, and the common path (answered before the
// deadline) allocates nothing. Ties go in id order, i.e. in the order the
// calls were made.
struct Deadline {
  Millis at;
  std::int64_t id;
};
struct DeadlineLater {
  bool operator()(const Deadline& a, const Deadline& b) const {
    return a.at != b.at ? a.at > b.at : a.id > b.id;
  }
};

// What the serving side keeps of a request whose caller opened a stream or
// asked for progress ($/weft/open, docs/streams.md).
struct StreamOut {
  bool stream = false;          // chunks may be written
  bool progress = false;        // $/progress may be sent
  std::uint64_t credit = 0;     // chunks the caller has room for
  std::uint64_t seq = 0;        // of the next chunk
  bool final_sent = false;
  bool pumping = false;         // pump() is running (it may re-enter)
  std::vector<Chunk> queue;     // written beyond credit, oldest first
  std::size_t head = 0;         // queue[head] is the next to send
  std::function<void()> on_writable;
  std::optional<Result<json>> answer;  // given while chunks were queued
  bool malformed = false;       // its $/weft/open's credit was not a count: the request is refused
};

// A $/weft/open that arrived before its request (it is sent just before it).
struct Opening {
  std::uint64_t credit = 0;
  bool stream = false;
  bool progress = false;
  std::uint64_t order = 0;  // arrival: the oldest goes first when they are too many
  bool malformed = false;   // its credit was not a count (StreamOut::malformed)
};

// An incoming request being served by an async handler.
struct Serving {
  std::uint64_t slot = 0;    // 0: this entry is free
  Id id;
  std::uint64_t batch = 0;   // 0: not part of a batch
  std::size_t index = 0;     // position within the batch
  bool discard = false;      // a notification: the answer is not sent (§4.1)
  bool cancelled = false;
  std::function<void()> on_cancel;
  std::unique_ptr<StreamOut> out;  // null: a plain request
  std::int64_t started_us = -1;    // clock_us() at dispatch when measuring, else -1
};

// An incoming batch whose answers are still being collected (§6: the
// responses go back as one array, once every request has been answered).
struct BatchAcc {
  std::size_t remaining = 0;
  std::vector<std::optional<Response>> slots;
};

struct PeerState : std::enable_shared_from_this<PeerState> {
  explicit PeerState(PeerOptions o) : opts(std::move(o)), next_id(std::max<std::int64_t>(opts.first_id, 1)) {}

  PeerOptions opts;
  using Methods = std::unordered_map<std::string, Registered>;
  Methods methods;
  // The entry the last dispatch found (calls tend to repeat a method): a
  // string compare instead of a hash lookup. Elements of an unordered_map
  // stay where they are on rehash; remove_method() forgets it.
  Methods::value_type* last_method = nullptr;
  // Handlers run in place (dispatch), not from a copy of their std::function
  // (a copy per call showed in the profile of small calls). A handler may
  // re-register or remove its own method: while one runs (`running` > 0)
  // the replaced registration's node is kept here, at its address, until the
  // outermost handler has returned.
  std::size_t running = 0;
  std::vector<Methods::node_type> retired;
  // RAII: a handler is running, for a message of batch `batch` (0: one
  // received alone; see `dispatching`).
  struct Running {
    Running(PeerState& s, std::uint64_t batch) : s_(s), was_(s.dispatching) {
      ++s_.running;
      s_.dispatching = batch;
    }
    ~Running() {
      s_.dispatching = was_;
      if (--s_.running == 0 && !s_.retired.empty()) s_.retired.clear();
    }
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;
    PeerState& s_;
    std::uint64_t was_;
  };
  // Peer::method/notification/remove (see `retired`).
  void register_method(std::string name, Registered r);
  bool remove_method(const std::string& name);
  // Outgoing calls by id: every id this side makes is an integer.
  CallTable<Pending> pending;
  std::vector<Deadline> deadlines;  // heap, see Deadline
  std::size_t live_deadlines = 0;   // entries whose call is pending
  // Requests being served, by slot: slot = generation << 32 | (index + 1), so
  // a Reply whose entry was freed and reused (close) finds nothing.
  std::vector<Serving> serving;
  std::vector<std::uint32_t> free_serving;
  std::uint32_t serving_gen = 0;
  using ServingIds = std::unordered_multimap<Id, std::uint64_t, IdHash>;  // for $/cancelRequest
  ServingIds serving_ids;
  std::vector<ServingIds::node_type> spare_serving_ids;
  std::unordered_map<std::uint64_t, BatchAcc> batches;
  std::unordered_map<Id, Opening, IdHash> openings;  // $/weft/open awaiting its request
  std::uint64_t openings_seen = 0;
  // The Outgoing of the last single answer or call, its vector reused by the next
  // (taken out while in use: a send that re-enters the peer gets its own).
  Outgoing spare_out;
  std::size_t answering = 0;  // in-flight requests that will be answered (not notifications)
  // The message whose handler held its answer (Deferral::hold) until
  // Peer::answer_held or Peer::defer_held: what its dispatch knew of it.
  struct Held {
    bool active = false;
    bool request = false;  // false: a notification to a method (§4.1: never answered)
    Id id;
    std::string method;    // a notification's, for its failure's diagnostic
    std::unique_ptr<StreamOut> out;
    std::int64_t started_us = -1;
    std::uint64_t batch = 0;  // a member of a paused batch: where its answer goes (§6)
    std::size_t index = 0;
  } held;
  // Reading a batch (peer.cpp read_batch). `reading`: the batch the
  // outermost receive is reading (0: none), the only one that may pause
  // after a member whose handler the host runs once the receive has
  // returned (Peer::pause, Deferral::hold). `dispatching`: the batch of the
  // message being dispatched now (0: one received alone), so that a pause
  // asked for by a handler of some other message (nested in a handler, or
  // in a completion) is refused. `pause_asked`: the member being read asked.
  // `paused`: a paused batch's members from `next` on, which Peer::resume
  // reads; batch 0 when none is paused (`items` then keeps its capacity).
  std::uint64_t reading = 0;
  std::uint64_t dispatching = 0;
  bool pause_asked = false;
  struct Paused {
    std::uint64_t batch = 0;
    std::size_t next = 0;
    std::vector<Item> items;
  } paused;
  // Asks that the batch being read pause after the member now dispatched
  // (of batch `batch`): true when it will (it is `reading`'s, and none has
  // asked yet).
  bool pause_reading(std::uint64_t batch) {
    if (batch == 0 || batch != reading || batch != dispatching || pause_asked) return false;
    pause_asked = true;
    return true;
  }
  std::uint64_t next_batch = 1;
  std::int64_t next_id = 1;
  bool closed = false;
  std::optional<Handshake> agreed;             // handshake.cpp
  bool measure = false;  // "metrics" agreed and clock_us given: answers carry metrics
  std::optional<DrainNotice> draining;         // this side: refusing new requests
  std::optional<DrainNotice> remote_draining;  // the other side: do not send
  double tokens = 0;                           // rate limit bucket (limits.cpp)
  Millis refilled_at = 0;
  bool bucket_started = false;

  void emit(Outgoing&& o);
  WEFT_COLD void diag(Diagnostic::Kind k, std::string msg, std::optional<Error> e = std::nullopt);
  // A response whose id matches no pending call (the UnknownResponse diagnostic, with its id).
  void unknown_response(const Id& id);
  // An answer that will not be sent, to PeerOptions::discard.
  void drop(Response&& r);

  // Produces the answer to one request: sent at once, or stored in its batch.
  // `started_us` >= 0: the clock_us() of its dispatch; the answer gets metrics.
  void answer(std::uint64_t batch, std::size_t index, Response&& r, std::int64_t started_us = -1);
  // The same for the Response `make()` returns, made where it is kept (the
  // outgoing vector or the batch's slot) instead of moved there.
  template <class Make>
  void answer_made(std::uint64_t batch, std::size_t index, Make&& make, std::int64_t started_us);
  // Answers request `id` with `r` through PeerOptions::send_result when it
  // may (a result, not in a batch, not measured); false: answer it otherwise.
  bool answer_result(std::uint64_t batch, const Id& id, Result<json>& r, std::int64_t started_us) {
    if (batch != 0 || started_us >= 0 || !r.ok() || !opts.send_result || closed) return false;
    opts.send_result(id, std::move(r.value()));
    return true;
  }
  // clock_us() when answers are measured (PeerState::measure), else -1.
  std::int64_t start_clock() const { return measure ? opts.clock_us() : -1; }
  // One answer of `batch` is in (or the dispatch guard is released); the
  // array is sent when the count reaches zero.
  void release_batch(std::uint64_t batch);
  // A Reply (or the Reply's destructor) completed serving slot `slot`.
  void complete(std::uint64_t slot, Result<json>&& r);
  void cancel_serving(const Id& id);
  // The request id `n` is a stream chunk of, if it is one (streams.cpp).
  std::optional<Id> chunk_of(const Notification& n) const;
  // A chunk of request `id` could not be sent (Peer::undelivered): the
  // stream fails while it is still served.
  void chunk_undelivered(const Id& id, const Error& why);
  Reply make_reply(std::uint64_t slot) { return Reply(weak_from_this(), slot); }
  // The entry of slot `slot`, or nullptr once it was completed or closed.
  Serving* find_serving(std::uint64_t slot) {
    const std::uint64_t i = (slot & 0xffffffffu) - 1;
    if (i >= serving.size() || serving[i].slot != slot) return nullptr;
    return &serving[i];
  }
  // A new serving entry (its slot is set); may move the others.
  Serving& add_serving();
  // Serves request `id` (nullptr: a notification, whose answer is dropped)
  // asynchronously: a serving entry, indexed for $/cancelRequest, answered
  // through make_reply(slot). Returns the slot.
  std::uint64_t serve(const Id* id, std::uint64_t batch, std::size_t index, std::unique_ptr<StreamOut> out,
                      std::int64_t started_us);
  void free_serving_entry(Serving& s);
  // An outgoing call finished; `metrics` what its response carried.
  void settle(const Id& id, Result<json>&& r, const ResponseMetrics* metrics = nullptr);
  // Removes the settled call at `slot` of `pending` and its deadline.
  void forget(std::size_t slot, bool had_deadline);
  // Registers an outgoing call under a fresh id, with its deadline if any.
  Id track(const std::string& method, CallCallback done, std::optional<Millis> timeout, Millis now,
           std::int32_t tag = -1);
  // Pops deadline entries of calls no longer pending off the top; rebuilds
  // the heap when they outnumber the live ones.
  void prune_deadlines();
  // Restarts the timeout of pending call `p` (id `n`) from the host's clock.
  void restart_deadline(std::int64_t n, Pending& p);

  // Limits and drain (limits.cpp): the refusal for a new incoming request
  // (rate limit, drain), if any; and a $/weft/drain from the other side.
  std::optional<Error> refuse_request();
  void remote_drain(std::optional<json>& params);
  // The refusal for a new outgoing call while the other side drains.
  std::optional<Error> refuse_call() const;

  // Handshake (handshake.cpp): whether a capability may be used — true when
  // no handshake has agreed on any.
  bool allows(const char* capability) const;

  // Streams (streams.cpp).
  // $/weft/open, $/weft/credit, $/weft/chunk, $/progress: true when `method`
  // is one of them and the notification was consumed.
  bool stream_control(const std::string& method, std::optional<json>& params);
  // Sends what credit allows of slot's queue; sends a held answer once the
  // queue is empty; calls on_writable when there is room.
  void pump(std::uint64_t slot);
  // Queued chunks that will never be sent (cancel, close), to discard.
  void drop_chunks(StreamOut& out, const Id& id);
  // A chunk's size for max_stream_chunk (PeerOptions::chunk_size).
  std::size_t measure_chunk(const json& value, std::size_t stop) const;
};

template <class Make>
void PeerState::answer_made(std::uint64_t batch, std::size_t index, Make&& make, std::int64_t started_us) {
  std::optional<ResponseMetrics> metrics;
  if (started_us >= 0) {  // docs/protocol.md "Metrics"; response_size is the encoder's
    const std::int64_t spent = opts.clock_us() - started_us;
    metrics = ResponseMetrics{static_cast<std::uint64_t>(spent > 0 ? spent : 0), 0};
  }
  if (closed) return drop(make());  // a handler closed the Peer: nothing goes out (discard)
  if (batch == 0) {
    Outgoing o = std::move(spare_out);
    o.messages.clear();
    o.batch = false;
    auto& r = std::get<Response>(o.messages.emplace_back(Made{[&make] { return make(); }}));
    if (metrics) r.metrics = metrics;
    emit(std::move(o));
    spare_out = std::move(o);  // whatever the send left of it
    return;
  }
  auto it = batches.find(batch);
  if (it == batches.end()) return drop(make());  // closed meanwhile
  auto& r = it->second.slots[index].emplace(Made{[&make] { return make(); }});
  if (metrics) r.metrics = metrics;
  release_batch(batch);
}

// rpc.handshake's answer on the serving side (handshake.cpp).
Result<json> answer_handshake(PeerState& s, const json& params);

// The $/weft/open received for request `id`, if any, as the serving entry's
// stream state (removed from PeerState::openings either way).
std::unique_ptr<StreamOut> take_opening(PeerState& s, const Id& id);

// Dispatches one valid request (id given) or notification (id null) to its
// handler (serving.cpp). `batch`/`index` place the answer (§6).
void dispatch(PeerState& s, std::string& method, std::optional<json>& params, const Id* id,
              std::uint64_t batch, std::size_t index);

}  // namespace weft::detail
