// The JSON decoder's state machine and token readers (Parser, parser.h) and
// parse_json for a sink: see parse.h for the contract and why it exists.
#include "json/parse.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "json/lex.h"
#include "json/parser.h"
#include "json/scan.h"
#include "json/utf8.h"

namespace weft::detail {
namespace {

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

}  // namespace weft::detail
