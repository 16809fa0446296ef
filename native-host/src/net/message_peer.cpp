// message_peer.cpp — see message_peer.h.
#include "net/message_peer.h"

#include "net/hub.h"
#include "session.h"  // to_time_point
#include "weft/host/server.h"

namespace weft::host::detail {

namespace {

PeerOptions peer_options(const MessagePeer::Config& cfg, const Compressor& comp,
                         std::function<void(Outgoing&&)> send) {
  PeerOptions o;
  o.limits = cfg.peer_limits;
  o.send = std::move(send);
  if (cfg.handshake) o.handshake = comp.offer(*cfg.handshake);
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
  cfg.max_message = hub.opts.web.max_message ? hub.opts.web.max_message : hub.opts.framing_limits.max_frame;
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
      comp_(cfg_.handshake ? cfg_.compression : std::vector<std::string>{}),
      peer_(peer_options(cfg_, comp_,
                         [this](Outgoing&& o) {
                           if (closed_ || !send_) return;
                           std::string bytes;
                           if (!codec_->encode(o, bytes))  // a NaN or an infinity (codec.h)
                             return peer_.undelivered(o, unencodable_error(), unencodable(o));
                           // Z2: once agreed (the handshake answer too: the
                           // caller offered, so it reads zstd already).
                           if (std::string z; comp_.agreed(peer_.agreed()) && comp_.compress(bytes, z))
                             bytes = std::move(z);
                           send_(o, std::move(bytes));
                         })),
      timer_(io) {}

MessagePeer::~MessagePeer() = default;

Result<Document> MessagePeer::decode(std::string_view bytes) const { return codec_->decode(bytes); }

void MessagePeer::receive(std::string_view bytes) {
  if (comp_.enabled() && Compressor::is_compressed(bytes)) {
    // Z3–Z5: inflated within max_message, then decoded like any message.
    if (auto r = comp_.decompress(bytes, cfg_.max_message, plain_); !r) return deliver_error(r.error());
    bytes = plain_;
  }
  auto doc = codec_->decode(bytes);
  // One large message does not pin its size for the connection's life.
  if (plain_.capacity() > (std::size_t{1} << 20)) std::string().swap(plain_);
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
