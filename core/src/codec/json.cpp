// The JSON codec (RFC 8259 text, UTF-8 only).
//
// Decoding is detail::parse_json (json/parse.h): our own parser building
// nlohmann::json values, because nlohmann's lexer costs a third of a server's
// time on small calls and most of it on large strings. It also keeps what the
// codec promises: the depth limit stops the parse, the source text of
// non-integer numeric ids survives (JSON-RPC 2.0 §5: the response carries
// "the same value" as the request's id), and nothing throws.
//
// Encoding is weft::write_json (rpc/write.cpp), which writes the envelope by
// hand so that ids are reproduced byte-for-byte.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/codec.h"
#include "json/parse.h"
#include "json/write.h"

namespace weft {
namespace {

// The document as a json value, plus Document::id_lexemes: the source text of
// every "id" member at the envelope level (of the document object, or of an
// object element of the document array) whose value is a number that is not a
// 64-bit integer, so that classify(Document) can echo it exactly (§5).
class DocumentBuilder final : public detail::ValueBuilder {
 public:
  std::vector<IdLexeme> lexemes;

  void member(std::string_view name, json&& value, std::string_view number_text) override {
    if (name == "id") {
      const int index = element();
      // A repeated "id" replaces the earlier value (last wins), so its lexeme goes too.
      if (!lexemes.empty() && lexemes.back().index == index) lexemes.pop_back();
      if (!number_text.empty()) lexemes.push_back(IdLexeme{index, std::string(number_text)});
    }
    ValueBuilder::member(name, std::move(value), number_text);
  }
};

class JsonCodec final : public Codec {
 public:
  explicit JsonCodec(CodecLimits limits) : limits_(limits) {}

  CodecKind kind() const override { return CodecKind::Json; }

  Result<Document> decode(std::string_view bytes) const override {
    DocumentBuilder b;
    if (Result<void> r = detail::parse_json(bytes, limits_.max_depth, b); !r) return r.error();
    return Document{b.take(), std::move(b.lexemes)};
  }

  bool encode(const Outgoing& out, std::string& buffer) const override {
    const std::size_t mark = buffer.size();
    detail::wrote_non_finite = false;
    write_json(out, buffer);
    if (!detail::wrote_non_finite) return true;
    buffer.resize(mark);
    return false;
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
