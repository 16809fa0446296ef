// weft/peer.h — the bidirectional JSON-RPC 2.0 endpoint.
//
// One Peer both serves methods and makes requests over one connection. It is
// sans-I/O: decoded documents go in (`receive`), messages to send come out
// through the `send` callback, and time enters as a value (`now`); the host
// asks `next_deadline()` and calls `advance(now)` when it passes. No threads,
// no clock, no sockets: the browser event loop and Asio drive it alike.
//
// Not thread-safe: call it from one thread (or one JS event loop) only.
// Callbacks (handlers, call completions, send) may re-enter the Peer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/diagnostic.h"
#include "weft/error.h"
#include "weft/message.h"
#include "weft/params.h"
#include "weft/time.h"

namespace weft {

namespace detail {
struct PeerState;
}

// -- Serving -------------------------------------------------------------
// Answers one incoming request, now or later. Move-only. If it is destroyed
// unanswered the peer answers -32603 ("request dropped without a reply"), so
// a request is never left hanging. Calls after the first answer, or after the
// peer is gone, do nothing.
class Reply {
 public:
  Reply() = default;
  // Moving transfers the duty to answer; the moved-from Reply is done().
  Reply(Reply&&) noexcept;
  Reply& operator=(Reply&&) noexcept;
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply();

  // Answers with a result, an error, or either (the first answer wins).
  void ok(json result);
  void error(Error e);
  void respond(Result<json> r);

  // $/cancelRequest arrived for this request (or the peer closed). The core
  // has answered it with -32800 unless the on_cancel callback answered first
  // (LSP: a cancelled request still gets a response); a later answer is
  // dropped (PeerOptions::discard, Diagnostic::Kind::LateReply).
  bool cancelled() const;
  // Called once when the request is cancelled (immediately if it already is),
  // before the core's own -32800 answer: it may answer in its place.
  void on_cancel(std::function<void()> f);
  bool done() const { return slot_ == 0; }

  // -- Streamed results and progress (docs/streams.md) --------------------
  // The caller opened a stream for this request ($/weft/open with credit):
  // the handler may write chunks before its answer.
  bool streaming() const;
  // Sends `value` as the next chunk ($/weft/chunk) if the caller has granted
  // credit, else queues it (at most PeerLimits::max_stream_queue chunks) until
  // it does. True: the caller has room for more now (always after the
  // final chunk: nothing more will be written); false: wait for
  // on_writable before writing again. Errors: the caller opened no stream
  // (kInvalidRequest), the value is larger than PeerLimits::max_stream_chunk
  // (kInvalidRequest, nothing sent: the stream goes on), the request is
  // answered or cancelled (kClosed), the queue is full (kOverloaded). An
  // answer given while chunks are queued is sent after them.
  Result<bool> write(json value, bool final = false, std::optional<std::uint64_t> total = std::nullopt);
  // Called once, when the caller next grants credit and the queue is empty
  // (immediately if it already has room).
  void on_writable(std::function<void()> f);
  // The caller asked for progress ($/weft/open with "progress": true):
  // sends {"method":"$/progress","params":{"token":ID,"value":value}} (the
  // LSP notification, its token being the request id). Otherwise nothing.
  bool wants_progress() const;
  void progress(json value);

 private:
  friend struct detail::PeerState;
  Reply(std::weak_ptr<detail::PeerState> s, std::uint64_t slot) : state_(std::move(s)), slot_(slot) {}
  void release();
  std::weak_ptr<detail::PeerState> state_;
  std::uint64_t slot_ = 0;
};

// What a handler learns about the call besides params.
struct CallInfo {
  // The method called.
  const std::string& method;
  const Id* id;  // nullptr for a notification
};

// Async handler: answer through `reply`, now or later. `params` is null when the
// request had none (or normalised per ParamSpec).
using MethodHandler = std::function<void(json params, Reply reply, const CallInfo& info)>;
// Sync handler: the returned Result is the answer.
using SyncHandler = std::function<Result<json>(const json& params)>;

// What a DeferrableHandler gets to answer later: the request's Reply, taken
// on demand. Valid only while the handler runs.
class Deferral {
 public:
  // The request's Reply, the first time (a done Reply after that). Taking it
  // makes the request one served asynchronously, as for a MethodHandler.
  virtual Reply reply() = 0;
  // Whether reply() was called.
  virtual bool taken() const = 0;
  // Leaves the answer to Peer::answer_held() or Peer::defer_held(), which
  // the host calls once the receive has returned: a host that runs its
  // handlers off its own stack (the WebAssembly binding, where an Error a
  // JS handler makes would otherwise capture the module's frames). For a
  // message received alone, or a member of a batch whose reading then
  // pauses (Peer::pause: the host gives the answer, then calls resume()),
  // while no other answer is held. False otherwise (a batch read inside
  // another handler, say), and the handler answers now or takes its Reply,
  // as if it had not asked. A held request is not in flight for
  // $/cancelRequest, as one answered now is not; it answers as the
  // handler's own answer would have.
  virtual bool hold() = 0;

 protected:
  // Not deleted through this type: the Peer owns each one.
  ~Deferral() = default;
};

// Handler that answers now or later (a host whose handlers may return a value
// or a promise: the WebAssembly binding). It returns the answer when it has
// one at once, which then goes out as a SyncHandler's does, with no Reply or
// serving slot made for it; to answer later it takes the Reply
// (later.reply()) and returns nullopt. Returning nullopt without taking the
// Reply answers -32603, as an unanswered Reply does; a value returned after
// taking it is discarded (PeerOptions::discard): the Reply answers.
using DeferrableHandler =
    std::function<std::optional<Result<json>>(json& params, Deferral& later, const CallInfo& info)>;
// Notification handler: never answered, even on failure (§4.1).
using NotificationHandler = std::function<void(const json& params)>;

// A registered method, as Peer::methods() lists it (rpc.discover uses it).
struct MethodInfo {
  // Its name, whether it is a notification, its params and its description.
  std::string name;
  bool notification;
  std::optional<ParamSpec> spec;
  std::string description;
};

// -- Calling -------------------------------------------------------------
// The size PeerLimits::max_stream_chunk bounds: the bytes of a value's
// strings, binary data and object keys, plus 8 for every other element —
// close to its encoded size without encoding it. Counting stops once past
// `stop` (the result is then some size > stop), so a huge value costs no
// more than the limit it is checked against.
std::size_t chunk_size(const json& value, std::size_t stop = static_cast<std::size_t>(-1));

// One chunk of a streamed result, in order: seq counts from 0; `final` marks
// the last one when the sender knows it; `total` is the sender's count when
// it gave one (docs/streams.md).
struct Chunk {
  // Its number, value, whether it is the last, and the sender's count (above).
  std::uint64_t seq = 0;
  json value;
  bool final = false;
  std::optional<std::uint64_t> total;
};
// Receivers of a streamed call's chunks (StreamOptions::on_chunk) and of
// progress values (CallOptions::on_progress).
using ChunkHandler = std::function<void(Chunk&&)>;
using ProgressHandler = std::function<void(json value)>;

// Options of one outgoing call.
struct CallOptions {
  std::optional<Millis> timeout;  // relative; nullopt → PeerOptions::default_timeout
  bool no_timeout = false;        // true: no deadline at all, even with a default
  // Asks the other side for $/progress on this call (docs/streams.md) and
  // receives each value. With progress_resets_timeout, each one restarts the
  // call's timeout (needs PeerOptions::clock).
  ProgressHandler on_progress;
  bool progress_resets_timeout = false;
  // Receives the response's metrics (docs/protocol.md, "Metrics") just before
  // the completion, when the answer carried them: only after a handshake
  // agreed on "metrics" with a side that measures (PeerOptions::clock_us).
  std::function<void(const ResponseMetrics&)> on_metrics;
  // The host's own number for this call (>= 0; -1: none), for a host that
  // settles its callers itself: Peer::take_result() hands it back for a
  // result instead of running the completion with it.
  std::int32_t tag = -1;
};

// A streamed call (Peer::stream): credit is how many chunks the other side
// may send before the next grant(), so at most that many are ever in flight.
struct StreamOptions {
  // Chunks the other side may send before the first grant().
  std::uint32_t credit = 16;
  ChunkHandler on_chunk;  // required: each chunk, in order
};

// Completion of an outgoing request: the result, or an Error — the remote
// error, or a local one: kTimeout, kClosed, kRequestCancelled, kOverloaded.
using CallCallback = std::function<void(Result<json>)>;

// One element of an outgoing batch; no callback ⇒ it is a notification.
struct BatchEntry {
  // The method and its params (absent, or an array/object).
  std::string method;
  std::optional<json> params;
  CallCallback done;  // empty → notification
  // This call's metrics, as CallOptions::on_metrics for a single call: just
  // before `done`, when its answer carried them. Empty: the batch's
  // CallOptions::on_metrics, if any, is called for this entry instead.
  std::function<void(const ResponseMetrics&)> on_metrics;
};

// -- Events (Diagnostic: weft/diagnostic.h) ---------------------------------
// Bounds on the work one peer accepts (see README "Limits").
struct PeerLimits {
  std::size_t max_in_flight = 1000;    // incoming requests being served; beyond → -32003
  std::size_t max_pending = 65536;     // outgoing calls awaiting answers; beyond → -32003
  std::size_t max_batch = 4096;        // elements of one incoming batch; beyond → each call -32600 (check_batch)
  // Chunks a handler may queue beyond the caller's credit (Reply::write);
  // beyond → kOverloaded. The sender's memory per stream stays bounded.
  std::size_t max_stream_queue = 64;
  // Credit one $/weft/open or $/weft/credit may grant; more is clamped.
  std::uint32_t max_stream_credit = 1024;
  // Size of one chunk's value (weft::chunk_size, docs/streams.md "Limits"):
  // a larger write fails with kInvalidRequest and sends nothing; a larger
  // chunk received fails its call with -32600. 0: no limit.
  std::size_t max_stream_chunk = 1000u * 1000u;
  // Incoming requests accepted per rate_window ms: a token bucket holding at
  // most rate_limit tokens, refilled evenly. Beyond → kRateLimited with data
  // {"limit", "window", "retry_after"} (ms). 0: no rate limit. Needs
  // PeerOptions::clock (without one the limit is not applied).
  std::size_t rate_limit = 0;
  Millis rate_window = 1000;
};

// The optional handshake (docs/protocol.md, "Handshake"): rpc.handshake
// carries the protocol version, capabilities, limits and a session id. Off
// by default: plain JSON-RPC peers never see it.
struct Handshake {
  std::string version = "1.0";            // "major.minor"; the majors must match
  // Offered / agreed: "streams", "progress", "drain", "metrics", "compression".
  std::vector<std::string> capabilities;
  json limits = json::object();           // what this side enforces (informational)
  std::string session;                    // the serving side's session id (the host makes it)
  // Compression (docs/protocol.md, "Compression"; docs/framing.md): the
  // algorithms this side can use, in preference order ("zstd"); on the wire
  // "compression_preference", sent by the caller. The serving side picks the
  // first of the caller's list that it also lists ("none" never counts) and
  // answers it as "compression_used"; empty: no compression. Used only with
  // the "compression" capability agreed. A Connection fills both from
  // ConnectionOptions::compression: hosts over a byte stream leave them empty.
  std::vector<std::string> compression_preference;
  std::string compression_used;
};

// A handshake as JSON ({"version", "capabilities", "limits", "session"}),
// and back; a malformed one is -32602 naming the member.
json handshake_json(const Handshake& h);
Result<Handshake> parse_handshake(const json& j);

// A graceful drain (docs/protocol.md, "Drain"): the serving side announces
// it with $/weft/drain, refuses new requests with kUnavailable, and finishes
// those in flight; callers stop sending and reconnect after reconnect_after.
struct DrainNotice {
  std::string reason;          // e.g. "reload", "shutdown"
  Millis downtime = 0;         // expected, ms (0: unknown)
  Millis reconnect_after = 0;  // ms before callers should try again
};

// Which side of the conversation a Peer takes (JSON-RPC 2.0 §3: "Client",
// "Server"). A Client answers nothing: it ignores incoming requests,
// notifications and messages it cannot read (a malformed answer to one of
// its calls still fails that call); a Server ignores incoming responses;
// both silently (IgnoredMessage diagnostic), as a channel shared by several
// endpoints needs. A Server's own calls, which could never be answered, are
// refused (kInvalidRequest); its notifications go out. A Peer takes
// everything.
enum class Role { Peer, Client, Server };

// How a Peer sends, reports, times out and filters.
struct PeerOptions {
  // Its limits (PeerLimits).
  PeerLimits limits;
  std::optional<Millis> default_timeout;  // for calls without their own; nullopt = none
  // The id of the first call; each call takes the next. Two callers on one
  // channel that every endpoint hears (a window's postMessage) must not use
  // the same ids, or each could take the other's answer: weft-rpc starts
  // each such endpoint at a random one. At least 1.
  std::int64_t first_id = 1;
  std::function<void(Outgoing&&)> send;   // required: a message/batch to transmit
  // Optional: the result of a request that is not part of a batch and
  // carries no metrics — what `send` would get as an Outgoing holding one
  // Response{id, result} — handed over without making that Outgoing. A host
  // whose transport takes one answer more cheaply than a message list sets
  // it (the WebAssembly binding); one whose transport failed reports it as
  // for `send` (Peer::undelivered). Errors, batches and measured answers
  // always go to `send`.
  std::function<void(const Id& id, json&& result)> send_result;
  // Optional, the same for the request of a single call (Peer::call,
  // Peer::stream; not a batch's): what `send` would get as an Outgoing
  // holding one Request{id, method, params}. The host may take `params`.
  // A request its transport could not send is reported as for `send`
  // (Peer::undelivered); notifications and batches always go to `send`.
  std::function<void(const Id& id, const std::string& method, std::optional<json>& params)> send_request;
  std::function<void(const Diagnostic&)> diagnostic;  // optional
  // Which messages it takes (Role).
  Role role = Role::Peer;
  // Values that do not carry "jsonrpc":"2.0" (Invalid::foreign) are ignored
  // instead of answered with -32600. For channels that carry other traffic
  // too (window postMessage); a batch is ignored only when all of it is.
  bool ignore_foreign = false;
  // Answers the peer produced but will never send: a reply given after its
  // request was cancelled or the peer closed, the held answers of a batch cut
  // short by close(). A host that keeps payloads outside the core releases
  // them here; every answer handed to a Reply ends in `send` or `discard`.
  std::function<void(Outgoing&&)> discard;
  // Called before the core looks inside params (a declared ParamSpec, the
  // params of $/cancelRequest and of the stream notifications). A host whose
  // params are placeholders (the WebAssembly binding keeps them as
  // JavaScript values) replaces the placeholder with the value here; the
  // default leaves params as they are. `keep`, when not null, names a member
  // the core only carries (the "value" of $/weft/chunk and $/progress): the
  // host may leave it as a placeholder of its own instead of converting it.
  std::function<void(json& params, const char* keep)> inspect;
  // Called instead of `inspect` before a ParamSpec check, which reads only
  // the JSON type of each member of params (weft/params.h). The host gives
  // params as an array or object of the same members, each a real JSON value
  // or a placeholder of its own whose type `placeholder_type` names; the
  // handler then gets those members as given, so a host's values reach it
  // unconverted. An Error (-32602) refuses the call, for params the host
  // cannot describe. Empty: `inspect`.
  std::function<std::optional<Error>(json& params)> inspect_members;
  // The type a member placeholder of `inspect_members` stands for (Integer:
  // a number without a fractional part; Number: any other number), or
  // nullopt when `member` is a real JSON value. A plain function: the type is
  // read from the placeholder alone. Null: members are real.
  std::optional<ParamType> (*placeholder_type)(const json& member) = nullptr;
  // Measures a chunk's value for PeerLimits::max_stream_chunk, written
  // (Reply::write) or received ($/weft/chunk), as weft::chunk_size(value,
  // stop) does. Empty: weft::chunk_size. A host whose values are
  // placeholders (see `inspect`) measures the value the placeholder stands
  // for, by the same rule; the core still decides what is too large.
  std::function<std::size_t(const json& value, std::size_t stop)> chunk_size;
  // The current time, for the rare step that needs it outside a call that
  // carries `now`: a chunk or a progress value restarting a call's timeout.
  // Hosts supply it (Connection does); without it, timeouts are not restarted.
  std::function<Millis()> clock;
  // A monotonic clock in microseconds, for per-response metrics: with it, a
  // side that agreed on "metrics" in a handshake measures each request it
  // serves from dispatch to answer (docs/protocol.md, "Metrics"); without
  // it, "metrics" is never agreed by this side's answer nor measured.
  std::function<std::int64_t()> clock_us;
  // The other side announced a drain ($/weft/drain): calls made from now on
  // fail at once with kUnavailable (data: retry_after, reason) without being
  // sent; calls already pending still get their answers.
  std::function<void(const DrainNotice&)> on_drain;
  // Serve rpc.handshake with this side's version, capabilities, limits
  // (empty: PeerLimits as JSON) and session id. Once a handshake has agreed
  // on capabilities (either side), streams and progress work only if
  // "streams" / "progress" were agreed; "metrics" and compression are used
  // only when agreed.
  std::optional<Handshake> handshake;
};

// The endpoint (see the top of this file).
class Peer {
 public:
  // `options.send` is required.
  explicit Peer(PeerOptions options);
  ~Peer();  // pending calls are failed with kClosed; outstanding Replies go inert
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  // Registration. Re-registering a name replaces it. Names starting with "rpc."
  // are reserved by §4 for rpc-internal methods; hosts use them for rpc.ping etc.
  void method(std::string name, MethodHandler h, std::optional<ParamSpec> spec = std::nullopt,
              std::string description = {});
  void method(std::string name, SyncHandler h, std::optional<ParamSpec> spec = std::nullopt,
              std::string description = {});
  // A handler that answers now or later (DeferrableHandler).
  void method(std::string name, DeferrableHandler h, std::optional<ParamSpec> spec = std::nullopt,
              std::string description = {});
  void notification(std::string name, NotificationHandler h,
                    std::optional<ParamSpec> spec = std::nullopt);
  bool remove(const std::string& name);
  std::vector<MethodInfo> methods() const;

  // Incoming. A decoded document: requests are dispatched, responses settle
  // pending calls, $/cancelRequest cancels a request being served. Every
  // violation is answered as §5 requires (or reported when it is a response).
  void receive(const Document& doc);
  // The same, consuming `doc` (payloads are moved into handlers, not copied).
  void receive(Document&& doc);
  // Messages already classified (classify(), classify(Envelope&&)); applies
  // the role and foreign-message policy and the batch rules (§6), then
  // processes them as receive() does.
  void receive(Incoming&& in);
  // One message that is not in a batch, already classified (a host that
  // judges its messages one by one: the WebAssembly binding); applies the
  // role and foreign-message policy, then processes it as receive() does.
  void receive(Item&& item);
  // A response whose id is the integer `id` and whose outcome is a result
  // (§5), the value kept by the host (which need not build it): when it
  // answers a pending call made with a tag (CallOptions::tag) and no
  // stream, the call is settled as receive() would settle it and its tag is
  // returned; the completion is not run, the host hands the value to its
  // caller. Otherwise (no such call, a closed Peer, a Server, which ignores
  // responses) nothing is done and -1 is returned: the host then passes the
  // message to receive(), which decides what follows, once.
  std::int32_t take_result(std::int64_t id);
  // The answer of the request whose handler held it (Deferral::hold), as a
  // DeferrableHandler would have returned it: sent, or for a notification
  // dropped (a failure reported), exactly so. False when none is held
  // (`answer` is then left as it was).
  bool answer_held(Result<json>&& answer);
  // The held request as one served asynchronously instead: its Reply, as
  // Deferral::reply() would have given it (done when none is held, or on a
  // closed Peer: the held answer is then dropped, as close() drops answers).
  Reply defer_held();
  // Lets go of the held request when its answer, were it a result, would
  // go to PeerOptions::send_result as it is: a request received alone,
  // unmeasured, without a stream, on an open Peer. Nothing is held then, and
  // the host sends the handler's result itself exactly as send_result would
  // have been called (saving a crossing into the core per served request,
  // the WebAssembly binding); or, for any other answer (an error, one given
  // later), gives the request back with rehold() first. False, and it stays
  // held, otherwise. A request let go is not in flight for $/cancelRequest,
  // as a held one is not. Once the Peer has closed, the host sends nothing
  // for a request it let go (send_result is never called after close()).
  bool release_held();
  // Holds request `id` again as release_held() let it go, to be answered
  // through answer_held() or defer_held(). False on a closed Peer, or while
  // another answer is held.
  bool rehold(const Id& id);
  // Called by a handler the core is running, whose host will run the
  // handler's work once the receive has returned instead (Deferral::hold
  // asks the same for a method): true when the order of handlers survives
  // that. It does for a message received alone; and for a member of the
  // batch the outermost receive is reading, which then reads no further
  // member (paused() is true once the receive returns) until resume(), so
  // each handler still runs before the next member is read (§6; a
  // $/cancelRequest later in the batch finds what it would natively).
  // False for a member of a batch read inside a handler the core is
  // running, or while another batch is paused, or when one member already
  // asked: that handler runs now. (A batch received inside a completion, or
  // inside a handler the host runs after a receive, may pause: that
  // receive's host resumes it.) The batch pauses after its last member too,
  // its answers leaving on resume(). A host that never calls this or hold()
  // never sees a pause.
  bool pause();
  // Whether a batch's reading is paused (pause()).
  bool paused() const;
  // Reads on in the paused batch, after the host has run the handler it
  // paused for and given its held answer, if any (one still held is
  // answered -32603 here, as a handler that gave none). Call it before
  // receiving anything else, or messages received meanwhile are served
  // before the batch's rest. Returns paused() after: true when a later
  // member paused it again. False, doing nothing, when none is paused
  // (close() drops what a paused batch had left).
  bool resume();
  // The transport or codec failed to produce a document (parse error, oversize
  // frame): answers an error response with id null, as §5 requires.
  void receive_error(const Error& e);

  // Outgoing. Ids are integers from 1 upward. Fails (without sending) with
  // kClosed after close(), kOverloaded at max_pending, -32600 for an empty
  // method name; params, if given, must be an array or object (-32602).
  Result<Id> call(std::string method, std::optional<json> params, CallCallback done,
                  CallOptions opts, Millis now);
  Result<void> notify(std::string method, std::optional<json> params);
  // Sends all entries as one batch (§6); each callback settles separately,
  // after its own metrics (BatchEntry::on_metrics, else opts.on_metrics).
  Result<std::vector<Id>> batch(std::vector<BatchEntry> entries, CallOptions opts, Millis now);

  // A streamed call (docs/streams.md): sends {"method":"$/weft/open",
  // "params":{"id":ID,"credit":N}} and then the request. Chunks arrive at
  // so.on_chunk, at most so.credit before grant() gives more; `done` gets the
  // final answer. Each chunk, and each grant(), restarts the call's
  // timeout (needs PeerOptions::clock). Errors as call();
  // kInvalidParams without on_chunk.
  Result<Id> stream(std::string method, std::optional<json> params, StreamOptions so,
                    CallCallback done, CallOptions opts, Millis now);
  // Lets the other side send `n` more chunks of stream `id` ($/weft/credit).
  // False if `id` is not a streamed call still pending.
  bool grant(const Id& id, std::uint32_t n);

  // Gives up on an outgoing call: its callback gets -32800 now, and the other
  // side gets {"method":"$/cancelRequest","params":{"id":…}}. False if unknown.
  bool cancel(const Id& id);

  // The transport could not deliver `o` (for example a value that cannot be
  // cloned). `failed[i]` marks the messages that could not be encoded; none
  // marked (or `failed` empty) means the transport failed as a whole and
  // every message counts. A marked request's call fails with kClosed naming
  // `why`; a marked result is answered again as -32603 so that the caller is
  // not left waiting (§5.1 "Internal JSON-RPC error"); a marked error goes
  // again without its data (the part that could not be sent), an error
  // without data goes once more with the short message "the answer could not
  // be sent" (its own may be what is too large) and is then given up, a
  // notification is only reported. The
  // messages not marked did not leave either (their batch did not): they go
  // again as they were, in the same batch (a request only while its call is
  // pending), so that every request still gets its own answer (§6). Every
  // call is reported (SendFailed); after close() nothing more happens.
  void undelivered(const Outgoing& o, const Error& why, const std::vector<bool>& failed = {});

  // Earliest timeout among pending calls; nullopt when none.
  std::optional<Millis> next_deadline() const;
  // Fails every call whose deadline <= now with kTimeout.
  void advance(Millis now);

  // Sends rpc.handshake with `mine`; `done` gets the other side's answer with
  // the capabilities both support (agreed() from then on), or the error:
  // kVersionMismatch when the majors differ, -32601 when the other side does
  // not serve handshakes. Errors as call().
  Result<Id> handshake(Handshake mine, std::function<void(Result<Handshake>)> done, CallOptions opts,
                       Millis now);
  // What a completed handshake agreed on (either side), or nullopt.
  const std::optional<Handshake>& agreed() const;

  // Starts a graceful drain: sends $/weft/drain with `notice`, then answers
  // new requests kUnavailable (data: retry_after = notice.reconnect_after,
  // reason); requests in flight finish. The host closes the connection once
  // in_flight() is 0 (or its grace period ends). Idempotent.
  void drain(DrainNotice notice);
  bool draining() const;

  // Fails every pending call with `reason` (default kClosed "endpoint closed"),
  // cancels requests being served, and refuses further calls. Idempotent.
  void close(std::optional<Error> reason = std::nullopt);
  // True once close() has run.
  bool closed() const;

  std::size_t pending() const;    // outgoing calls awaiting a response
  std::size_t in_flight() const;  // incoming requests not yet answered
  const PeerLimits& limits() const;  // what this Peer enforces (PeerOptions::limits)

 private:
  // call() and stream(): `so` null for a plain call. By reference: their
  // arguments move once, into the request and the pending call.
  Result<Id> start_call(std::string&& method, std::optional<json>&& params, CallCallback&& done,
                        CallOptions&& opts, Millis now, StreamOptions* so);
  std::shared_ptr<detail::PeerState> s_;
};

}  // namespace weft
