// wasm/host.h — one JS endpoint's state inside the module, and the calls
// into JavaScript (the EM_JS hooks, defined in host.cpp).
//
// JS refers to a Host by a small integer handle. Every hook below may
// re-enter the module (a handler may call, a transport may loop back), so
// code that calls one looks its Host up again afterwards: the endpoint may
// have been destroyed meanwhile.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/weft.h"

namespace weft::wasm {

struct Host {
  int handle = 0;
  std::unique_ptr<Peer> peer;
  std::vector<Reply> replies;  // async answers, by token
  std::vector<int> free_replies;
  std::string tmp;  // JSON text handed to JS (reused)
  // The requests whose JS handlers the core is running (a batch's, or one
  // received while another's answer is held; innermost last): each one's
  // Deferral and, once weft_defer took its Reply, its token (else -1).
  std::vector<std::pair<Deferral*, int>> later;
  // Undecodable frames since the last message (weft_undecodable): answered
  // up to kMaxErrorReplies in a row, as ConnectionOptions::max_error_replies.
  int undecodable_run = 0;
  Role role = Role::Peer;  // its Peer's (PeerOptions::role)
  // weft_call is making a call (the innermost, if one is made inside
  // another), and PeerOptions::send_request ran for it: its caller posts
  // the request (abi.h STATUS_POST_REQUEST).
  bool calling = false;
  bool post_request = false;
  // The export receiving now may leave the handler the core dispatches (a
  // message's, or a batch member's, the core pausing the batch for it) in
  // `queued` for JS to run once the export has returned (queued.cpp), so
  // that what the handler does (an Error's stack above all) has none of
  // the module's frames under it. fn < 0: none queued.
  bool off_stack = false;
  struct Queued {
    int fn = -1;
    int token = 0;
    double slot = 0;
    std::string text;  // the params' JSON text when slot is PAY_TEXT
  } queued;

  int store(Reply&& r);
  bool has(int token) const;
  Reply take(int token);
  // A value for JS: its payload handle, or abi::kPAY_TEXT with the JSON text
  // in `tmp`.
  double payload(const json& v);
  // The same for a value the core is done with: a marker goes back to its
  // pool at once (read nothing from `v` after).
  double take_payload(json& v);

 private:
  // abi::kPAY_TEXT, with `v`'s JSON text in `tmp`.
  double as_text(const json& v);
};

// The Host behind handle `h`, or nullptr once destroyed.
Host* host(int h);
// A new Host with its Peer built from `o` (send/discard/inspect/diagnostic
// are wired to JS here); returns its handle.
int create_host(PeerOptions o);
void destroy_host(int h);

// The shared input buffer (JS → core strings) and descriptor array (room
// for `n` doubles; valid until the next call asking for more).
std::vector<char>& input();
double* descriptors(std::size_t n);

// Completion callback of outgoing call `token` (settles the JS promise).
CallCallback settle_to(int h, int token);
// Hands the metrics of call `token`'s answer to JS (js_metrics), before
// its completion; and whether a call should ask for them: JS asked
// (abi METRICS_ASK), or the handshake agreed on "metrics".
std::function<void(const ResponseMetrics&)> metrics_to(int h, int token);
bool wants_metrics(const Host& x, int ask);

// -- hooks into JS ------------------------------------------------------------
// Outgoing messages as records (records.cpp), posted by JS. One the
// transport cannot send comes back through weft_undelivered.
void js_send_records(int h, Outgoing& o);
void js_discard_records(int h, Outgoing& o);
double js_dispatch_call(int h, int fn, int token, double slot, const std::string& text);

// -- handlers run off the module's stack (queued.cpp) -------------------------
// An export about to receive (a message, a batch, or a paused batch's
// rest): true when a dispatch may be queued (none queued yet by an outer
// export still running).
bool begin_receive(Host& x);
// After that receive (`mine`: what begin_receive returned; `h` looked up
// again): publishes the queued handler in the status array
// (STATUS_QUEUED_*), or none. `release`: a request's answer held for it is
// let go when it may be (Peer::release_held; weft_request's caller sends
// the result itself); returns whether it was.
bool end_receive(int h, bool mine, bool release = false);
// Inside a handler the core dispatches (`later`: a method's, null for a
// notification sink's): if the export leaves this dispatch to JS and the
// core holds the answer (Deferral::hold) or, for a notification, lets it
// run later (Peer::pause; both pause a batch after it), queues handler `fn`
// with params `slot` (and `x.tmp`) and returns true; false: run it now.
bool queue_dispatch(Host& x, int fn, double slot, Deferral* later);
// The core answers request `token` (-32800) if it is cancelled; JS is told
// first (js_cancelled_call) and the token freed.
void watch_cancel(int h, int token);
void js_cancelled_call(int h, int token);
// A diagnostic of the binding's own (the Peer's go through PeerOptions).
void js_report(int h, Diagnostic::Kind kind, const std::string& message);
// Replaces `v`, if it is a payload marker, with the value JS holds for it
// (an empty container of the same type if that value is not JSON). Member
// `keep` (if not null) of an object stays a JS value, as a marker.
void materialize(int h, json& v, const char* keep = nullptr);

}  // namespace weft::wasm
