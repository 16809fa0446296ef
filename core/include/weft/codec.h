// weft/codec.h — turning one frame's bytes into a Document and messages back
// into bytes. Two codecs share this interface: JSON (text, RFC 8259, UTF-8
// only) and MessagePack (binary; `bin` values are first-class and decode to
// json::binary_t, which the JSON codec cannot carry).
//
// A message encoded with either codec decodes to the same json value, except
// that MessagePack has no lexemes: a non-integer numeric id travels as float64.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weft/error.h"
#include "weft/message.h"

namespace weft {

// The two codecs: JSON text (RFC 8259) and MessagePack.
enum class CodecKind { Json, MessagePack };

// What a decoder accepts from the wire.
struct CodecLimits {
  // Nesting of arrays/objects a decoder accepts, counting the top level as 1
  // (a request whose params are [[1]] has depth 3). RFC 8259 §9 lets a parser
  // limit nesting; the limit bounds the memory and work one frame can demand,
  // and the stack its echo costs (encoding recurses over a value). 256 leaves
  // room for params nested 128 deep inside a batch (the array and the message
  // object are two levels more) and for the 100-deep params common in
  // generated data. Deeper input is refused with -32600, the message naming
  // the limit: "Invalid Request: nesting deeper than 256 levels (max_depth)". Both codecs apply it;
  // ConnectionOptions::codec_limits passes it to a Connection.
  std::size_t max_depth = 256;
};

// A codec: one frame's bytes to a Document, messages to bytes. Stateless
// between frames; make one with make_codec().
class Codec {
 public:
  virtual ~Codec() = default;
  // Which codec this is.
  virtual CodecKind kind() const = 0;

  // Decodes exactly one document from `bytes` (the whole frame).
  // Errors:
  //  -32700 Parse error: malformed input, trailing bytes after the value,
  //         invalid UTF-8 in a string (JSON and MessagePack str), truncation.
  //         The message says what and at which byte offset.
  //  -32600 Invalid Request: well-formed but nested deeper than max_depth
  //         (decoding stops at that point; nothing deeper is built). The
  //         message names the limit (see CodecLimits).
  // Also -32700, because the value must be representable as JSON text:
  //  JSON: a number whose value overflows a double (e.g. 1e400; RFC 8259 §6
  //        lets implementations limit range).
  //  MessagePack: a non-str map key, a NaN/Infinity float, any ext value.
  // JSON only: Document::id_lexemes gets the source text of every top-level
  // "id" that is a number but not a 64-bit integer (MessagePack: always empty).
  virtual Result<Document> decode(std::string_view bytes) const = 0;

  // Appends the encoding of `out` to `buffer`. Strings with invalid UTF-8
  // are replaced (JSON) or sent as str bytes (MessagePack). Returns false,
  // appending nothing, when a number in `out` is NaN or infinite: JSON has
  // no form for it (RFC 8259 §6) and decode() refuses it in MessagePack, so
  // the other side would read null or fail the connection. The sender then
  // reports it: Peer::undelivered(out, unencodable_error(), unencodable(out)),
  // which answers such a result -32603.
  [[nodiscard]] virtual bool encode(const Outgoing& out, std::string& buffer) const = 0;
};

// Which messages of `out` encode() refuses (a NaN or infinite number in
// params, result or error data); for Peer::undelivered.
std::vector<bool> unencodable(const Outgoing& out);
// Why: -32603 "NaN or Infinity has no JSON representation".
Error unencodable_error();
// Why an encoded message of `n` bytes is not sent over the sender's limit
// `max` (the option that sets it is `limit`): for Peer::undelivered. A
// message the other side would refuse whole is never written.
Error oversize_error(std::size_t n, std::size_t max, std::string_view limit);

// A codec of `kind` that enforces `limits` when decoding.
std::unique_ptr<Codec> make_codec(CodecKind kind, CodecLimits limits = {});

// "json" / "msgpack" ↔ CodecKind; nullptr/false for an unknown name.
const char* codec_name(CodecKind kind);
bool parse_codec_name(std::string_view name, CodecKind& out);

}  // namespace weft
