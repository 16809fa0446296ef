// message_peer.cpp — see message_peer.h.
#include "net/message_peer.h"

#include "net/hub.h"
#include "session.h"  // to_time_point
#include "weft/host/server.h"

namespace weft::host::detail {

namespace {

PeerOptions peer_options(const MessagePeer::Config& cfg, std::function<void(Outgoing&&)> send) {
  PeerOptions o;
  o.limits = cfg.peer_limits;
  o.send = std::move(send);
  o.handshake = cfg.handshake;
  o.clock_us = cfg.clock_us;
  if (cfg.log) {
    o.diagnostic = [log = cfg.log, name = cfg.name](const Diagnostic& d) { log(name + ": " + d.message); };
  }
  return o;
}

}  // namespace

MessagePeer::Config web_peer_config(const Hub& hub, CodecKind codec, std::string name) {
  MessagePeer::Config cfg;
  cfg.codec = codec;
  cfg.codec_limits = hub.opts.codec_limits;
  cfg.peer_limits = hub.opts.peer_limits;
  cfg.log = hub.log;
  if (hub.opts.handshake) {
    cfg.handshake = hub.opts.handshake;
    if (cfg.handshake->session.empty()) cfg.handshake->session = name;
    cfg.clock_us = now_us;  // for "metrics" (docs/protocol.md "Metrics")
  }
  cfg.name = std::move(name);
  return cfg;
}

MessagePeer::MessagePeer(boost::asio::io_context& io, Config cfg, Send send)
    : cfg_(std::move(cfg)),
      send_(std::move(send)),
      codec_(make_codec(cfg_.codec, cfg_.codec_limits)),
      peer_(peer_options(cfg_,
                         [this](Outgoing&& o) {
                           if (closed_ || !send_) return;
                           std::string bytes;
                           codec_->encode(o, bytes);
                           send_(o, std::move(bytes));
                         })),
      timer_(io) {}

MessagePeer::~MessagePeer() = default;

Result<Document> MessagePeer::decode(std::string_view bytes) const { return codec_->decode(bytes); }

void MessagePeer::receive(std::string_view bytes) {
  auto doc = codec_->decode(bytes);
  if (doc) deliver(std::move(doc.value()));
  else deliver_error(doc.error());
}

void MessagePeer::deliver(Document&& doc) {
  if (closed_) return;
  peer_.receive(std::move(doc));
  rearm();
}

void MessagePeer::deliver_error(const Error& e) {
  if (closed_) return;
  if (cfg_.log) cfg_.log(cfg_.name + ": " + e.message);
  peer_.receive_error(e);
}

void MessagePeer::rearm() {
  if (closed_) return;
  auto d = peer_.next_deadline();
  if (!d || (armed_ && *armed_ <= *d)) return;
  armed_ = d;
  timer_.expires_at(to_time_point(*d));
  timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->closed_) return;
    self->on_timer();
  });
}

void MessagePeer::on_timer() {
  armed_.reset();
  peer_.advance(now_ms());
  rearm();
}

void MessagePeer::close(std::optional<Error> reason) {
  if (closed_) return;
  closed_ = true;
  timer_.cancel();
  peer_.close(std::move(reason));
}

}  // namespace weft::host::detail
