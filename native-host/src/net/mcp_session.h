// mcp_session.h — one MCP Streamable HTTP session: a Peer, the requests
// waiting for their answers, and the SSE streams with their event logs
// (docs/transports.md, "Streamable HTTP"). No HTTP here: the connection
// (HttpConn, net/http_server.h) is an Exchange.
//
// Streams and event ids. Stream 0 is the GET stream; every POST answered by
// SSE opens stream 1, 2, … Event ids are "<stream>-<seq>" (seq from 1), so a
// Last-Event-ID names its stream (MCP transports, "Resumability and
// Redelivery": ids unique across the session's streams, replay only on the
// stream that was disconnected). Every stream keeps its last
// sse_replay_events events; the 64 most recently ended POST streams are kept;
// and all of it together holds at most sse_replay_bytes of data (trim()), so
// a session's memory does not grow with what it has streamed.
//
// Routing. The answer to a POSTed request goes to that POST (JSON body when
// it is ready before the POST is settled, else on its SSE stream, which then
// ends), preceded there by what belongs to that request: its stream's
// `$/weft/chunk`s and its `$/progress` (a request with those is answered by
// SSE). Everything else the server sends (requests and notifications to the
// client) goes on the GET stream, kept until the client opens it: weft cannot
// tell which request another message relates to, and the spec forbids
// sending a message on more than one stream.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "net/hub.h"
#include "net/message_peer.h"

namespace weft::host::detail {

// An HTTP request parked on a session (implemented by the connection).
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void sse_send(std::string text) = 0;  // SSE event text for the open stream
  virtual void sse_end() = 0;                    // the stream is over
};

class McpSession : public std::enable_shared_from_this<McpSession> {
 public:
  // `id` empty: a stateless session (one POST, never looked up again).
  McpSession(Hub& hub, std::string id, std::uint64_t serial);
  ~McpSession();

  const std::string& id() const { return id_; }
  MessagePeer& peer() { return *peer_; }

  bool waiting(const Id& id) const { return waiters_.count(id) != 0; }
  // A POSTed request: park it, hand it to the peer (deliver), then settle.
  void begin_request(const Id& id);
  void deliver(Document&& doc);
  // The request answered already → its JSON body. Otherwise its answer will
  // arrive on a new SSE stream bound to `x`; the priming event (id, empty
  // data; MCP: "SHOULD immediately send") is returned in `sse_start`.
  std::optional<std::string> settle(const Id& id, const std::shared_ptr<Exchange>& x, std::string& sse_start);

  struct Opened {
    int status = 200;     // 200, or 400 (unknown Last-Event-ID, or events after it dropped), 409 (stream already open)
    std::string text;     // SSE text to send first
    bool ended = false;   // a replayed POST stream that is over: end after `text`
    std::string error;    // why, when status != 200
  };
  // GET: (re)attach `x` to the GET stream, or with Last-Event-ID to the
  // stream that id names, replaying what followed it.
  Opened open_stream(const std::shared_ptr<Exchange>& x, const std::optional<std::string>& last_event_id);
  // The connection of a stream went away (the stream itself goes on).
  void detach(const Exchange* x);
  // Server stopping: the GET stream's connection is ended (its events stay);
  // POST streams end with their answers.
  void end_get_connection();

  // Ends the session: peer closed (pending work cancelled), streams ended.
  void end(const std::string& why);
  bool ended() const { return ended_; }
  // A request arrived: the idle clock restarts.
  void touch();
  // A request waits for its answer or is being served, or a stream is open.
  bool busy() const;
  // When the last request arrived (or a stream opened).
  Millis last_active() const { return last_active_; }
  std::function<void(McpSession&)> on_end;

 private:
  struct Event {
    std::uint64_t seq;
    std::string data;
  };
  struct Stream {
    std::deque<Event> events;
    std::uint64_t next_seq = 1;
    std::uint64_t sent = 0;  // highest seq handed to a connection
    std::weak_ptr<Exchange> sink;
    bool ended = false;
  };
  struct Waiter {
    std::vector<std::string> early;     // its chunks / progress before settle()
    std::optional<std::string> answer;  // arrived before settle()
    std::uint64_t stream = 0;           // 0 until settled as SSE
  };

  void route(const Outgoing& o, std::string bytes);
  void emit(std::uint64_t stream, std::string data, bool end_stream);
  void drop_oldest(Stream& st);
  void erase_stream(std::uint64_t stream);
  void trim(std::uint64_t current);
  std::string event_text(std::uint64_t stream, std::uint64_t seq, const std::string& data) const;
  void arm_idle();

  Hub& hub_;
  std::string id_;
  std::shared_ptr<MessagePeer> peer_;
  std::unordered_map<Id, Waiter, IdHash> waiters_;
  std::map<std::uint64_t, Stream> streams_;
  std::deque<std::uint64_t> ended_streams_;
  std::size_t kept_bytes_ = 0;  // the data of every kept event
  Millis last_active_ = 0;
  std::uint64_t next_stream_ = 1;
  boost::asio::steady_timer idle_;
  bool ended_ = false;
};

}  // namespace weft::host::detail
