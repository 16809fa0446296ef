// Private to parse.cpp, its one includer: the JSON Parser's class, the state
// of one parse (the open containers, the value for the sink, the current
// member) and its inline helpers. Its methods are defined in parse.cpp, in the
// same translation unit and with internal linkage (the anonymous namespace),
// so that the compiler can inline the ones run() calls per value and per
// member: the native build has no link-time optimisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/lex.h"
#include "json/parse.h"
#include "json/pool.h"

namespace weft::detail {
namespace {

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

}  // namespace
}  // namespace weft::detail
