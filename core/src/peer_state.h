// Private: the state behind a Peer. Replies hold a weak_ptr to it, so a Reply
// outliving its Peer is inert instead of dangling.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/peer.h"

namespace weft::detail {

struct Registered {
  bool notification = false;  // registered with Peer::notification
  MethodHandler async;
  SyncHandler sync;
  NotificationHandler notify;
  std::optional<ParamSpec> spec;
  std::string description;
};

// An outgoing call awaiting its response.
struct Pending {
  CallCallback done;
  std::multimap<Millis, Id>::iterator deadline;  // == deadlines.end() when none
  Millis timeout = 0;
  std::string method;
};

// An incoming request being served by an async handler.
struct Serving {
  Id id;
  std::uint64_t batch = 0;   // 0: not part of a batch
  std::size_t index = 0;     // position within the batch
  bool discard = false;      // a notification: the answer is not sent (§4.1)
  bool cancelled = false;
  std::function<void()> on_cancel;
};

// An incoming batch whose answers are still being collected (§6: the
// responses go back as one array, once every request has been answered).
struct BatchAcc {
  std::size_t remaining = 0;
  std::vector<std::optional<Response>> slots;
};

struct PeerState : std::enable_shared_from_this<PeerState> {
  explicit PeerState(PeerOptions o) : opts(std::move(o)) {}

  PeerOptions opts;
  std::unordered_map<std::string, Registered> methods;
  std::unordered_map<Id, Pending, IdHash> pending;
  std::multimap<Millis, Id> deadlines;
  std::unordered_map<std::uint64_t, Serving> serving;
  std::unordered_multimap<Id, std::uint64_t, IdHash> serving_ids;  // for $/cancelRequest
  std::unordered_map<std::uint64_t, BatchAcc> batches;
  std::size_t answering = 0;  // in-flight requests that will be answered (not notifications)
  std::uint64_t next_slot = 1;
  std::uint64_t next_batch = 1;
  std::int64_t next_id = 1;
  bool closed = false;

  void emit(Outgoing&& o);
  void diag(Diagnostic::Kind k, std::string msg);

  // Produces the answer to one request: sent at once, or stored in its batch.
  void answer(std::uint64_t batch, std::size_t index, Response&& r);
  // One answer of `batch` is in (or the dispatch guard is released); the
  // array is sent when the count reaches zero.
  void release_batch(std::uint64_t batch);
  // A Reply (or the Reply's destructor) completed serving slot `slot`.
  void complete(std::uint64_t slot, Result<json>&& r);
  void cancel_serving(const Id& id);
  Reply make_reply(std::uint64_t slot) { return Reply(weak_from_this(), slot); }
  void settle(const Id& id, Result<json>&& r);  // an outgoing call finished
  // Registers an outgoing call under a fresh id, with its deadline if any.
  Id track(const std::string& method, CallCallback done, std::optional<Millis> timeout, Millis now);
};

}  // namespace weft::detail
