// Private: the JSON decoder (RFC 8259 text → nlohmann::json values), reporting
// the outer levels of the document as events so that a reader can take a
// message envelope apart without building it.
//
// Why our own: the profile of `weft serve` answering small calls showed
// nlohmann's SAX lexer (one virtual-ish get() per byte, one push_back per
// string byte, locale lookups per number) as a third of the server's time,
// and its string scanner as most of the time of a 64 KiB echo. This parser
// builds the same nlohmann::json values but scans strings in runs (sixteen or eight
// bytes at a time while they are plain, scan.h), reads integers without strtoull,
// and keeps the rules codec.h promises:
//  * -32700 for anything that is not one JSON text (RFC 8259 §2: ws value ws),
//    with "invalid JSON at byte N: <what>", N the offset of the offending byte;
//  * strings must be well-formed UTF-8 (RFC 8259 §8.1, RFC 3629: no overlongs,
//    no surrogates, nothing above U+10FFFF) and escapes must pair surrogates;
//  * a number that overflows a double is -32700 (RFC 8259 §6 allows the limit);
//  * nesting past `max_depth` (top level = 1) is -32600 (nesting_too_deep)
//    and stops the parse;
//  * non-negative integers that fit 64 bits are number_unsigned, negative ones
//    number_integer, everything else number_float (as nlohmann parses them);
//  * a repeated object member replaces the earlier one (last wins);
//  * a leading UTF-8 byte order mark is skipped (RFC 8259 §8.1 "MAY ignore").
// Nothing throws; the parse is iterative, so depth costs heap, not stack.
// The parser knows no member names: what JSON-RPC makes of the envelope is
// the sink's business (EnvelopeBuilder below, the JSON codec's Document).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "weft/error.h"
#include "weft/message.h"

namespace weft::detail {

// The error for input nested deeper than CodecLimits::max_depth, shared by
// both codecs so the wire answer is the same whichever decoded the frame. It
// names the limit and the option, so whoever meets it knows what to raise.
inline Error nesting_too_deep(std::size_t max_depth) {
  return Error(code::kInvalidRequest, "Invalid Request: nesting deeper than " + std::to_string(max_depth) +
                                          " levels (max_depth)");
}

// What the parser reports about the envelope level of a document: the
// document itself and, when it is an array, its elements (where JSON-RPC
// 2.0 puts message objects: §4 a single one, §6 a batch). Objects at that
// level arrive member by member, everything else as whole values, in
// document order:
//   document := value(v) | object | begin_array() element* end_array()
//   element  := value(v) | object
//   object   := begin_object() (want(name) [member(name, v, text) | member_text(name, s)])* end_object()
// Values below that level are built as json values (params, result, ...).
// After a parse error the sink has seen a prefix of the document; whatever
// it built is to be dropped.
class EnvelopeSink {
 public:
  // The document is an array; its elements follow, then end_array().
  virtual void begin_array() = 0;
  virtual void end_array() = 0;
  // The document, or an element of the document array, is an object.
  virtual void begin_object() = 0;
  // A member of that object is next. false: its value is only checked (every
  // error is still reported) and dropped without building it.
  virtual bool want(std::string_view name) = 0;
  // The member's value, when want(name) said so. `number_text` is the source
  // text of a number that is not a 64-bit integer (it became a double, which
  // cannot say how it was spelled), else empty. Repeats are reported too: the
  // last one is the member's value (RFC 8259 §4 leaves this to the reader;
  // nlohmann and every common parser keep the last). `name` (like `text`
  // below) is valid during the call only.
  virtual void member(std::string_view name, json&& value, std::string_view number_text) = 0;
  // The same for a member whose value is a string: its text, escapes decoded.
  // Apart: the envelope's strings ("jsonrpc", "method") are wanted as text,
  // and a json string value would cost them a heap allocation each.
  virtual void member_text(std::string_view name, std::string_view text) = 0;
  virtual void end_object() = 0;
  // The document, or an element of the document array, that is not an object
  // (a scalar, or for an element also an array).
  virtual void value(json&& v) = 0;

 protected:
  ~EnvelopeSink() = default;
};

// Parses one JSON text, reporting its envelope level to `sink`.
Result<void> parse_json(std::string_view text, std::size_t max_depth, EnvelopeSink& sink);

// A sink that rebuilds the whole document as one json value: the parser's
// DOM mode. Readers that need more than the value derive from it.
class ValueBuilder : public EnvelopeSink {
 public:
  json take() { return std::move(root_); }

  void begin_array() override;
  void end_array() override {}
  void begin_object() override;
  bool want(std::string_view) override { return true; }
  void member(std::string_view name, json&& value, std::string_view number_text) override;
  void member_text(std::string_view name, std::string_view text) override;
  void end_object() override { object_ = nullptr; }
  void value(json&& v) override;

 protected:
  // During member(): -1 if the object is the document, else its position in
  // the document array.
  int element() const { return array_ ? static_cast<int>(array_->size()) - 1 : -1; }

 private:
  json root_;
  json::array_t* array_ = nullptr;    // root_'s array, once begin_array() came
  json::object_t* object_ = nullptr;  // the object whose members are arriving
};

// The whole document as one json value.
Result<json> parse_json(std::string_view text, std::size_t max_depth);

// The JSON codec's hot path (Connection): the parser's events turned straight
// into classified messages, without building the envelope object (a std::map:
// a node allocation and string compares per member, then its destructor) or a
// Document. Each object at the envelope level becomes an Envelope holding only
// jsonrpc/method/params/id/result/error (other members are checked, not
// built) plus the lexeme of a non-integer numeric "id" (so that §5's "same
// value" is echoed byte for byte), judged by classify(Envelope&&); other
// values go to classify_non_object and the array to check_batch (message.h).
// The Incoming is the one classify(Document&&) gives for the same text
// decoded by the JSON codec. Defined in rpc/envelope.cpp, with classify().
class EnvelopeBuilder final : public EnvelopeSink {
 public:
  // `recycled`: an Incoming whose items vector is reused (its items are
  // dropped, its capacity kept), so a message costs no vector allocation.
  explicit EnvelopeBuilder(std::size_t max_batch, Incoming&& recycled = {})
      : max_batch_(max_batch), in_(std::move(recycled)) {
    in_.batch = false;
    in_.checked.reset();
    in_.items.clear();
  }
  // After a successful parse_json(text, max_depth, *this).
  Incoming take() { return std::move(in_); }

  void begin_array() override;
  void end_array() override;
  void begin_object() override;
  bool want(std::string_view name) override;
  void member(std::string_view name, json&& value, std::string_view number_text) override;
  void member_text(std::string_view name, std::string_view text) override;
  void end_object() override;
  void value(json&& v) override;

 private:
  // Past twice max_batch the batch is refused whole (check_batch): its
  // further elements are checked by the parser but not judged or kept.
  bool over_limit() const { return batch_past_answering(elements_, max_batch_); }
  // One more element of the document array: the items so far are dropped
  // when it is the first past twice max_batch (written not to overflow).
  void count() {
    if (in_.batch && ++elements_ > max_batch_ && elements_ - max_batch_ - 1 == max_batch_) in_.items = {};
  }

  std::size_t max_batch_;
  std::size_t elements_ = 0;  // elements of the document array so far
  Envelope envelope_;         // the object whose members are arriving
  Incoming in_;
};

}  // namespace weft::detail
