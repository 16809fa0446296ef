// link.h — one connection of a Client, whatever the transport: it gives the
// client a weft::Peer that is usable between `opened` and `closed`.
//
// Byte streams (unix, tcp, exec) are a host Session (framing + codec, the
// server's own machinery); ws and http carry one encoded message per frame or
// per POST. The Client (client.cpp) keeps calls, retries and reconnection;
// a Link only moves messages and reports, once, why it ended.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "address.h"
#include "weft/host/client.h"
#include "weft/peer.h"

namespace weft::host::detail {

struct LinkHooks {
  // Installs the client's registered methods on the new Peer.
  std::function<void(Peer&)> setup;
  // The connection is up: calls may be sent.
  std::function<void()> opened;
  // Once. `why` is a kClosed error naming the address and the reason;
  // `was_open` whether `opened` ran; `retryable` whether connecting again may
  // help (refused, missing socket, reset — not a bad address or a failed spawn).
  std::function<void(Error why, bool was_open, bool retryable)> closed;
  // The server announced a drain ($/weft/drain, PeerOptions::on_drain).
  std::function<void(const DrainNotice&)> drain;
  // A notification the server refused (an HTTP error status for its POST),
  // or that the link lost with its connection before the server took it:
  // there is no caller to tell, so it is counted (unsent_notifications) and
  // logged, as one the transport could not send.
  std::function<void(const std::string& why)> refused;  // `why`: the whole log line
  // Everything the Peer or the framing reports (BadFrame, ErrorWithoutId, …).
  std::function<void(const Diagnostic&)> diagnostic;
  std::function<void(std::string_view)> log;
};

class Link {
 public:
  virtual ~Link() = default;
  virtual Peer& peer() = 0;
  // True from the moment the link starts closing: a Peer completion that
  // fails then was failed by the close, not answered by the server.
  virtual bool closed() const = 0;
  // True while the link fails calls it could not deliver, or whose answer
  // it lost with the connection still open (an HTTP error status, an event
  // stream cut before the answer): their -32002 is no answer of the server's.
  virtual bool undelivering() const { return false; }
  // After using peer() from outside a link callback: send what was queued.
  virtual void flush() = 0;
  // Send what is queued, then close cleanly.
  virtual void shutdown() = 0;
  // Close now; `why` is what `closed` reports (with transport context added).
  virtual void close(const Error& why) = 0;
  // Extra words for error messages (exec: exit status and stderr tail).
  virtual std::string context() const { return {}; }
  // Where its output stands, in a unit of its own (bytes, frames): queued()
  // is the end of all it was given so far, written() how much of that the
  // transport accepted. A message ending past written() when the link closes
  // never reached the socket (its write failed, or the close came first).
  // A link without such an order (http: one POST each) reports 0 for both
  // and tells of the notifications it loses through LinkHooks::refused.
  virtual std::uint64_t queued() const { return 0; }
  virtual std::uint64_t written() const { return 0; }
};

// Starts connecting; hooks run on `io`. Never null.
std::shared_ptr<Link> open_stream_link(boost::asio::io_context& io, const Address& a,
                                       const ClientConfig& cfg, LinkHooks hooks);
std::shared_ptr<Link> open_ws_link(boost::asio::io_context& io, const Address& a,
                                   const ClientConfig& cfg, LinkHooks hooks);
std::shared_ptr<Link> open_http_link(boost::asio::io_context& io, const Address& a,
                                     const ClientConfig& cfg, LinkHooks hooks);

// ClientConfig::handshake, offered as a link opens: `send` sends it
// (Peer::handshake, or Connection::handshake, which adds compression) with
// the completion it is given. `answered` runs posted on `io`, outside the
// read pass that delivered the answer: with nothing when the link may count
// as opened (agreed, or -32601: a plain JSON-RPC server agrees on nothing),
// else with the kClosed error "rpc.handshake failed: …" to close it with.
// Returns that error at once when the offer cannot be sent.
using HandshakeDone = std::function<void(Result<Handshake>)>;
std::optional<Error> send_handshake(boost::asio::io_context& io,
                                    const std::function<Result<Id>(HandshakeDone)>& send,
                                    std::function<void(std::optional<Error>)> answered);

// send_handshake on a link whose transport is up and which sends what is
// queued on flush() (ws, http): once the offer is answered the link counts as
// opened (`opened` runs, then flush()); a failed one closes the link.
void offer_handshake_on(boost::asio::io_context& io, const std::shared_ptr<Link>& link,
                        const std::function<Result<Id>(HandshakeDone)>& send, std::function<void()> opened);

// Connect errors worth another attempt after a backoff.
bool retryable_connect_error(const boost::system::error_code& ec);

}  // namespace weft::host::detail
