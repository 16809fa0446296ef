// weft/message.h — the JSON-RPC 2.0 message model and its validation.
//
// Four message shapes (spec §4 Request, §4.1 Notification, §5 Response) plus
// batches (§6). `classify()` turns a decoded document into typed messages,
// applying every validity rule of the spec; `write_json()` turns messages back
// into bytes with the envelope written by hand, so ids are reproduced exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "weft/error.h"

namespace weft {

// A request id (§4: "a String, Number, or Null value"). Type and value are kept
// exactly: integers that fit 64 bits are held as integers, and any other number
// keeps the lexeme it arrived with (e.g. 1.50, 1E3, 123456789012345678901234)
// so a response echoes it byte-for-byte instead of rounding it through double.
class Id {
 public:
  // What the id holds: null, a 64-bit integer (signed or above INT64_MAX),
  // another number (kept as its lexeme) or a string.
  enum class Kind : std::uint8_t { Null, Int, Uint, Number, String };

  Id() = default;  // null
  // Copies and moves touch the string only for the kinds that hold one: an
  // id is copied and moved several times per message, and moving a
  // std::string copies its short buffer even when it is empty.
  Id(const Id& o) : kind_(o.kind_), i_(o.i_), u_(o.u_) {
    if (has_text()) s_ = o.s_;
  }
  // Moves; the string only when the id holds text.
  Id(Id&& o) noexcept : kind_(o.kind_), i_(o.i_), u_(o.u_) {
    if (has_text()) s_ = std::move(o.s_);
  }
  // Copy-assigns; the string only when `o` holds text.
  Id& operator=(const Id& o) {
    if (this != &o) assign(o.kind_, o.i_, o.u_, o.s_, o.has_text());
    return *this;
  }
  // Move-assigns; the string only when `o` holds text.
  Id& operator=(Id&& o) noexcept {
    if (this != &o) assign(o.kind_, o.i_, o.u_, std::move(o.s_), o.has_text());
    return *this;
  }
  ~Id() = default;
  // Makers: the null id, an integer, a string.
  static Id null() { return Id(); }
  static Id integer(std::int64_t v);
  static Id unsigned_integer(std::uint64_t v);  // normalised to Int if it fits
  static Id string(std::string s);
  // `lexeme` must be a valid JSON number token; integers that fit are normalised.
  static Id number(std::string lexeme);
  // From a decoded JSON value (string, number or null); anything else → nullopt.
  // `lexeme`, if given, is the number's source text (see Document::id_lexemes).
  static std::optional<Id> from_json(const json& v, const std::string* lexeme = nullptr);

  // Kind and value: as_int() for Int, as_uint() for Uint, text() for Number/String.
  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  std::int64_t as_int() const { return i_; }
  std::uint64_t as_uint() const { return u_; }
  const std::string& text() const { return s_; }  // String value or Number lexeme

  // Appends the id as JSON text, exactly as received.
  void write_json(std::string& out) const;
  // As a json value (a Number becomes a double: json values cannot hold lexemes).
  json to_json() const;
  std::string to_string() const;  // JSON text, for diagnostics

  // Same kind and value (a Number compares by lexeme).
  friend bool operator==(const Id& a, const Id& b);
  // A hash consistent with operator== (see IdHash).
  std::size_t hash() const;

 private:
  // Number and String hold their text in s_; the other kinds leave it empty.
  bool has_text() const { return kind_ == Kind::Number || kind_ == Kind::String; }
  template <typename S>
  void assign(Kind k, std::int64_t i, std::uint64_t u, S&& s, bool text) {
    kind_ = k;
    i_ = i;
    u_ = u;
    if (text) s_ = std::forward<S>(s);
    else s_.clear();
  }

  Kind kind_ = Kind::Null;
  std::int64_t i_ = 0;
  std::uint64_t u_ = 0;
  std::string s_;
};

// Hasher for unordered containers keyed by Id.
struct IdHash {
  // Id::hash().
  std::size_t operator()(const Id& id) const { return id.hash(); }
};

// A request (§4): a call that expects a response with the same id.
struct Request {
  // The id the response will carry, and the method to call.
  Id id;
  std::string method;
  std::optional<json> params;  // absent, or an array/object (§4.2)
};

// A notification (§4.1): a request without an id, never answered.
struct Notification {
  // The method to call and its params (absent, or an array/object, §4.2).
  std::string method;
  std::optional<json> params;
};

// Per-response metrics (docs/protocol.md, "Metrics"): sent as a "metrics"
// member of the response object only when a handshake agreed on "metrics".
struct ResponseMetrics {
  // Microseconds from the dispatch of the request to its answer, by the
  // serving host's clock (PeerOptions::clock_us).
  std::uint64_t processing_time_us = 0;
  // Bytes of the response as its codec encodes it without the "metrics"
  // member, before compression and framing. Filled by the encoder
  // (write_json, the MessagePack codec): what a Response to be sent holds
  // here is ignored.
  std::uint64_t response_size = 0;
};

// A response (§5): the result or the error of the request with the same id.
struct Response {
  Id id;                              // null only for errors that had no usable id
  std::variant<json, Error> outcome;  // result (§5 "result") or error (§5.1)
  // Set by the serving Peer when metrics were agreed; on a received response,
  // the "metrics" member when it is well-formed (else nullopt).
  std::optional<ResponseMetrics> metrics{};
  // True when `outcome` holds the Error.
  bool is_error() const { return outcome.index() == 1; }
};

// One valid message.
using Message = std::variant<Request, Notification, Response>;

// A decoded document (Codec::decode): the value, plus the source text of each
// envelope-level "id" that is a number but not a 64-bit integer. The value
// cannot carry it (such a number is a double, which has lost its spelling,
// e.g. 1.50 or 123456789012345678901234), and classify(Document) must echo
// the id exactly (§5); the JSON codec records it (MessagePack has no source
// text: always empty). index -1 is a single top-level object; i >= 0 is the
// i-th element of a top-level batch array.
struct IdLexeme {
  // Which message the id belongs to (-1, or the batch element), and its text.
  int index;
  std::string lexeme;
};
// Codec::decode's result: the value and its id lexemes (see IdLexeme).
struct Document {
  // The decoded value, and the lexemes of its non-integer numeric ids.
  json value;
  std::vector<IdLexeme> id_lexemes;
};

// One element of an incoming message after validation: a valid message, or a
// rule violation that must be answered (`reply`) or only reported.
struct Invalid {
  Id id;         // the element's id when it was usable, else null (§5)
  Error error;   // -32600 with a message that names the rule broken
  bool reply;    // false for malformed *responses*: answering those could loop
  // The element has no "jsonrpc":"2.0" (or is not an object at all, or is
  // the empty array, which holds no message). On a
  // channel shared with other traffic (window postMessage) such a value is
  // somebody else's message rather than a broken JSON-RPC one; see
  // PeerOptions::ignore_foreign.
  bool foreign = false;
  // The element has a "method" member: a call that could not be accepted, as
  // opposed to a malformed response (PeerOptions::role filters on this).
  bool call = false;
};
// One element of an incoming message after classify().
using Item = std::variant<Request, Notification, Response, Invalid>;

// A classified document: one item, or a batch's items in order.
struct Incoming {
  bool batch = false;       // the document was an array (§6)
  std::vector<Item> items;  // empty batch → one Invalid (§6: "an empty Array")
  // The max_batch that check_batch() applied (nullopt: not yet); Peer
  // applies its own limit unless this is it.
  std::optional<std::size_t> checked;
};

// A "method" member: its text when it is a string (no json allocation), else
// the value found, for classify() to name its type.
using StringMember = std::variant<std::string, json>;

// The envelope of one message object: its members that JSON-RPC defines, each
// absent (nullopt) or the value found; other members are not kept (§4, §5
// give them no meaning). The decoders of JSON-RPC values fill one per message
// object — the JSON codec's hot path from the parser's events, a decoded
// Document from its objects — and classify(Envelope&&) has judge() (below)
// decide on it. Payload members (params, result, error.data) may hold host
// placeholders of the right JSON type: classify() only checks their type and
// moves them. A host whose members arrive as typed slots rather than values
// (the WebAssembly binding) describes them to judge() directly.
//
// "method" must be a string (§4), so it is held as text when it is (a json
// string would cost a heap allocation per message), else as the value found
// (StringMember), whose type classify() names in its error. Of "jsonrpc"
// only one thing matters (§4: "MUST be exactly "2.0""), so only that is kept.
struct Envelope {
  // "jsonrpc" is present and is the string "2.0".
  bool version = false;
  // The members as found; nullopt when absent.
  std::optional<StringMember> method;
  std::optional<json> params, id, result, error;
  // Instead of `id`: an id the decoder already holds as a valid Id (a host
  // whose ids arrive as numbers and strings need not make a json of each).
  // Set at most one of the two.
  std::optional<Id> valid_id;
  // "metrics" (docs/protocol.md, "Metrics"): kept for responses only.
  std::optional<json> metrics;
  // The source text of "id" when it is a number but not a 64-bit integer
  // (see Id): a response then echoes it byte for byte.
  std::optional<std::string> id_lexeme;
};

// A member's value as a StringMember: a string's text, else the value.
StringMember string_member(json v);

// ---- The rules of §4–§5 on their own -----------------------------------------
// Whether a message object is a request, a notification, a response or
// invalid — and which rule it breaks — depends only on the kinds of its
// members. A decoder describes what it found as a Shape, judge() decides,
// and building the Item is then mechanical: classify(Envelope&&) does so
// from an Envelope, and a host whose members arrive as typed slots (the
// WebAssembly binding's descriptors) from those slots, without making an
// Envelope. The rules are written once, in judge().

// The type of a member's value, as far as §4–§5 care. Number is a finite
// number; NonFinite one JSON cannot express (NaN or infinity, which a host
// value or MessagePack float can be); Other is anything no rule names
// (an invalid value).
enum class MemberKind : std::uint8_t { Absent, Null, Boolean, Number, NonFinite, String, Array, Object, Binary, Other };

// The kind of a decoded value.
MemberKind kind_of(const json& v);
// Its name in an error message ("a string", "an object", …).
const char* kind_name(MemberKind k);

// What judge() reads of one message object.
struct Shape {
  bool version = false;  // "jsonrpc" is present and is exactly the string "2.0"
  // The kinds of the members JSON-RPC defines (Absent when missing).
  MemberKind method = MemberKind::Absent, id = MemberKind::Absent, params = MemberKind::Absent,
             result = MemberKind::Absent, error = MemberKind::Absent;
  // When `error` is an Object: its "code" read by error_code_from (nullopt
  // when absent or not an integer that fits 32 bits), and whether it has a
  // string "message".
  std::optional<int> code;
  bool message_is_string = false;
};

// What the rules make of a Shape.
struct Verdict {
  // A request, a notification, a response carrying "result" or "error"
  // (Failure), or an object that breaks a rule.
  enum class Is : std::uint8_t { Request, Notification, Result, Failure, Invalid };
  Is is = Is::Invalid;
  // For Invalid (invalid_of() makes it): the rule broken, as the text after
  // "Invalid Request: "; the kind of the member whose type is wrong, named in
  // the message (Absent: none); whether it is answered (Invalid::reply);
  // whether it carries the message's id (§5: else null); and
  // Invalid::foreign and Invalid::call.
  const char* rule = nullptr;
  MemberKind got = MemberKind::Absent;
  bool reply = true, echo_id = false, foreign = false, call = false;
};

// Applies §4 (Request, Notification, Parameter Structures), §5 and §5.1
// (Response, Error object) to a Shape. An "id" is usable when it is a
// string, a number or null (§4); other members JSON-RPC does not define
// were never looked at.
Verdict judge(const Shape& s);
// A response's "metrics" member as docs/protocol.md ("Metrics") reads it:
// {"processing_time_us": uint, "response_size": uint}; anything else is
// ignored (nullopt) rather than making the response invalid.
std::optional<ResponseMetrics> response_metrics(const json& m);
// The Invalid of an Invalid verdict; `id` is the message's id when
// v.echo_id, else null.
Invalid invalid_of(const Verdict& v, Id id);

// Validates one message object given as its members (rules as classify()).
// Moves method and payloads out of `e`.
Item classify(Envelope&& e);
// A top-level value or batch element that is not an object: always Invalid
// (§4: "A rpc call is represented by sending a Request object").
Item classify_non_object(const json& v);
// §6: a batch must be a non-empty array; weft also bounds its length.
// Applied to a batch of `n` elements classified in `in.items` (all of them,
// unless batch_past_answering(n, max_batch)); sets `in.checked`. An empty
// batch becomes one Invalid with id null. A batch longer than `max_batch` is
// not run: §6 lets a server answer a batch element by element, so each call
// in it (a request, or an invalid call whose id could be read) is answered
// -32600 with its own id, and the caller's calls settle at once instead of
// waiting on an id-null error that no call can claim (docs/protocol.md); its
// notifications and other invalid elements go unanswered, and its responses
// are kept (they answer calls this side made). A batch holding no call nor
// response, or longer than twice `max_batch` (refusing each of its calls
// would cost more than serving a batch within the limit), is one Invalid
// with id null.
void check_batch(Incoming& in, std::size_t n, std::size_t max_batch);
// Whether a batch of `n` elements is too long to refuse call by call.
bool batch_past_answering(std::size_t n, std::size_t max_batch);

// Validates a document per JSON-RPC 2.0 §4–§6. Never fails: violations become
// `Invalid` items. Rules enforced: "jsonrpc" must be exactly "2.0"; "method" a
// string; "params", if present, an array or object; "id", if present, a
// string, number (finite: JSON has no NaN or infinity) or null; a response has exactly one of "result"/"error",
// and an error object an integer "code" and string "message". A top-level
// value that is neither object nor array is one Invalid; so is an empty array.
// Batch length as check_batch() says.
Incoming classify(const Document& doc, std::size_t max_batch = 1u << 16);
// The same, moving method names and payloads out of `doc` instead of copying
// them (what Peer::receive(Document&&) uses on the hot path).
Incoming classify(Document&& doc, std::size_t max_batch = 1u << 16);

// What the endpoint hands to the transport: one message, or a batch (§6).
struct Outgoing {
  // The messages, and whether they go out as one batch (§6) or one message.
  std::vector<Message> messages;
  bool batch = false;
};

// JSON text of a message: {"jsonrpc":"2.0",...} with members in spec order
// ("method","params","id" / "result"|"error","id"). Strings with invalid UTF-8
// are written with U+FFFD replacements rather than failing.
void write_json(const Message& m, std::string& out);
void write_json(const Outgoing& o, std::string& out);
std::string to_json_text(const Message& m);

// A message as a json value (for codecs other than JSON; ids per Id::to_json).
json to_json_value(const Message& m);

}  // namespace weft
