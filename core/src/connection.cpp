// Connection: bytes → frames → documents → Peer, and back out again.
#include "weft/connection.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "json/parse.h"

namespace weft {
namespace {

// The elements of batch `out` (over `max` bytes encoded) that cannot go in
// it: those whose replacement saves most (Peer::undelivered answers a
// response -32603 naming `why`, drops a request or notification), until the
// rest fits. The others are sent again as they were, so that one large
// result does not take its batch's small ones with it.
std::vector<bool> past_limit(const Outgoing& out, const Codec& codec, std::size_t max, const Error& why) {
  auto size_of = [&codec](Message m) {
    Outgoing one;
    one.messages.push_back(std::move(m));
    std::string text;
    (void)codec.encode(one, text);  // encodable: the whole batch was
    return text.size() + 1;         // and a comma
  };
  const std::string replaced = "Internal error: the result could not be sent: " + why.message;
  std::vector<std::pair<std::size_t, std::size_t>> savings;  // (bytes saved, index)
  std::size_t total = 2;                                     // the brackets
  for (std::size_t i = 0; i < out.messages.size(); ++i) {
    const Message& m = out.messages[i];
    const std::size_t n = size_of(m);
    const auto* r = std::get_if<Response>(&m);
    const std::size_t after = r ? size_of(Response{r->id, Error(code::kInternalError, replaced)}) : 0;
    if (after < n) savings.emplace_back(n - after, i);
    total += n;
  }
  std::sort(savings.begin(), savings.end(), std::greater<>());
  std::vector<bool> failed(out.messages.size(), false);
  for (const auto& [saved, i] : savings) {
    if (total <= max) break;
    failed[i] = true;
    total -= saved;
  }
  return failed;
}

// A batch of answers over `max` bytes encoded, as consecutive arrays that
// each fit: every call still gets its answer, whole. §6 asks for one array,
// but a client pairs answers with its calls by id, not by array; replacing
// results with errors instead loses them, and need not even fit (an error
// can be longer than the result it replaces). An answer too large alone is
// an array of its own, refused as a single answer is (Peer::undelivered).
std::vector<Outgoing> split_answers(const Outgoing& out, const Codec& codec, std::size_t max) {
  std::vector<Outgoing> groups;
  std::size_t used = 0;
  std::string text;
  for (const Message& m : out.messages) {
    Outgoing one;
    one.messages.push_back(m);
    text.clear();
    (void)codec.encode(one, text);        // encodable: the whole batch was
    const std::size_t n = text.size() + 1;  // and a comma (or a bracket)
    if (groups.empty() || used + n + 1 > max) {
      groups.emplace_back().batch = true;
      used = 1;  // the opening bracket
    }
    groups.back().messages.push_back(m);
    used += n;
  }
  return groups;
}

bool answers_only(const Outgoing& out) {
  return std::all_of(out.messages.begin(), out.messages.end(),
                     [](const Message& m) { return std::holds_alternative<Response>(m); });
}

}  // namespace

struct Connection::Impl final : FrameHandler {
  ConnectionOptions opts;
  std::unique_ptr<FrameDecoder> decoder;
  std::unique_ptr<Codec> codec;
  std::unique_ptr<Peer> peer;
  Millis now = 0;
  std::string frame;  // reused: frame header room, then the encoded message
  std::size_t error_run = 0;  // undecodable frames in a row
  Incoming spare;             // the last frame's Incoming, its vector reused
  // Compression (docs/framing.md "Compression"): what this side can use
  // (ConnectionOptions::compression, filtered) with its contexts, and
  // buffers reused for compressed frames.
  Compressor comp;
  bool zstd = false;
  std::string zframe, plain;
  bool writing = false;  // in send(): `frame`/`zframe` hold the bytes out
  bool* gone_ = nullptr;  // the innermost send's "destroyed meanwhile" flag

  // Z1: only length-prefixed frames carry binary payloads as they are:
  // NDJSON cannot hold one, and LSP declares its payload to be JSON text.
  static std::vector<std::string> usable(const ConnectionOptions& o) {
    const bool binary = o.framing == Framing::Len32Be || o.framing == Framing::Len32Le;
    return binary ? o.compression : std::vector<std::string>{};
  }

  explicit Impl(ConnectionOptions o) : opts(std::move(o)), comp(usable(opts)) {
    decoder = make_decoder(opts.framing, opts.framing_limits);
    codec = make_codec(opts.codec, opts.codec_limits);
    zstd = comp.enabled();
    PeerOptions po;
    po.limits = opts.peer_limits;
    po.default_timeout = opts.default_timeout;
    po.send = [this](Outgoing&& out) { send(out); };
    po.diagnostic = opts.diagnostic;
    po.on_drain = opts.on_drain;
    po.clock = [this] { return now; };  // the time of the feed/advance in progress
    po.clock_us = opts.clock_us;
    if (opts.handshake) po.handshake = comp.offer(*opts.handshake);
    peer = std::make_unique<Peer>(std::move(po));
  }

  bool compressing() const { return zstd && comp.agreed(peer->agreed()); }

  // The message is encoded after room for the frame header and framed where
  // it lies (framing.h, frame_in_place): a large answer is not copied again
  // just to put a header in front of it. A send from inside `write` (which
  // may re-enter the Peer: peer.h) gets buffers of its own, as the reused
  // ones hold the bytes being written.
  // `write` may also destroy the Connection: `gone` (chained through the
  // sends under way, set by ~Impl) says so, and nothing of it is touched then.
  void send(const Outgoing& out) {
    bool gone = false;
    bool* const outer = gone_;
    gone_ = &gone;
    if (writing) {
      std::string buf, zbuf;
      send_in(out, buf, zbuf);
    } else {
      writing = true;
      send_in(out, frame, zframe);
      if (!gone) writing = false;
    }
    if (gone) {
      if (outer) *outer = true;
      return;
    }
    gone_ = outer;
  }

  ~Impl() override {
    if (gone_) *gone_ = true;
  }

  void send_in(const Outgoing& out, std::string& buf, std::string& zbuf) {
    buf.assign(kFrameHeadroom, '\0');
    if (!codec->encode(out, buf)) {  // a NaN or an infinity (codec.h)
      peer->undelivered(out, unencodable_error(), unencodable(out));
      return;
    }
    if (const std::size_t n = buf.size() - kFrameHeadroom; opts.max_send && n > opts.max_send) {
      // Never written: the other side would refuse it whole (or, for a
      // response, the caller could not tell why it never came).
      buf.clear();
      buf.shrink_to_fit();
      const Error why = oversize_error(n, opts.max_send, opts.max_send_name);
      std::vector<Outgoing> groups;
      if (out.batch && out.messages.size() > 1 && answers_only(out))
        groups = split_answers(out, *codec, opts.max_send);
      if (groups.size() > 1) {  // one group: its measure disagrees with the encoder
        bool* const gone = gone_;  // outlives `this` (send())
        for (const Outgoing& group : groups) {
          send(group);
          if (*gone) return;
        }
      } else if (out.batch && out.messages.size() > 1) {
        peer->undelivered(out, why, past_limit(out, *codec, opts.max_send, why));
      } else {
        peer->undelivered(out, why);
      }
      return;
    }
    std::string* framed = &buf;
    if (zstd && buf.size() - kFrameHeadroom > kCompressOver && compressing()) {
      // Z2: compressed when that is smaller (Compressor::compress).
      zbuf.assign(kFrameHeadroom, '\0');
      const std::string_view payload(buf.data() + kFrameHeadroom, buf.size() - kFrameHeadroom);
      if (comp.compress(payload, zbuf)) framed = &zbuf;
    }
    const std::string_view bytes = frame_in_place(opts.framing, *framed);
    if (opts.write) opts.write(bytes);
  }

  // `offset`: the stream offset of the byte that revealed a frame error; none
  // for a payload the codec refused (the decoder alone knows where it lay).
  void report(const Error& e, std::optional<std::uint64_t> offset) {
    if (!opts.diagnostic) return;
    std::string where = " (code " + std::to_string(e.code);
    if (offset) where += ", byte " + std::to_string(*offset);
    opts.diagnostic(Diagnostic{Diagnostic::Kind::BadFrame, e.message + where + ")", e});
  }

  // §5: a request that could not be parsed is answered with id null — up to
  // max_error_replies in a row (see ConnectionOptions).
  void answer_error(const Error& e) {
    ++error_run;
    if (opts.max_error_replies == 0 || error_run <= opts.max_error_replies) {
      peer->receive_error(e);
    } else if (error_run == opts.max_error_replies + 1 && opts.diagnostic) {
      opts.diagnostic(Diagnostic{Diagnostic::Kind::BadFrame,
                                 "too many undecodable frames in a row; no longer answering them", e});
    }
  }

  void on_frame(std::string_view payload) override {
    if (zstd && Compressor::is_compressed(payload)) return on_compressed(payload);
    decode(payload);
  }

  // docs/framing.md Z3-Z5: decompressed within max_frame, then decoded like
  // any payload. The buffer is kept for the next frame unless it grew past
  // 1 MiB: one large frame does not pin its size for the connection's life.
  void on_compressed(std::string_view payload) {
    std::string text = std::move(plain);
    if (Result<void> r = comp.decompress(payload, opts.framing_limits.max_frame, text); !r)
      return undecodable(r.error());
    decode(text);
    if (text.capacity() <= (std::size_t{1} << 20)) plain = std::move(text);
  }

  void decode(std::string_view payload) {
    if (opts.codec == CodecKind::Json) {
      // The JSON codec's decode + classify without building the envelope
      // object or a Document (json/parse.h, EnvelopeBuilder): same errors,
      // same messages.
      // The Incoming is taken out of `spare` and put back after: a handler
      // that feeds this connection again meanwhile gets a vector of its own.
      detail::EnvelopeBuilder envelope(opts.peer_limits.max_batch, std::move(spare));
      if (Result<void> r = detail::parse_json(payload, opts.codec_limits.max_depth, envelope); !r)
        return undecodable(r.error());
      error_run = 0;
      Incoming in = envelope.take();
      peer->receive(std::move(in));  // works in place: `in` keeps its vector
      spare = std::move(in);
      return;
    }
    Result<Document> doc = codec->decode(payload);
    if (!doc) return undecodable(doc.error());
    error_run = 0;
    peer->receive(std::move(*doc));
  }

  void undecodable(const Error& e) {
    report(e, std::nullopt);
    answer_error(e);
  }

  void on_frame_error(const FrameError& e) override {
    report(e.error, e.offset);
    if (e.reply) answer_error(e.error);
  }
};

Connection::Connection(ConnectionOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Connection::~Connection() = default;

Peer& Connection::peer() { return *impl_->peer; }

void Connection::feed(std::string_view bytes, Millis now) {
  impl_->now = now;
  // docs/framing.md F3: bytes arriving after the deadline must not complete
  // the timed-out frame, even when the host reads them before its timer fires.
  impl_->decoder->expire(now, *impl_);
  impl_->decoder->feed(bytes, now, *impl_);
}

void Connection::finish(Millis now) {
  impl_->now = now;
  impl_->decoder->finish(*impl_);
}

std::optional<Millis> Connection::next_deadline() const {
  auto a = impl_->peer->next_deadline();
  auto b = impl_->decoder->deadline();
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

void Connection::advance(Millis now) {
  impl_->now = now;
  impl_->decoder->expire(now, *impl_);
  impl_->peer->advance(now);
}

Result<Id> Connection::handshake(Handshake mine, std::function<void(Result<Handshake>)> done, CallOptions opts,
                                 Millis now) {
  return impl_->peer->handshake(impl_->comp.offer(std::move(mine)), std::move(done), std::move(opts), now);
}

bool Connection::compressing() const { return impl_->compressing(); }

void Connection::close(std::optional<Error> reason) { impl_->peer->close(std::move(reason)); }

}  // namespace weft
