// The MessagePack codec.
//
// Decoding uses msgpack-cxx's visitor parser (msgpack::parse with a visitor,
// API v3), which reports each value as it is read; JsonBuilder below turns the
// calls straight into a json value (no msgpack::object, no zone). Everything a
// JSON-RPC message may hold must also be representable as JSON text, because
// codec.h promises that a message decodes to the same value with either
// codec. Hence:
//   nil → null, bool → boolean, positive int → number_unsigned, negative int →
//   number_integer (a signed-format int that is >= 0 becomes number_unsigned,
//   exactly as JSON "5" does), float32/float64 → number_float, str → string,
//   array → array, map → object;
//   str must be valid UTF-8 (RFC 8259 §8.1)                       → -32700
//   map keys must be str (JSON object names are strings)          → -32700
//   NaN/±Infinity floats have no JSON form (RFC 8259 §6)          → -32700
//   ext values are not supported (no JSON form, no agreed meaning) → -32700
//   bin → json::binary_t: MessagePack's one extension over JSON (codec.h).
// Nesting deeper than CodecLimits::max_depth stops the parse (-32600, the
// same message as the JSON codec's).
//
// No exceptions: the visitor records errors instead of throwing, and the one
// `throw` on msgpack-cxx's visitor path — check_ext_size<4>, an ext32 whose
// length is 0xffffffff on a 32-bit size_t, i.e. WebAssembly — is avoided by
// ext32_overflow_at() below. (Allocation failure aside.)
//
// Encoding walks the Message directly (envelope keys in spec order, then the
// json payload) with msgpack::packer into the caller's std::string.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <msgpack.hpp>

#include "weft/codec.h"
#include "json/parse.h"  // nesting_too_deep: one wording for both codecs
#include "json/utf8.h"

namespace weft {
namespace {

// ---------------------------------------------------------------------------
// UTF-8 validation by the core's one rule (utf8.h), as for JSON strings.
// Returns the index of the lead byte of the first bad sequence, or npos.
std::size_t invalid_utf8_at(const unsigned char* s, std::size_t n) {
  std::size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    std::size_t bad = 0;
    const std::size_t len = detail::utf8_sequence(s + i, s + n, bad);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

// ---------------------------------------------------------------------------
// msgpack-cxx (v3 parse.hpp, check_ext_size<4>) throws ext_size_overflow when
// an ext32 header announces 0xffffffff bytes and size_t is 32 bits, before any
// visitor callback can refuse it. To stay exception-free on every platform,
// such a header is located first (only if the byte pattern c9 ff ff ff ff
// occurs at all) by walking the value's structure without building anything.
// Returns its offset, or npos if the first value contains none.
// Whether the bytes c9 ff ff ff ff occur in p[0, len). memchr finds each c9;
// in a run of c9 bytes only the last can start the pattern, so the run is
// skipped in a tight loop (string_view::find called memchr once per byte of
// such a run: a 64 KiB `bin` of 0xc9 cost 2.9 M instructions to scan).
bool has_ext32_max_header(const unsigned char* p, std::size_t len) {
  const unsigned char* const e = p + len;
  const unsigned char* q = p;
  while (e - q >= 5) {
    q = static_cast<const unsigned char*>(std::memchr(q, 0xc9, static_cast<std::size_t>(e - q) - 4));
    if (!q) return false;
    while (e - q >= 6 && q[1] == 0xc9) ++q;
    if (e - q >= 5 && q[1] == 0xff && q[2] == 0xff && q[3] == 0xff && q[4] == 0xff) return true;
    ++q;
  }
  return false;
}

std::size_t ext32_overflow_at(const unsigned char* p, std::size_t len) {
  if (!has_ext32_max_header(p, len)) return std::string_view::npos;

  auto be = [&](std::size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) v = (v << 8) | p[at + k];
    return v;
  };
  constexpr std::uint64_t kCap = std::uint64_t{1} << 62;  // "more than can exist"
  std::uint64_t pending = 1;  // values still to be read
  std::size_t i = 0;
  while (pending > 0 && i < len) {
    const unsigned char b = p[i];
    --pending;
    std::size_t head = 1;        // header bytes, including b
    int len_bytes = 0;           // size of the length field after b
    std::uint64_t payload = 0;   // bytes after the header
    std::uint64_t children = 0;  // nested values that follow
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
    } else if (b >= 0xa0 && b <= 0xbf) {
      payload = b & 0x1f;
    } else if (b >= 0x90 && b <= 0x9f) {
      children = b & 0x0f;
    } else if (b >= 0x80 && b <= 0x8f) {
      children = 2u * (b & 0x0f);
    } else {
      switch (b) {
        case 0xc4: case 0xd9: len_bytes = 1; break;  // bin8, str8
        case 0xc5: case 0xda: len_bytes = 2; break;  // bin16, str16
        case 0xc6: case 0xdb: len_bytes = 4; break;  // bin32, str32
        case 0xc7: len_bytes = 1; payload = 1; break;  // ext8: + type byte
        case 0xc8: len_bytes = 2; payload = 1; break;  // ext16
        case 0xc9: len_bytes = 4; payload = 1; break;  // ext32
        case 0xca: case 0xce: case 0xd2: payload = 4; break;
        case 0xcb: case 0xcf: case 0xd3: payload = 8; break;
        case 0xcc: case 0xd0: payload = 1; break;
        case 0xcd: case 0xd1: payload = 2; break;
        case 0xd4: payload = 2; break;   // fixext 1
        case 0xd5: payload = 3; break;   // fixext 2
        case 0xd6: payload = 5; break;   // fixext 4
        case 0xd7: payload = 9; break;   // fixext 8
        case 0xd8: payload = 17; break;  // fixext 16
        case 0xdc: case 0xde: len_bytes = 2; break;  // array16, map16
        case 0xdd: case 0xdf: len_bytes = 4; break;  // array32, map32
        default: return std::string_view::npos;      // 0xc1: the parser reports it
      }
    }
    head += static_cast<std::size_t>(len_bytes);
    if (len - i < head) return std::string_view::npos;  // truncated: parser reports it
    if (len_bytes > 0) {
      const std::uint64_t n = be(i + 1, len_bytes);
      if (b == 0xc9 && n == 0xffffffffu) return i;
      if (b == 0xdc || b == 0xdd) children = n;
      else if (b == 0xde || b == 0xdf) children = 2 * n;
      else payload += n;
    }
    if (payload > len - i - head) return std::string_view::npos;
    i += head + static_cast<std::size_t>(payload);
    pending = pending + children > kCap ? kCap : pending + children;
  }
  return std::string_view::npos;
}

// ---------------------------------------------------------------------------
// Builds the json value from msgpack-cxx visitor callbacks. Returning false
// stops the parser (PARSE_STOP_VISITOR); the reason is kept in `problem_`.
class JsonBuilder : public msgpack::null_visitor {
 public:
  enum class Problem { None, Depth, Utf8, KeyType, NonFinite, Ext, Syntax, Truncated };

  JsonBuilder(std::size_t max_depth, std::size_t input_size)
      : max_depth_(max_depth), input_size_(input_size) {
    stack_.reserve(16);
  }

  json& root() { return root_; }
  Problem problem() const { return problem_; }
  std::size_t detail_offset() const { return detail_; }

  bool visit_nil() { return put(json(nullptr)); }
  bool visit_boolean(bool v) { return put(json(v)); }
  bool visit_positive_integer(std::uint64_t v) { return put(json(v)); }
  bool visit_negative_integer(std::int64_t v) {
    // Signed formats may carry non-negative values; type them as JSON would.
    if (v >= 0) return put(json(static_cast<std::uint64_t>(v)));
    return put(json(v));
  }
  bool visit_float32(float v) { return visit_float64(static_cast<double>(v)); }
  bool visit_float64(double v) {
    if (!std::isfinite(v)) return stop(Problem::NonFinite);
    return put(json(v));
  }
  bool visit_str(const char* v, std::uint32_t size) {
    const auto* u = reinterpret_cast<const unsigned char*>(v);
    const std::size_t bad = size ? invalid_utf8_at(u, size) : std::string_view::npos;
    if (bad != std::string_view::npos) {
      // The parser's stop offset is the string's last byte; remember how far
      // before that the bad byte is.
      detail_ = size - 1 - bad;
      return stop(Problem::Utf8);
    }
    std::string s = size ? std::string(v, size) : std::string();
    if (expecting_key()) {
      stack_.back().key = std::move(s);
      return true;
    }
    return put(json(std::move(s)));
  }
  bool visit_bin(const char* v, std::uint32_t size) {
    const auto* u = reinterpret_cast<const std::uint8_t*>(v);
    // json::binary(vector&&) moves the bytes in; json(binary_t&&) would copy
    // them again (nlohmann's to_json takes a binary_t by const reference),
    // which the profile of a 64 KiB `bin` stream showed as a third of the
    // receiver's instructions.
    return put(json::binary(size ? std::vector<std::uint8_t>(u, u + size) : std::vector<std::uint8_t>()));
  }
  bool visit_ext(const char*, std::uint32_t) { return stop(Problem::Ext); }

  bool start_array(std::uint32_t n) { return open(json::value_t::array, n); }
  bool start_map(std::uint32_t n) { return open(json::value_t::object, n); }
  bool end_array() { return close(); }
  bool end_map() { return close(); }
  bool start_map_key() {
    stack_.back().expect_key = true;
    return true;
  }
  bool start_map_value() {
    stack_.back().expect_key = false;
    return true;
  }

  void parse_error(std::size_t, std::size_t) { stop(Problem::Syntax); }
  void insufficient_bytes(std::size_t, std::size_t) { stop(Problem::Truncated); }

 private:
  struct Frame {
    json* value;
    bool is_map;
    bool expect_key = false;
    std::string key;
  };

  bool expecting_key() const { return !stack_.empty() && stack_.back().expect_key; }

  bool stop(Problem p) {
    if (problem_ == Problem::None) problem_ = p;
    return false;
  }

  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (!f.is_map) {
      json::array_t* arr = f.value->get_ptr<json::array_t*>();
      arr->push_back(std::move(v));
      return &arr->back();
    }
    json& slot = (*f.value->get_ptr<json::object_t*>())[std::move(f.key)];
    slot = std::move(v);
    return &slot;
  }

  bool put(json&& v) {
    if (expecting_key()) return stop(Problem::KeyType);
    place(std::move(v));
    return true;
  }

  bool open(json::value_t type, std::uint32_t n) {
    if (expecting_key()) return stop(Problem::KeyType);
    // Depth counts the top level as 1 (codec.h).
    if (stack_.size() >= max_depth_) return stop(Problem::Depth);
    json* v = place(json(type));
    if (type == json::value_t::array) {
      // The count is the sender's claim: reserve at most a little (each
      // element takes at least one input byte, and nested arrays would
      // otherwise each reserve that much), and let growth handle the rest.
      constexpr std::uint32_t kMaxReserve = 64;
      std::size_t r = n < kMaxReserve ? n : kMaxReserve;
      v->get_ptr<json::array_t*>()->reserve(r < input_size_ ? r : input_size_);
    }
    stack_.push_back(Frame{v, type == json::value_t::object, false, std::string()});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  std::size_t max_depth_;
  std::size_t input_size_;
  json root_;
  std::vector<Frame> stack_;
  Problem problem_ = Problem::None;
  std::size_t detail_ = 0;
};

Error parse_error_at(std::size_t at, const char* what) {
  return Error(code::kParseError,
               "invalid MessagePack at byte " + std::to_string(at) + ": " + what);
}

// Appends to a std::string; the Stream msgpack::packer writes to.
struct StringSink {
  std::string& out;
  void write(const char* p, std::size_t n) { out.append(p, n); }
};
using Packer = msgpack::packer<StringSink>;

// Lengths are 32-bit in MessagePack; anything longer is cut (encode never
// fails, codec.h). Unreachable in practice: frames are far smaller.
std::uint32_t clamp32(std::size_t n) {
  return n > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(n);
}

void pack_str(Packer& pk, std::string_view s) {
  const std::uint32_t n = clamp32(s.size());
  pk.pack_str(n);
  pk.pack_str_body(s.data(), n);
}

void pack_value(Packer& pk, const json& v) {
  switch (v.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
      pk.pack_nil();
      return;
    case json::value_t::boolean:
      if (*v.get_ptr<const json::boolean_t*>()) pk.pack_true(); else pk.pack_false();
      return;
    case json::value_t::number_integer:  // smallest int format (packer picks it)
      pk.pack_int64(*v.get_ptr<const json::number_integer_t*>());
      return;
    case json::value_t::number_unsigned:
      pk.pack_uint64(*v.get_ptr<const json::number_unsigned_t*>());
      return;
    case json::value_t::number_float:  // always float64: no silent precision loss
      pk.pack_double(*v.get_ptr<const json::number_float_t*>());
      return;
    case json::value_t::string:
      pack_str(pk, *v.get_ptr<const json::string_t*>());
      return;
    case json::value_t::binary: {  // bin; a subtype, if any, is not carried
      const json::binary_t& b = *v.get_ptr<const json::binary_t*>();
      const std::uint32_t n = clamp32(b.size());
      pk.pack_bin(n);
      pk.pack_bin_body(reinterpret_cast<const char*>(b.data()), n);
      return;
    }
    case json::value_t::array: {
      const json::array_t& a = *v.get_ptr<const json::array_t*>();
      const std::uint32_t n = clamp32(a.size());
      pk.pack_array(n);
      for (std::uint32_t i = 0; i < n; ++i) pack_value(pk, a[i]);
      return;
    }
    case json::value_t::object: {
      const json::object_t& o = *v.get_ptr<const json::object_t*>();
      std::uint32_t n = clamp32(o.size());
      pk.pack_map(n);
      for (const auto& [k, x] : o) {
        if (n-- == 0) break;
        pack_str(pk, k);
        pack_value(pk, x);
      }
      return;
    }
  }
}

// Ids per Id::to_json (message.h): a Number id (kept as a lexeme for JSON)
// travels as float64 because MessagePack has no lexemes (codec.h).
void pack_id(Packer& pk, const Id& id) {
  switch (id.kind()) {
    case Id::Kind::Null: pk.pack_nil(); return;
    case Id::Kind::Int: pk.pack_int64(id.as_int()); return;
    case Id::Kind::Uint: pk.pack_uint64(id.as_uint()); return;
    case Id::Kind::String: pack_str(pk, id.text()); return;
    case Id::Kind::Number: pack_value(pk, id.to_json()); return;
  }
  pk.pack_nil();
}

void pack_error(Packer& pk, const Error& e) {  // §5.1 error object
  pk.pack_map(e.data ? 3 : 2);
  pack_str(pk, "code");
  pk.pack_int64(e.code);
  pack_str(pk, "message");
  pack_str(pk, e.message);
  if (e.data) {
    pack_str(pk, "data");
    pack_value(pk, *e.data);
  }
}

// The same members, in the same order, as write_json (message.h): §4 request
// "jsonrpc","method","params"?,"id"; §4.1 notification without "id"; §5
// response "jsonrpc","result"|"error","id".
// A response with metrics gets a fourth member "metrics" (docs/protocol.md,
// "Metrics"); its response_size is the bytes written for the other three
// (`out` is the buffer `pk` appends to: a fixmap header is one byte either way).
void pack_message(Packer& pk, const std::string& out, const Message& m) {
  const std::size_t start = out.size();
  if (const auto* r = std::get_if<Request>(&m)) {
    pk.pack_map(r->params ? 4 : 3);
    pack_str(pk, "jsonrpc");
    pack_str(pk, "2.0");
    pack_str(pk, "method");
    pack_str(pk, r->method);
    if (r->params) {
      pack_str(pk, "params");
      pack_value(pk, *r->params);
    }
    pack_str(pk, "id");
    pack_id(pk, r->id);
  } else if (const auto* n = std::get_if<Notification>(&m)) {
    pk.pack_map(n->params ? 3 : 2);
    pack_str(pk, "jsonrpc");
    pack_str(pk, "2.0");
    pack_str(pk, "method");
    pack_str(pk, n->method);
    if (n->params) {
      pack_str(pk, "params");
      pack_value(pk, *n->params);
    }
  } else if (const auto* s = std::get_if<Response>(&m)) {
    pk.pack_map(s->metrics ? 4 : 3);
    pack_str(pk, "jsonrpc");
    pack_str(pk, "2.0");
    if (const auto* e = std::get_if<Error>(&s->outcome)) {
      pack_str(pk, "error");
      pack_error(pk, *e);
    } else {
      pack_str(pk, "result");
      pack_value(pk, std::get<json>(s->outcome));
    }
    pack_str(pk, "id");
    pack_id(pk, s->id);
    if (s->metrics) {
      const std::uint64_t size = out.size() - start;
      pack_str(pk, "metrics");
      pk.pack_map(2);
      pack_str(pk, "processing_time_us");
      pk.pack_uint64(s->metrics->processing_time_us);
      pack_str(pk, "response_size");
      pk.pack_uint64(size);
    }
  }
}

class MsgpackCodec final : public Codec {
 public:
  explicit MsgpackCodec(CodecLimits limits) : limits_(limits) {}

  CodecKind kind() const override { return CodecKind::MessagePack; }

  Result<Document> decode(std::string_view bytes) const override {
    if (bytes.empty()) return parse_error_at(0, "empty input");
    const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::size_t ext32 = ext32_overflow_at(u, bytes.size());
    if (ext32 != std::string_view::npos) {
      // Parse only up to the offending header so that an earlier problem is
      // still reported first; reaching the header shows up as truncation.
      JsonBuilder::Problem problem;
      Result<Document> head = parse(bytes.substr(0, ext32 + 1), problem);
      if (problem != JsonBuilder::Problem::Truncated) return head;
      return parse_error_at(ext32, "ext values are not supported");
    }
    JsonBuilder::Problem problem;
    return parse(bytes, problem);
  }

  void encode(const Outgoing& out, std::string& buffer) const override {
    StringSink sink{buffer};
    Packer pk(sink);
    if (out.batch) pk.pack_array(clamp32(out.messages.size()));  // §6 batch
    for (const Message& m : out.messages) pack_message(pk, buffer, m);
  }

 private:
  Result<Document> parse(std::string_view bytes, JsonBuilder::Problem& problem) const {
    JsonBuilder builder(limits_.max_depth, bytes.size());
    std::size_t off = 0;
    const bool ok = msgpack::parse(bytes.data(), bytes.size(), off, builder);
    using P = JsonBuilder::Problem;
    problem = builder.problem();
    // For a stopped parse `off` is the last byte of the value being visited.
    switch (builder.problem()) {
      case P::None:
        break;
      case P::Depth:
        return detail::nesting_too_deep(limits_.max_depth);
      case P::Utf8:
        return parse_error_at(off - builder.detail_offset(), "invalid UTF-8 in str");
      case P::KeyType:
        return parse_error_at(off, "map key must be a string");
      case P::NonFinite:
        return parse_error_at(off, "NaN and Infinity have no JSON representation");
      case P::Ext:
        return parse_error_at(off, "ext values are not supported");
      case P::Syntax:  // 0xc1, the one unassigned type byte
        return parse_error_at(off, "invalid type byte 0xc1");
      case P::Truncated:
        return parse_error_at(bytes.size(), "input truncated (value incomplete)");
    }
    if (!ok) return parse_error_at(off, "malformed input");
    if (off < bytes.size())
      return parse_error_at(off, "trailing bytes after the value");
    Document doc;
    doc.value = std::move(builder.root());
    return doc;
  }

  CodecLimits limits_;
};

}  // namespace

namespace detail {
std::unique_ptr<Codec> make_msgpack_codec(CodecLimits limits) {
  return std::make_unique<MsgpackCodec>(limits);
}
}  // namespace detail

}  // namespace weft
