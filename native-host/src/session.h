// session.h — one weft::Connection driven by Asio over file descriptors.
//
// Reads in large chunks and feeds the Connection; everything the Connection
// writes during one pass (a read, a timer, an async reply) is gathered into
// one buffer and written with one write. One steady_timer per session is
// armed at the Connection's next deadline (lazily: only moved earlier).
// Backpressure: reading pauses while too much output is queued.
//
// Limits a hostile or broken client cannot get around (docs/reliability.md):
//  * output: reading pauses while `max_queued_output` bytes of answers wait;
//    a write that makes no progress for `write_timeout` closes the connection
//    (a client that never reads its answers);
//  * a partial frame not completed within the frame read timeout
//    (FramingLimits::read_timeout, docs/framing.md F3) closes the connection
//    when `close_on_frame_timeout` (slowloris: one byte now and then);
//  * `idle_timeout`: nothing received, nothing in flight, nothing to write;
//  * log lines: at most `max_log_lines` diagnostics per connection, the rest
//    counted and summarised when it closes (a flood of bad frames or of
//    answers dropped after a cancel must not flood, or block on, the log).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "weft/connection.h"

namespace weft::host::detail {

// A time point on the clock the hosts read (Millis since its epoch); one
// past what the timer can hold is its latest time point, not an overflow.
boost::asio::steady_timer::time_point to_time_point(Millis ms);


struct SessionConfig {
  ConnectionOptions conn;      // write is set by the session
  std::string name;            // for logs, e.g. "unix#3"
  Millis eof_grace = 5000;     // after end of input: in-flight requests may finish
  std::size_t read_chunk = 64 * 1024;
  std::size_t max_queued_output = 8u << 20;
  Millis write_timeout = 30000;  // 0: none
  Millis idle_timeout = 0;       // 0: none
  bool close_on_frame_timeout = true;
  std::size_t max_log_lines = 32;
  std::function<void(std::string_view)> log;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  using Fd = boost::asio::posix::stream_descriptor;
  // `out` empty → `in` is used for both directions (a socket).
  Session(boost::asio::io_context& io, Fd in, std::optional<Fd> out, SessionConfig cfg);
  ~Session();

  Peer& peer() { return conn_->peer(); }
  Connection& connection() { return *conn_; }
  const std::string& name() const { return cfg_.name; }

  void start();
  // Close once no request is in flight and output is written, or at
  // `deadline` at the latest. Without a notice reading stops (end of input,
  // our own side finishing). With one (docs/protocol.md, "Drain") the Peer
  // sends $/weft/drain and reading goes on, so that a request arriving now
  // is answered -32005 by the core instead of going unanswered.
  void drain(Millis deadline, std::optional<DrainNotice> notice = std::nullopt);
  void close(std::optional<Error> reason = std::nullopt);
  bool closed() const { return closed_; }
  bool draining() const { return draining_; }
  // After using peer() from outside a session callback (call/notify): write
  // what was queued and re-arm the timer.
  void poke();
  // Bytes the Connection wrote so far, and those of them the OS accepted.
  std::uint64_t queued() const { return queued_; }
  std::uint64_t written() const { return written_; }

  // Called once when the session closes; `why` is empty after a clean close.
  std::function<void(const std::string& why)> on_closed;

 private:
  Fd& out() { return out_ ? *out_ : in_; }
  void do_read();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void write_some();
  void on_write(const boost::system::error_code& ec, std::size_t n);
  template <class F> void pass(F&& f);
  void flush();
  void rearm();
  void on_timer();
  void check_drain();
  bool idle() const;
  bool peer_gone();
  void fail(const std::string& why);
  void log(const std::string& line);
  void on_diagnostic(const Diagnostic& d);

  boost::asio::io_context& io_;
  Fd in_;
  std::optional<Fd> out_;
  SessionConfig cfg_;
  std::unique_ptr<Connection> conn_;
  boost::asio::steady_timer timer_;
  std::optional<Millis> armed_;
  std::uint64_t timer_gen_ = 0;
  std::vector<char> rbuf_;
  std::string pending_;  // written by the Connection, not yet handed to the OS
  std::string wbuf_;     // being written
  std::size_t woff_ = 0;  // bytes of wbuf_ already written
  std::uint64_t queued_ = 0, written_ = 0;  // queued(), written()
  Millis last_read_ = 0;      // idle timeout: last bytes received
  Millis last_progress_ = 0;  // write timeout: last byte the OS accepted
  bool frame_timed_out_ = false;
  std::size_t log_lines_ = 0, log_dropped_ = 0, late_replies_ = 0;
  bool reading_ = false;
  bool writing_ = false;
  bool in_pass_ = false;
  bool flush_posted_ = false;
  bool eof_ = false;
  bool draining_ = false;
  bool announced_ = false;  // drained with a notice: keep reading (see drain())
  bool closed_ = false;
  std::optional<Millis> drain_deadline_;
  std::string close_why_;
  // A write failed while a read was in flight (on_write): the session fails
  // with this once that read has completed, or kWriteFailedGrace after
  // write_failed_at_ (a peer that stopped reading may never send).
  std::string write_failed_;
  Millis write_failed_at_ = 0;
};

}  // namespace weft::host::detail
