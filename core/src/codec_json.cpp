// The JSON codec (RFC 8259 text, UTF-8 only).
//
// Decoding drives nlohmann::json's SAX parser with our own DOM builder instead
// of json::parse(), for three reasons:
//  * depth is limited while parsing: the first start_object/start_array past
//    CodecLimits::max_depth stops the parser, so a hostile "[[[[…" never gets
//    built (codec.h: -32600, "decoding stops at that point");
//  * the source text of numeric ids survives: JSON-RPC 2.0 §4 allows any
//    Number as an id and §5 requires the response to carry "the same value",
//    which a double cannot promise for 1.50 or 123456789012345678901234, so
//    the lexeme of every non-integer (or > 64-bit) top-level id is recorded in
//    Document::id_lexemes (message.h);
//  * nothing throws: the SAX parse_error callback records the error and
//    returns false (weft never throws; Emscripten builds abort on throw).
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

namespace weft {
namespace {

// Makes nlohmann's exception text fit for an error message: drops the
// "[json.exception.parse_error.101] parse error at line 1, column 5: " prefix
// (we report a byte offset instead), caps the length (the "last read" token
// can be a whole multi-megabyte string) and escapes bytes that are not
// printable ASCII, because the token may be the very invalid UTF-8 that made
// the input fail and the message travels back inside a JSON error object.
std::string describe(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    auto close = what.find("] ");
    if (close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  if (what.substr(0, 14) == "parse error at") {
    auto colon = what.find(": ");
    if (colon != std::string_view::npos) what.remove_prefix(colon + 2);
  }
  constexpr std::size_t kMax = 160;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(what.size() < kMax ? what.size() : kMax + 3);
  for (unsigned char c : what) {
    if (out.size() >= kMax) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

// SAX handler building a json value the way nlohmann's json_sax_dom_parser
// does (a stack of open containers plus the slot the next object member goes
// into), with the depth limit and id-lexeme capture added.
class DomBuilder {
 public:
  DomBuilder(std::size_t max_depth, std::vector<IdLexeme>& lexemes)
      : max_depth_(max_depth), lexemes_(lexemes) {
    stack_.reserve(16);
  }

  json& root() { return root_; }
  bool failed() const { return failed_; }
  Error take_error() { return std::move(error_); }

  // --- nlohmann SAX interface (checked by json::sax_parse's static asserts) ---
  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  // Called for every number that is not a 64-bit integer: fractions,
  // exponents, and integers too large for int64/uint64. `lexeme` is the source
  // token. Only a top-level id's lexeme is kept (message.h, IdLexeme).
  bool number_float(json::number_float_t v, const std::string& lexeme) {
    if (pending_id_) lexemes_.push_back(IdLexeme{pending_index_, lexeme});
    return put(json(v));
  }
  // The lexer clears its token buffer before the next token, so the string
  // can be moved out rather than copied.
  bool string(std::string& v) { return put(json(std::move(v))); }
  bool binary(json::binary_t& v) { return put(json(std::move(v))); }  // not produced by JSON text

  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string& k) {
    // An id is "top level" when its object is the document itself (index -1)
    // or a direct element of a top-level batch array (§6), index = position.
    if (stack_.size() == 1 || (stack_.size() == 2 && root_.is_array())) {
      pending_id_ = k == "id";
      pending_index_ = stack_.size() == 1 ? -1 : static_cast<int>(root_.size() - 1);
      // A repeated "id" member replaces the earlier value (last one wins, as
      // in the built object), so its lexeme must not outlive it.
      if (pending_id_ && !lexemes_.empty() && lexemes_.back().index == pending_index_)
        lexemes_.pop_back();
    }
    json::object_t* obj = stack_.back()->get_ptr<json::object_t*>();
    slot_ = &(*obj)[std::move(k)];
    return true;
  }

  // Records the parser's complaint and stops (returning false, not throwing).
  // `position` counts the characters read, including the one that failed.
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const json::exception& ex) {
    const std::size_t at = position > 0 ? position - 1 : 0;
    fail(Error(code::kParseError,
               "invalid JSON at byte " + std::to_string(at) + ": " + describe(ex.what())));
    return false;
  }

 private:
  // Places a finished value: as the root, appended to the open array, or into
  // the object member named by the last key().
  json* place(json&& v) {
    pending_id_ = false;
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    if (json::array_t* arr = stack_.back()->get_ptr<json::array_t*>()) {
      arr->push_back(std::move(v));
      return &arr->back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  bool put(json&& v) {
    place(std::move(v));
    return true;
  }

  bool open(json::value_t type) {
    // Depth counts the top level as 1 (codec.h), so the container about to
    // open is at depth stack_.size() + 1.
    if (stack_.size() >= max_depth_) {
      fail(Error(code::kInvalidRequest,
                 "nesting depth exceeds " + std::to_string(max_depth_)));
      return false;
    }
    stack_.push_back(place(json(type)));
    return true;
  }

  bool close() {
    stack_.pop_back();
    pending_id_ = false;
    return true;
  }

  void fail(Error e) {
    if (!failed_) {
      failed_ = true;
      error_ = std::move(e);
    }
  }

  std::size_t max_depth_;
  std::vector<IdLexeme>& lexemes_;
  json root_;
  std::vector<json*> stack_;  // open containers, outermost first
  json* slot_ = nullptr;      // where the current object member's value goes
  bool pending_id_ = false;   // the next value is a top-level "id"
  int pending_index_ = -1;
  bool failed_ = false;
  Error error_;
};

class JsonCodec final : public Codec {
 public:
  explicit JsonCodec(CodecLimits limits) : limits_(limits) {}

  CodecKind kind() const override { return CodecKind::Json; }

  Result<Document> decode(std::string_view bytes) const override {
    if (bytes.empty()) return Error(code::kParseError, "invalid JSON at byte 0: empty input");
    Document doc;
    DomBuilder builder(limits_.max_depth, doc.id_lexemes);
    const char* first = bytes.data();
    // strict = true: anything but whitespace after the value is an error
    // (RFC 8259 §2: JSON-text = ws value ws).
    const bool ok = json::sax_parse(first, first + bytes.size(), &builder,
                                    json::input_format_t::json, /*strict=*/true,
                                    /*ignore_comments=*/false);
    if (!ok || builder.failed()) {
      if (builder.failed()) return builder.take_error();
      return Error(code::kParseError, "invalid JSON");  // not reached: failures call parse_error
    }
    doc.value = std::move(builder.root());
    return doc;
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
