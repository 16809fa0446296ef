// message_writer.h — the fuzz targets' own JSON-RPC messages written
// straight to JSON text or MessagePack bytes.
//
// Contract: for the same members given in key order, the bytes are exactly
// what nlohmann::json's dump() / to_msgpack() produce (so committed seeds
// keep their meaning). Strings are written unescaped: only for our own
// method names and keys. Maps and arrays take their element count up front
// (MessagePack needs it); end() closes the innermost one.
//
// Why not build nlohmann::json values and dump them: in fuzz_peer that cost
// about a third of every execution, mostly allocations, which ASan makes
// ten times dearer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weft/codec.h"

namespace fuzz {

class Writer {
 public:
  explicit Writer(weft::CodecKind k) : mp_(k == weft::CodecKind::MessagePack) {}
  // What was written so far; the writer starts anew.
  std::string take() {
    std::string s;
    s.swap(out_);
    return s;
  }
  Writer& map(std::size_t n) { return open('{', 0x80, 0xde, n); }
  Writer& array(std::size_t n) { return open('[', 0x90, 0xdc, n); }
  Writer& end() {
    if (!mp_) out_ += open_.back() ? '}' : ']';
    open_.pop_back();
    count_.pop_back();
    return *this;
  }
  Writer& key(std::string_view k) {
    str(k);
    if (!mp_) out_ += ':';
    after_key_ = true;
    return *this;
  }
  Writer& str(std::string_view v) {
    value();
    if (mp_) {
      head(0xa0, 32, 0xd9, v.size());
      out_.append(v);
    } else {
      out_ += '"';
      out_.append(v);  // only our own method names and keys: nothing to escape
      out_ += '"';
    }
    return *this;
  }
  Writer& num(std::int64_t v) {
    value();
    if (!mp_) {
      out_ += std::to_string(v);
    } else if (v >= 0 && v < 128) {
      out_ += char(v);
    } else if (v < 0 && v >= -32) {
      out_ += char(v);
    } else if (v >= 0) {  // as to_msgpack: the smallest unsigned form
      const std::uint64_t u = std::uint64_t(v);
      if (u <= 0xff) big(0xcc, u, 1);
      else if (u <= 0xffff) big(0xcd, u, 2);
      else if (u <= 0xffffffffu) big(0xce, u, 4);
      else big(0xcf, u, 8);
    } else {
      if (v >= -128) big(0xd0, std::uint64_t(v), 1);
      else if (v >= -32768) big(0xd1, std::uint64_t(v), 2);
      else if (v >= -2147483648LL) big(0xd2, std::uint64_t(v), 4);
      else big(0xd3, std::uint64_t(v), 8);
    }
    return *this;
  }
  Writer& boolean(bool b) {
    value();
    if (mp_) out_ += char(b ? 0xc3 : 0xc2);
    else out_ += b ? "true" : "false";
    return *this;
  }

 private:
  // JSON separators: a comma before every element but a container's first,
  // none between a key and its value.
  void value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (count_.empty()) return;
    if (!mp_ && count_.back() > 0) out_ += ',';
    ++count_.back();
  }
  Writer& open(char json_open, std::uint8_t fix, std::uint8_t wide, std::size_t n) {
    value();
    if (mp_) head(fix, 16, wide, n);
    else out_ += json_open;
    open_.push_back(json_open == '{');
    count_.push_back(0);
    return *this;
  }
  // A MessagePack header: fix form below `limit`, else the 8-bit (str) or
  // 16-bit (map, array) length form; our messages never need more.
  void head(std::uint8_t fix, std::size_t limit, std::uint8_t wide, std::size_t n) {
    if (n < limit) out_ += char(fix | n);
    else big(wide, n, wide == 0xd9 ? 1 : 2);
  }
  void big(std::uint8_t tag, std::uint64_t v, int bytes) {
    out_ += char(tag);
    for (int i = bytes - 1; i >= 0; --i) out_ += char((v >> (8 * i)) & 0xff);
  }
  bool mp_;
  bool after_key_ = false;
  std::vector<bool> open_;  // true: a map
  std::vector<std::size_t> count_;
  std::string out_;
};

}  // namespace fuzz
