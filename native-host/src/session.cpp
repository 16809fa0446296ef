// session.cpp — see session.h.
#include "session.h"

#include <poll.h>

#include <cerrno>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "weft/host/server.h"

namespace weft::host::detail {

// Read buffers start at SessionConfig::read_chunk and grow up to this.
constexpr std::size_t kMaxReadChunk = 1u << 20;

boost::asio::steady_timer::time_point to_time_point(Millis ms) {
  return boost::asio::steady_timer::time_point(std::chrono::milliseconds(ms));
}

Session::Session(boost::asio::io_context& io, Fd in, std::optional<Fd> out, SessionConfig cfg)
    : io_(io), in_(std::move(in)), out_(std::move(out)), cfg_(std::move(cfg)), timer_(io),
      rbuf_(cfg_.read_chunk) {
  ConnectionOptions opts = cfg_.conn;
  opts.write = [this](std::string_view bytes) {
    if (closed_) return;
    pending_.append(bytes.data(), bytes.size());
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
    opts.diagnostic = [this](const Diagnostic& d) { log(d.message); };
  }
  conn_ = std::make_unique<Connection>(std::move(opts));
}

Session::~Session() = default;

void Session::log(const std::string& line) {
  if (cfg_.log) cfg_.log(cfg_.name + ": " + line);
}

void Session::start() { do_read(); }

void Session::do_read() {
  if (reading_ || closed_ || eof_ || draining_) return;
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
  if (n > 0) pass([&] { conn_->feed(std::string_view(rbuf_.data(), n), now_ms()); });
  if (closed_) return;
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
  if (closed_ || writing_ || pending_.empty()) return;
  writing_ = true;
  wbuf_.swap(pending_);  // pending_ takes wbuf_'s (cleared) capacity
  // Asio's default completion condition hands at most 64 KiB to each system
  // call, so a 64 KiB answer took two writes and a trip through the reactor
  // between them; offer everything that is left at once instead.
  const std::size_t size = wbuf_.size();
  boost::asio::async_write(out(), boost::asio::buffer(wbuf_),
                    [size](const boost::system::error_code& ec, std::size_t done) -> std::size_t {
                      return ec ? 0 : size - done;
                    },
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      self->on_write(ec);
                    });
}

void Session::on_write(const boost::system::error_code& ec) {
  writing_ = false;
  wbuf_.clear();
  if (closed_) return;
  if (ec) {
    fail("write: " + ec.message());
    return;
  }
  flush();
  check_drain();
  do_read();  // resumes reading if output backpressure paused it
}

void Session::rearm() {
  if (closed_) return;
  std::optional<Millis> d = conn_->next_deadline();
  if (drain_deadline_ && (!d || *drain_deadline_ < *d)) d = drain_deadline_;
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
  pass([&] { conn_->advance(now); });
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

void Session::drain(Millis deadline) {
  if (closed_) return;
  draining_ = true;
  if (!drain_deadline_ || deadline < *drain_deadline_) drain_deadline_ = deadline;
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
