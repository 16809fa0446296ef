// The JSON decoder: see json_parse.h for the contract and why it exists.
#include "json/parse.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "json/pool.h"
#include "json/scan.h"
#include "json/utf8.h"

#if !defined(_LIBCPP_VERSION)
#include <charconv>
#define WEFT_FLOAT_FROM_CHARS 1  // libstdc++ has it; libc++ 14 (Emscripten 3.1.6) does not
#else
#include <clocale>
#endif

namespace weft::detail {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A byte for an error message: 'c' when printable ASCII, else \xHH (the
// message travels inside a JSON error object; raw bad bytes must not).
std::string show(unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  return std::string("\\x") + kHex[c >> 4] + kHex[c & 0xf];
}

double to_double(const char* b, const char* e, bool& ok) {
#ifdef WEFT_FLOAT_FROM_CHARS
  double d = 0;
  auto r = std::from_chars(b, e, d);
  if (r.ec == std::errc()) {
    ok = std::isfinite(d);
    return d;
  }
  // Out of range: overflow (refused: RFC 8259 §6 lets us) or underflow, which
  // strtod rounds to zero or a subnormal as every JSON parser does; ask it.
  std::string s(b, e);
  d = std::strtod(s.c_str(), nullptr);
  ok = std::isfinite(d);
  return d;
#else
  // strtod reads the C locale's decimal point; a host may have set another.
  std::string s(b, e);
  const char point = *std::localeconv()->decimal_point;
  if (point != '.')
    for (char& c : s)
      if (c == '.') c = point;
  double d = std::strtod(s.c_str(), nullptr);
  ok = std::isfinite(d);
  return d;
#endif
}

class Parser {
 public:
  Parser(std::string_view text, std::size_t max_depth, EnvelopeSink& sink)
      : b_(text.data()), p_(text.data()), e_(text.data() + text.size()), max_depth_(max_depth), sink_(sink) {}

  bool run();
  Error take_error() { return std::move(error_); }

 private:
  enum class Kind : std::uint8_t {
    Batch,       // the document's array: elements go to the sink
    Members,     // an object at the envelope level: members go to the sink
    Array,       // built into `array`
    Object,      // built into `object`
    SkipArray,   // checked, not built (inside a member the sink did not want)
    SkipObject,
  };
  static bool is_array(Kind k) { return k == Kind::Batch || k == Kind::Array || k == Kind::SkipArray; }
  // No default member initializers: FrameStack's local frames stay
  // uninitialized until pushed.
  struct Frame {
    Kind kind;
    json::array_t* array;
    json::object_t* object;
  };

  std::size_t at() const { return static_cast<std::size_t>(p_ - b_); }
  bool fail(std::size_t pos, std::string what) {
    error_ = Error(code::kParseError, "invalid JSON at byte " + std::to_string(pos) + ": " + what);
    return false;
  }
  // An unexpected byte where `expected` should be.
  bool unexpected(const char* expected) {
    if (p_ == e_) return fail(at(), std::string("unexpected end of input; expected ") + expected);
    const unsigned char c = static_cast<unsigned char>(*p_);
    std::string what;
    if (std::strchr("{}[]:,", c) && c)
      what = "unexpected " + show(c);
    else if (c == '"' || c == '-' || (c >= '0' && c <= '9'))
      what = "unexpected value";
    else
      what = "invalid literal " + show(c);
    return fail(at(), what + "; expected " + expected);
  }

  // RFC 8259 §2 whitespace. Every JSON whitespace byte is <= ' ', so one
  // compare settles the usual case (no whitespace: machine-written JSON).
  void ws() {
    while (p_ < e_ && static_cast<unsigned char>(*p_) <= ' ' &&
           (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t'))
      ++p_;
  }

  bool value(json* out);
  bool string(std::string_view& out, std::string& buf);
  bool escape(std::string& out);
  bool number(json* out);
  bool literal(const char* word, std::size_t n, json v, json* out);
  bool open(bool object);
  void close();
  void next_element();
  bool member_key();
  void completed();

  const char* b_;
  const char* p_;
  const char* e_;
  std::size_t max_depth_;
  EnvelopeSink& sink_;
  ObjectPool& pool_ = object_pool();  // maps and nodes for the objects built
  // The open containers. The first levels live in the parser itself, so a
  // message of ordinary depth costs no allocation for them (the profile of
  // small calls showed this vector's one malloc per message).
  class FrameStack {
   public:
    bool empty() const { return n_ == 0; }
    std::size_t size() const { return n_; }
    Frame& operator[](std::size_t i) { return i < kLocal ? local_[i] : heap_[i - kLocal]; }
    Frame& back() { return (*this)[n_ - 1]; }
    void push_back(const Frame& f) {
      if (n_ < kLocal) local_[n_] = f;
      else heap_.push_back(f);
      ++n_;
    }
    void pop_back() {
      if (--n_ >= kLocal) heap_.pop_back();
    }

   private:
    static constexpr std::size_t kLocal = 16;
    Frame local_[kLocal];
    std::vector<Frame> heap_;
    std::size_t n_ = 0;
  };
  FrameStack stack_;
  json* slot_ = nullptr;          // where the next value goes; nullptr: check it only
  json value_;                    // a value for the sink (document, element or member)
  // ... or, when that value is a string, its text (value_ is then unused).
  std::string_view text_;
  bool is_text_ = false;
  std::string_view key_;          // the name of the envelope-level member being read
  bool want_ = false;             // ... and whether the sink wants its value
  bool evented_ = false;          // the value just completed was reported as events
  std::string_view number_text_;  // the last number that is not a 64-bit integer
  // Where strings with escapes are decoded (an escape-free string is a view
  // of the input): key_'s own, since key_ must outlive its member's value.
  std::string key_buf_;
  std::string scratch_;
  Error error_;
};

bool Parser::run() {
  if (p_ == e_) return fail(0, "empty input");
  if (e_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;
  ws();
  if (p_ == e_) return fail(at(), "unexpected end of input");
  slot_ = &value_;
  for (;;) {
    // A value goes into *slot_ (or is checked only).
    ws();
    if (p_ == e_) return fail(at(), "unexpected end of input; expected a value");
    const char c = *p_;
    evented_ = false;
    is_text_ = false;
    if (c == '{' || c == '[') {
      if (!open(c == '{')) return false;
      ws();
      if (p_ < e_ && *p_ == (c == '{' ? '}' : ']')) {
        ++p_;
        close();
      } else if (c == '[') {
        next_element();
        continue;
      } else {
        if (!member_key()) return false;
        continue;
      }
    } else if (!value(slot_)) {
      return false;
    }
    // The value is complete: a separator, a close, or the end.
    for (;;) {
      completed();
      if (stack_.empty()) {
        ws();
        if (p_ != e_) return fail(at(), "expected end of input, got " + show(static_cast<unsigned char>(*p_)));
        return true;
      }
      ws();
      const Kind k = stack_.back().kind;
      if (p_ == e_) return fail(at(), "unexpected end of input; expected ',' or a closing bracket");
      if (*p_ == ',') {
        ++p_;
        if (is_array(k)) {
          next_element();
        } else {
          ws();
          if (!member_key()) return false;
        }
        break;
      }
      if (is_array(k) ? *p_ == ']' : *p_ == '}') {
        ++p_;
        close();
        continue;
      }
      return unexpected(is_array(k) ? "',' or ']' after an array element" : "',' or '}' after an object member");
    }
  }
}

bool Parser::open(bool object) {
  // Depth counts the top level as 1 (codec.h), so the container about to open
  // is at depth stack_.size() + 1. Stop here: nothing deeper is built.
  if (stack_.size() >= max_depth_) {
    error_ = nesting_too_deep(max_depth_);
    return false;
  }
  ++p_;
  // The envelope level: the document, or an element of the document array.
  const bool envelope = stack_.empty() || (stack_.size() == 1 && stack_[0].kind == Kind::Batch);
  if (envelope && object) {
    sink_.begin_object();
    stack_.push_back(Frame{Kind::Members, nullptr, nullptr});
  } else if (envelope && stack_.empty()) {
    sink_.begin_array();
    stack_.push_back(Frame{Kind::Batch, nullptr, nullptr});
  } else if (!slot_) {
    stack_.push_back(Frame{object ? Kind::SkipObject : Kind::SkipArray, nullptr, nullptr});
  } else if (object) {
    pool_.make_object(*slot_);
    stack_.push_back(Frame{Kind::Object, nullptr, slot_->get_ptr<json::object_t*>()});
  } else {
    *slot_ = json::array();
    stack_.push_back(Frame{Kind::Array, slot_->get_ptr<json::array_t*>(), nullptr});
  }
  return true;
}

// After the closing bracket: the container is the value just completed.
void Parser::close() {
  const Kind k = stack_.back().kind;
  stack_.pop_back();
  evented_ = k == Kind::Members || k == Kind::Batch;
  if (k == Kind::Members) sink_.end_object();
  if (k == Kind::Batch) sink_.end_array();
}

// Points slot_ at the next element of the innermost array.
void Parser::next_element() {
  Frame& f = stack_.back();
  if (f.kind == Kind::Batch) {
    slot_ = &value_;
  } else if (f.kind == Kind::Array) {
    f.array->emplace_back();
    slot_ = &f.array->back();
  } else {
    slot_ = nullptr;
  }
}

// A value is complete; what its container makes of it.
void Parser::completed() {
  if (evented_) return;  // an envelope-level container: already reported
  const Kind k = stack_.empty() ? Kind::Batch : stack_.back().kind;
  if (k == Kind::Batch) {  // the document, or an element of the document array
    if (is_text_) value_ = std::string(text_);
    sink_.value(std::move(value_));
  } else if (k == Kind::Members && want_) {
    want_ = false;
    if (is_text_) return sink_.member_text(key_, text_);
    const std::string_view text = value_.is_number_float() ? number_text_ : std::string_view();
    sink_.member(key_, std::move(value_), text);
  }
}

// At the '"' of a member name: reads it and the ':' and points slot_ at the member.
bool Parser::member_key() {
  if (p_ == e_ || *p_ != '"') return unexpected("a string member name");
  Frame& f = stack_.back();
  std::string_view name;
  if (!string(name, f.kind == Kind::Members ? key_buf_ : scratch_)) return false;
  ws();
  if (p_ == e_ || *p_ != ':') return unexpected("':' after a member name");
  ++p_;
  if (f.kind == Kind::Members) {
    key_ = name;
    want_ = sink_.want(key_);
    slot_ = want_ ? &value_ : nullptr;
  } else if (f.kind == Kind::Object) {
    slot_ = &pool_.member(*f.object, name);  // a repeat: last wins
  } else {
    slot_ = nullptr;
  }
  return true;
}

bool Parser::value(json* out) {
  switch (*p_) {
    case '"': {
      std::string_view s;
      if (!string(s, scratch_)) return false;
      if (out == &value_) {  // for the sink: completed() decides what to build
        text_ = s;
        is_text_ = true;
      } else if (out) {
        *out = std::string(s);
      }
      return true;
    }
    case 't': return literal("true", 4, json(true), out);
    case 'f': return literal("false", 5, json(false), out);
    case 'n': return literal("null", 4, json(nullptr), out);
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return number(out);
    default: return unexpected("a value");
  }
}

bool Parser::literal(const char* word, std::size_t n, json v, json* out) {
  for (std::size_t i = 0; i < n; ++i, ++p_) {
    if (p_ == e_) return fail(at(), std::string("unexpected end of input; expected '") + word + "'");
    if (*p_ != word[i])
      return fail(at(), "invalid literal: " + show(static_cast<unsigned char>(*p_)) + " where '" + word + "' was expected");
  }
  if (out) *out = std::move(v);
  return true;
}

// RFC 8259 §6: number = [ minus ] int [ frac ] [ exp ]; int = zero / ( digit1-9 *DIGIT ).
bool Parser::number(json* out) {
  const char* start = p_;
  const bool neg = *p_ == '-';
  if (neg) ++p_;
  if (p_ == e_ || *p_ < '0' || *p_ > '9') return unexpected("a digit after '-'");
  std::uint64_t mag = 0;
  bool fits = true;
  if (*p_ == '0') {
    ++p_;
  } else {
    while (p_ < e_ && *p_ >= '0' && *p_ <= '9') {
      const unsigned d = static_cast<unsigned>(*p_ - '0');
      if (mag > (UINT64_MAX - d) / 10) fits = false;
      mag = mag * 10 + d;
      ++p_;
    }
  }
  bool integral = true;
  if (p_ < e_ && *p_ == '.') {
    integral = false;
    ++p_;
    if (p_ == e_ || *p_ < '0' || *p_ > '9') return unexpected("a digit after '.'");
    while (p_ < e_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }
  if (p_ < e_ && (*p_ == 'e' || *p_ == 'E')) {
    integral = false;
    ++p_;
    if (p_ < e_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ == e_ || *p_ < '0' || *p_ > '9') return unexpected("a digit in the exponent");
    while (p_ < e_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }
  if (integral && fits) {
    if (!neg) {
      if (out) *out = json(static_cast<json::number_unsigned_t>(mag));
      return true;
    }
    if (mag <= static_cast<std::uint64_t>(INT64_MAX) + 1) {
      if (out) *out = json(static_cast<json::number_integer_t>(0 - mag));
      return true;
    }
  }
  // A fraction, an exponent, or an integer too large for 64 bits.
  bool ok = false;
  const double d = to_double(start, p_, ok);
  if (!ok)
    return fail(at() - 1, "number overflow: " +
                              std::string(start, static_cast<std::size_t>(std::min<std::ptrdiff_t>(p_ - start, 40))));
  // A double cannot say how it was spelled; its source text can (EnvelopeSink::member).
  number_text_ = std::string_view(start, static_cast<std::size_t>(p_ - start));
  if (out) *out = json(d);
  return true;
}

// At the opening quote. `out` is a view of the input when the string has no
// escape (the usual case: nothing is copied), else of `buf`, where it is decoded.
bool Parser::string(std::string_view& out, std::string& buf) {
  ++p_;
  const char* const start = p_;
  bool copied = false;  // the text so far is in buf
  for (;;) {
    // A run of plain bytes and well-formed UTF-8 sequences, appended at once.
    const char* run = p_;
    for (;;) {
      p_ = find_special(p_, e_);
      // Non-ASCII text is sequence after sequence: check them back to back
      // rather than going through the scanner for each one.
      while (p_ < e_ && static_cast<unsigned char>(*p_) >= 0x80) {
        std::size_t bad = 0;
        const std::size_t n = utf8_sequence(reinterpret_cast<const unsigned char*>(p_),
                                            reinterpret_cast<const unsigned char*>(e_), bad);
        if (n == 0) {
          p_ += bad;
          if (p_ == e_) return fail(at(), "invalid string: missing closing quote (input ends inside a UTF-8 sequence)");
          return fail(at(), "invalid string: ill-formed UTF-8 byte " + show(static_cast<unsigned char>(*p_)));
        }
        p_ += n;
      }
      if (p_ == e_ || is_special(static_cast<unsigned char>(*p_))) break;
    }
    if (p_ == e_) return fail(at(), "invalid string: missing closing quote");
    const unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      if (copied) {
        buf.append(run, static_cast<std::size_t>(p_ - run));
        out = buf;
      } else {
        out = std::string_view(start, static_cast<std::size_t>(p_ - start));
      }
      ++p_;
      return true;
    }
    if (c == '\\') {
      if (!copied) {
        buf.clear();
        copied = true;
      }
      buf.append(run, static_cast<std::size_t>(p_ - run));
      if (!escape(buf)) return false;
      continue;
    }
    return fail(at(), "invalid string: control character " + show(c) + " must be escaped");
  }
}

// At a backslash (RFC 8259 §7).
bool Parser::escape(std::string& out) {
  ++p_;
  if (p_ == e_) return fail(at(), "invalid string: missing closing quote");
  const char c = *p_++;
  switch (c) {
    case '"': out += '"'; return true;
    case '\\': out += '\\'; return true;
    case '/': out += '/'; return true;
    case 'b': out += '\b'; return true;
    case 'f': out += '\f'; return true;
    case 'n': out += '\n'; return true;
    case 'r': out += '\r'; return true;
    case 't': out += '\t'; return true;
    case 'u': break;
    default: --p_; return fail(at(), "invalid string: bad escape, backslash followed by " + show(static_cast<unsigned char>(c)));
  }
  auto hex4 = [&](std::uint32_t& v) {
    v = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      const int d = p_ < e_ ? hex_digit(*p_) : -1;
      if (d < 0) return fail(at(), "invalid string: '\\u' must be followed by 4 hex digits");
      v = v * 16 + static_cast<std::uint32_t>(d);
    }
    return true;
  };
  std::uint32_t cp;
  if (!hex4(cp)) return false;
  if (cp >= 0xDC00 && cp <= 0xDFFF)
    return fail(at(), "invalid string: low surrogate \\u" + std::string(p_ - 4, 4) + " without a high one before it");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    // A high surrogate must be followed by an escaped low one (RFC 8259 §7).
    if (e_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
      return fail(at(), "invalid string: surrogate \\u" + std::string(p_ - 4, 4) +
                            " must be followed by a low surrogate escape");
    p_ += 2;
    std::uint32_t lo;
    if (!hex4(lo)) return false;
    if (lo < 0xDC00 || lo > 0xDFFF)
      return fail(at(), "invalid string: surrogate pair needs a low surrogate, got \\u" + std::string(p_ - 4, 4));
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  append_utf8(cp, out);
  return true;
}

}  // namespace

Result<void> parse_json(std::string_view text, std::size_t max_depth, EnvelopeSink& sink) {
  Parser p(text, max_depth, sink);
  if (!p.run()) return p.take_error();
  return {};
}

void ValueBuilder::begin_array() {
  root_ = json::array();
  array_ = root_.get_ptr<json::array_t*>();
}

void ValueBuilder::begin_object() {
  json* o = &root_;
  if (array_) o = &array_->emplace_back();
  *o = json::object();
  object_ = o->get_ptr<json::object_t*>();
}

void ValueBuilder::member(std::string_view name, json&& value, std::string_view) {
  // A repeated name replaces the earlier value: last wins.
  (*object_)[std::string(name)] = std::move(value);
}

void ValueBuilder::member_text(std::string_view name, std::string_view text) {
  member(name, json(std::string(text)), {});
}

void ValueBuilder::value(json&& v) {
  if (array_) array_->push_back(std::move(v));
  else root_ = std::move(v);
}

Result<json> parse_json(std::string_view text, std::size_t max_depth) {
  ValueBuilder b;
  if (Result<void> r = parse_json(text, max_depth, b); !r) return r.error();
  return b.take();
}

}  // namespace weft::detail
