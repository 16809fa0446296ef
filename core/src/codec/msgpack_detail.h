// Private: what the MessagePack codec (msgpack.cpp) uses from its two helpers:
// the ext32 pre-scan (msgpack_ext32.cpp) and the encoder (msgpack_encode.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <msgpack.hpp>

#include "weft/message.h"

namespace weft::detail {

// msgpack-cxx (v3 parse.hpp, check_ext_size<4>) throws ext_size_overflow when
// an ext32 header announces 0xffffffff bytes and size_t is 32 bits, before any
// visitor callback can refuse it. To stay exception-free on every platform,
// such a header is located first (only if the byte pattern c9 ff ff ff ff
// occurs at all) by walking the value's structure without building anything.
// Returns its offset, or npos if the first value contains none.
std::size_t ext32_overflow_at(const unsigned char* p, std::size_t len);

// Appends to a std::string; the Stream msgpack::packer writes to.
struct StringSink {
  std::string& out;
  void write(const char* p, std::size_t n) { out.append(p, n); }
};
// msgpack-c's packer, plus what it lacks: a float64 that stays one.
struct Packer : msgpack::packer<StringSink> {
  explicit Packer(StringSink& s) : msgpack::packer<StringSink>(s), sink(s) {}
  StringSink& sink;
  // Any double, always as float64 (0xcb): msgpack-c's pack_double packs an
  // integral double as an integer, which changes an id's type (a float64
  // id 1.0 answered as 1, -0.0 as 0) and decodes to another JSON value.
  void float64(double d) {
    std::uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    char b[9] = {static_cast<char>(0xcb)};
    for (int i = 0; i < 8; ++i) b[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
    sink.write(b, sizeof b);
  }
  // Set when a value had a NaN or an infinity (written as float64 all the
  // same): no JSON form, and decode() refuses it; encode() reports it.
  bool non_finite = false;
};

// Lengths are 32-bit in MessagePack; anything longer is cut (encode fails
// only for a NaN or an infinity, codec.h). Unreachable in practice: frames
// are far smaller.
inline std::uint32_t clamp32(std::size_t n) {
  return n > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(n);
}

// The same members, in the same order, as write_json (message.h): §4 request
// "jsonrpc","method","params"?,"id"; §4.1 notification without "id"; §5
// response "jsonrpc","result"|"error","id".
// A response with metrics gets a fourth member "metrics" (docs/protocol.md,
// "Metrics"); its response_size is the bytes written for the other three
// (`out` is the buffer `pk` appends to: a fixmap header is one byte either way).
void pack_message(Packer& pk, const std::string& out, const Message& m);

}  // namespace weft::detail
