// impl.h — the Client's state, shared by the files that implement it:
// calls.cpp (calls and their lifetimes: queued, on the wire, waiting to
// retry; deadlines, cancellation) and connection.cpp (connecting,
// reconnecting with backoff, what a closed connection means for its calls).
// Matching answers to calls is the core Peer's job; these files only decide
// what happens to a call when its connection goes away.
#pragma once

#include <deque>
#include <random>
#include <set>
#include <unordered_map>

#include <boost/asio/steady_timer.hpp>

#include "address.h"
#include "client/link.h"
#include "util.h"
#include "weft/host/client.h"

namespace weft::host {

using detail::Address;
using detail::Link;

struct Client::Impl : std::enable_shared_from_this<Impl> {
  enum class At { Queue, Wire, Backoff, Orphan };
  // A streamed call's consumer side (streams.cpp).
  struct Stream {
    StreamPolicy policy;
    // Shared: a chunk is delivered through a copy of it, which outlives the
    // call being settled from inside the receiver (cancel).
    std::shared_ptr<ChunkReceiver> on_chunk;
    std::uint32_t owed = 0;      // chunks consumed and not granted back yet
    bool paused = false;
    bool grant_posted = false;   // a grant of `owed` is posted to the end of this turn
  };
  struct Call {
    std::string method;
    std::optional<json> params;
    CallPolicy policy;
    Completion done;
    std::optional<Millis> deadline;
    Millis timeout = 0;
    std::optional<Millis> retry_at;
    int sends = 0;
    At at = At::Queue;
    Link* link = nullptr;
    Id wire_id;
    bool cancelling = false;
    bool timing_out = false;
    std::unique_ptr<Stream> stream;  // null: an ordinary call
    std::optional<ResponseMetrics> metrics;  // of the last answer (Outcome::metrics)
  };

  Impl(boost::asio::io_context& io, ClientConfig c)
      : io(io), cfg(std::move(c)), addr(detail::parse_address(cfg.address)), timer(io),
        reconnect_timer(io), rng(std::random_device{}()) {
    if (!cfg.log) cfg.log = detail::default_log();
    if (cfg.connect_attempts < 1) cfg.connect_attempts = 1;
  }

  boost::asio::io_context& io;
  ClientConfig cfg;
  Result<Address> addr;
  Client* owner = nullptr;
  std::vector<std::function<void(Peer&)>> registrations;
  std::unordered_map<CallId, Call> calls;
  // Calls and notifications waiting for a connection, in the order made (a
  // notification sent after a call must not overtake it: MCP's initialize).
  std::deque<CallId> queue;
  std::unordered_map<CallId, std::pair<std::string, std::optional<json>>> notes;  // ids in `queue`
  std::vector<CallId> orphans;  // failed by a closing link; settled when it says why
  std::set<std::pair<Millis, CallId>> wakeups;  // deadlines and retry times
  boost::asio::steady_timer timer;
  std::optional<Millis> armed;
  boost::asio::steady_timer reconnect_timer;
  std::shared_ptr<Link> link;
  bool link_open = false;
  Millis opened_at = 0;
  bool answered_on_link = false;
  // The link is being closed because the server sent what we cannot decode:
  // its calls fail as a -32700 answer (exit 1), not as a lost connection.
  bool undecodable = false;
  std::size_t on_wire = 0;
  // Messages sent on the open link (calls, notifications, cancels): an error
  // with id null is matched to a call only when that call is all it carried.
  std::size_t sent_on_link = 0;
  // A notification is being handed to the link: a SendFailed reported
  // meanwhile is its (the link encodes and checks max_send as it sends).
  bool noting = false;
  // A call is being handed to the link: a completion meanwhile is the link
  // refusing it (over max_request), not an answer.
  bool calling = false;
  // Wire ids of the calls cancelled on the open link ($/cancelRequest:
  // cancel(), a timeout): their late answer finds no pending call, as
  // expected, and is not worth a log line. Erased when it comes.
  std::set<std::int64_t> cancelled_on_link;
  void sent_cancel(const Id& wire);
  std::size_t unsent_notes = 0;  // notifications the link could not send, or lost
  // Where each notification sent on the open link ends (Link::queued): one
  // ending past Link::written() when the link closes never reached the
  // socket, and is counted in unsent_notes. Those written are dropped as the
  // next one is sent.
  std::deque<std::uint64_t> note_ends;
  Result<void> send_note(std::string method, std::optional<json> params);
  // The server of the open link announced a drain: nothing new goes on it
  // (drain.cpp).
  std::optional<DrainNotice> drain_notice;
  bool drain_closing = false;  // the drained link has been asked to close
  bool drain_waiting = false;  // closed after a drain; waiting reconnect_after
  State state = State::Idle;
  int failures = 0;  // consecutive failed connection attempts
  int cycle_attempts = 0;  // attempts since the last connection opened
  bool closing = false;   // inside close(): every call fails, none is retried
  bool for_good = false;
  std::vector<std::function<void()>> on_shutdown;
  CallId next_id = 1;
  std::uint64_t connections = 0;
  std::optional<Error> last_error;
  std::mt19937 rng;

  void log(const std::string& line) { cfg.log(line); }

  // calls.cpp
  // `stream`: a streamed call (never retried).
  CallId call(std::string method, std::optional<json> params, CallPolicy policy, Completion done,
              std::unique_ptr<Stream> stream = nullptr);
  void send(CallId id);
  void answered(CallId id, Link* l, Result<json> r);
  Millis backoff_delay(int k);
  bool backoff(CallId id, const Error& e);
  void settle_timeout(CallId id);
  void settle(CallId id, Outcome::Status st, json result, std::optional<Error> e);
  bool cancel(CallId id);
  Result<void> notify(std::string method, std::optional<json> params);
  void rearm();
  void wake();

  // drain.cpp
  void drained(const DrainNotice& n);
  bool hold_for_drain(CallId id);
  bool requeue_refused(CallId id, Link* l, const Error& e);
  void drain_check();
  bool reconnect_after_drain(const std::optional<DrainNotice>& n);
  bool flush_after_drain() const;

  // streams.cpp
  CallId stream(std::string method, std::optional<json> params, StreamPolicy policy,
                ChunkReceiver on_chunk, Completion done);
  Result<Id> send_stream(CallId id, Call& c, std::optional<json> params, const weft::CallOptions& o);
  void chunk(CallId id, Link* l, Chunk&& ch);
  // `n` more chunks were consumed: granted back now when they make a step
  // (credit/4), else at the end of this turn of the loop (never left owed).
  void consumed(CallId id, std::uint32_t n);
  bool grant(CallId id, std::uint32_t n);
  bool pause(CallId id, bool paused);
  // A stream's timeout measures silence: each chunk and grant restarts it.
  void restart_deadline(CallId id, Call& c);

  // connection.cpp
  void ensure_connecting();
  void start_connect();
  void opened();
  void diagnostic(const Diagnostic& d);
  void closed(Error why, bool was_open, bool retryable);
  void fail_waiting(const Error& why);
  void fail_backoff(const Error& why);
  void close(bool good, const Error& why);
};

}  // namespace weft::host
