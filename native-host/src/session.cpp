// session.cpp — see session.h.
#include "session.h"

#include <poll.h>

#include <cerrno>

#include <boost/asio/post.hpp>

#include "weft/host/server.h"

namespace weft::host::detail {

// Read buffers start at SessionConfig::read_chunk and grow up to this.
constexpr std::size_t kMaxReadChunk = 1u << 20;
// After a failed write, how long the read in flight may take to deliver what
// the other side sent before it stopped reading (on_write): what it sent is
// in the buffer already, so the read completes at once; one that sends
// nothing more must not keep the session open.
constexpr Millis kWriteFailedGrace = 200;

boost::asio::steady_timer::time_point to_time_point(Millis ms) {
  using T = boost::asio::steady_timer::time_point;
  constexpr Millis kMax = std::chrono::duration_cast<std::chrono::milliseconds>(T::duration::max()).count();
  if (ms >= kMax) return T::max();
  return T(std::chrono::milliseconds(ms));
}

Session::Session(boost::asio::io_context& io, Fd in, std::optional<Fd> out, SessionConfig cfg)
    : io_(io), in_(std::move(in)), out_(std::move(out)), cfg_(std::move(cfg)), timer_(io),
      rbuf_(cfg_.read_chunk) {
  ConnectionOptions opts = cfg_.conn;
  opts.write = [this](std::string_view bytes) {
    if (closed_) return;
    pending_.append(bytes.data(), bytes.size());
    queued_ += bytes.size();
    // Outside a pass (an async reply from a timer, say): flush on the next
    // turn of the loop, so everything written in this turn goes out at once.
    if (!in_pass_ && !flush_posted_ && !writing_) {
      flush_posted_ = true;
      boost::asio::post(io_, [self = shared_from_this()] {
        self->flush_posted_ = false;
        self->flush();
        self->rearm();
        self->check_drain();
      });
    }
  };
  if (!opts.diagnostic) {
    opts.diagnostic = [this](const Diagnostic& d) { on_diagnostic(d); };
  }
  conn_ = std::make_unique<Connection>(std::move(opts));
  last_read_ = last_progress_ = now_ms();
}

Session::~Session() = default;

void Session::log(const std::string& line) {
  if (cfg_.log) cfg_.log(cfg_.name + ": " + line);
}

void Session::on_diagnostic(const Diagnostic& d) {
  // docs/framing.md F3: the decoder reports an expired partial frame as
  // "read timeout: ..." and keeps the connection; the server closes it
  // instead, or a client trickling bytes would hold it forever.
  if (cfg_.close_on_frame_timeout && d.kind == Diagnostic::Kind::BadFrame &&
      d.message.rfind("read timeout", 0) == 0)
    frame_timed_out_ = true;
  // A cancelled request whose handler answers anyway (every `sleep` cut short
  // by a close): expected, and one line each would flood the log.
  if (d.kind == Diagnostic::Kind::LateReply) {
    ++late_replies_;
    return;
  }
  if (log_lines_ >= cfg_.max_log_lines) {
    ++log_dropped_;
    return;
  }
  ++log_lines_;
  log(d.message);
}

void Session::start() {
  do_read();
  rearm();  // the idle timeout runs from the start
}

void Session::do_read() {
  if (reading_ || closed_ || eof_ || (draining_ && !announced_)) return;
  if (pending_.size() + wbuf_.size() > cfg_.max_queued_output) return;  // resumed by on_write
  reading_ = true;
  in_.async_read_some(boost::asio::buffer(rbuf_),
                      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                        self->on_read(ec, n);
                      });
}

void Session::on_read(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
  if (closed_) return;
  if (n > 0) {
    last_read_ = now_ms();
    pass([&] { conn_->feed(std::string_view(rbuf_.data(), n), last_read_); });
  }
  if (closed_) return;
  if (!write_failed_.empty()) {
    fail(write_failed_);
    return;
  }
  if (frame_timed_out_) {  // expired by feed(): the bytes came after the deadline
    fail("partial frame not completed within the frame read timeout; closing");
    return;
  }
  if (ec) {
    if (ec == boost::asio::error::eof) {
      eof_ = true;
      pass([&] { conn_->finish(now_ms()); });
      if (peer_gone()) {
        // Not a half-close: nobody can read our answers any more, so cancel
        // the requests still running instead of letting them finish unseen.
        close(Error(code::kClosed, "peer disconnected"));
        return;
      }
      drain(now_ms() + cfg_.eof_grace);
    } else if (ec != boost::asio::error::operation_aborted) {
      fail("read: " + ec.message());
    }
    return;
  }
  // A read that filled the buffer left more waiting (a frame larger than the
  // buffer, or a burst): a larger buffer takes it in one read next time, and a
  // whole large frame then reaches the decoder without being copied there.
  if (n == rbuf_.size() && rbuf_.size() < kMaxReadChunk) rbuf_.resize(rbuf_.size() * 2);
  do_read();
}

template <class F>
void Session::pass(F&& f) {
  const bool outer = !in_pass_;
  in_pass_ = true;
  f();
  if (!outer) return;
  in_pass_ = false;
  flush();
  rearm();
  check_drain();
}

void Session::poke() {
  if (in_pass_ || closed_) return;
  flush();
  rearm();
  check_drain();
}

void Session::flush() {
  if (closed_ || writing_ || pending_.empty() || !write_failed_.empty()) return;
  writing_ = true;
  wbuf_.swap(pending_);  // pending_ takes wbuf_'s (cleared) capacity
  woff_ = 0;
  last_progress_ = now_ms();
  write_some();
}

// One write_some at a time rather than async_write: every byte the OS accepts
// is progress, and the write timeout measures the time without any. Each
// offers all that is left (not Asio's 64 KiB per call), so a large answer
// still goes out in as few system calls as the socket allows.
void Session::write_some() {
  out().async_write_some(boost::asio::buffer(wbuf_.data() + woff_, wbuf_.size() - woff_),
                         [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                           self->on_write(ec, n);
                         });
}

void Session::on_write(const boost::system::error_code& ec, std::size_t n) {
  if (closed_) {
    writing_ = false;
    return;
  }
  if (ec) {
    writing_ = false;
    // The other side may have answered before it closed (a server refusing
    // the connection over its limit writes -32003, then closes): the read in
    // flight delivers that first, then the session fails (on_read).
    if (reading_) {
      write_failed_ = "write: " + ec.message();
      write_failed_at_ = now_ms();
      rearm();
      return;
    }
    fail("write: " + ec.message());
    return;
  }
  woff_ += n;
  written_ += n;
  if (n > 0) last_progress_ = now_ms();
  if (woff_ < wbuf_.size()) {
    write_some();
    return;
  }
  writing_ = false;
  wbuf_.clear();
  flush();
  check_drain();
  do_read();  // resumes reading if output backpressure paused it
  rearm();
}

void Session::rearm() {
  if (closed_) return;
  std::optional<Millis> d = conn_->next_deadline();
  auto earliest = [&d](Millis t) {
    if (!d || t < *d) d = t;
  };
  if (drain_deadline_) earliest(*drain_deadline_);
  if (!write_failed_.empty()) earliest(write_failed_at_ + kWriteFailedGrace);
  if (writing_ && cfg_.write_timeout) earliest(last_progress_ + cfg_.write_timeout);
  if (cfg_.idle_timeout && idle() && !eof_) earliest(last_read_ + cfg_.idle_timeout);
  if (!d) return;
  // Lazy: a timer armed earlier than needed just fires, advances, re-arms.
  if (armed_ && *armed_ <= *d) return;
  armed_ = d;
  timer_.expires_at(to_time_point(*d));
  timer_.async_wait([self = shared_from_this(), gen = ++timer_gen_](const boost::system::error_code& ec) {
    if (ec || gen != self->timer_gen_ || self->closed_) return;
    self->on_timer();
  });
}

void Session::on_timer() {
  armed_.reset();
  const Millis now = now_ms();
  if (drain_deadline_ && now >= *drain_deadline_) {
    if (!idle()) log("grace period over with requests in flight; closing");
    close(Error(code::kClosed, "server shutting down"));
    return;
  }
  if (!write_failed_.empty() && now - write_failed_at_ >= kWriteFailedGrace) {
    fail(write_failed_);
    return;
  }
  if (writing_ && cfg_.write_timeout && now - last_progress_ >= cfg_.write_timeout) {
    fail("no output accepted for " + std::to_string(cfg_.write_timeout) + " ms with " +
         std::to_string(wbuf_.size() - woff_ + pending_.size()) +
         " bytes queued (client not reading); closing");
    return;
  }
  if (cfg_.idle_timeout && idle() && !eof_ && now - last_read_ >= cfg_.idle_timeout) {
    fail("idle for " + std::to_string(cfg_.idle_timeout) + " ms; closing");
    return;
  }
  pass([&] { conn_->advance(now); });
  if (frame_timed_out_ && !closed_) {
    // The decoder has logged the timeout (docs/framing.md F3).
    fail("partial frame not completed within the frame read timeout; closing");
  }
}

bool Session::peer_gone() {
  // POLLHUP/POLLERR on the write side: a Unix socket whose peer closed it
  // completely, or a pipe whose reader exited. A half-closed socket (peer did
  // shutdown(SHUT_WR)) shows neither, and is answered normally.
  pollfd p{out().native_handle(), POLLOUT, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, 0);
  } while (rc < 0 && errno == EINTR);
  return rc > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

bool Session::idle() const {
  return conn_->peer().in_flight() == 0 && pending_.empty() && !writing_;
}

void Session::check_drain() {
  if (draining_ && !closed_ && idle()) close();
}

void Session::drain(Millis deadline, std::optional<DrainNotice> notice) {
  if (closed_) return;
  draining_ = true;
  if (!drain_deadline_ || deadline < *drain_deadline_) drain_deadline_ = deadline;
  if (notice && !eof_ && !announced_) {
    announced_ = true;
    // The notice is output: the session closes once it is written (idle()).
    pass([&] { conn_->peer().drain(std::move(*notice)); });
    if (closed_) return;
  }
  rearm();
  check_drain();
}

void Session::fail(const std::string& why) {
  if (closed_) return;
  close_why_ = why;
  close(Error(code::kClosed, why));
}

void Session::close(std::optional<Error> reason) {
  if (closed_) return;
  auto self = shared_from_this();  // callbacks below may drop the last owner
  closed_ = true;
  conn_->close(std::move(reason));  // fails pending calls, cancels served requests
  timer_.cancel();
  if (log_dropped_) log(std::to_string(log_dropped_) + " more diagnostics not logged");
  boost::system::error_code ec;
  in_.close(ec);
  if (out_) out_->close(ec);
  if (on_closed) {
    auto f = std::move(on_closed);
    on_closed = nullptr;
    f(close_why_);
  }
}

}  // namespace weft::host::detail
