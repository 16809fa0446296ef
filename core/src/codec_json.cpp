// The JSON codec (RFC 8259 text, UTF-8 only).
//
// Decoding is detail::parse_json (json_parse.h): our own parser building
// nlohmann::json values, because nlohmann's lexer costs a third of a server's
// time on small calls and most of it on large strings. It also keeps what the
// codec promises: the depth limit stops the parse, the source text of
// non-integer numeric ids survives (JSON-RPC 2.0 §5: the response carries
// "the same value" as the request's id), and nothing throws.
//
// Encoding is weft::write_json (message.cpp), which writes the envelope by
// hand so that ids are reproduced byte-for-byte.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/codec.h"
#include "json_parse.h"

namespace weft {
namespace {

class JsonCodec final : public Codec {
 public:
  explicit JsonCodec(CodecLimits limits) : limits_(limits) {}

  CodecKind kind() const override { return CodecKind::Json; }

  Result<Document> decode(std::string_view bytes) const override {
    return detail::parse_json(bytes, limits_.max_depth);
  }

  void encode(const Outgoing& out, std::string& buffer) const override {
    write_json(out, buffer);
  }

 private:
  CodecLimits limits_;
};

}  // namespace

namespace detail {
std::unique_ptr<Codec> make_json_codec(CodecLimits limits) {
  return std::make_unique<JsonCodec>(limits);
}
}  // namespace detail

}  // namespace weft
