// Id, the JSON-RPC 2.0 request id (§4: "a String, Number, or Null value"):
// making one, its JSON forms, equality and hash.
#include "weft/message.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

#include "json/write.h"

namespace weft {

Id Id::integer(std::int64_t v) {
  Id id;
  id.kind_ = Kind::Int;
  id.i_ = v;
  return id;
}

Id Id::unsigned_integer(std::uint64_t v) {
  if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return integer(static_cast<std::int64_t>(v));
  Id id;
  id.kind_ = Kind::Uint;
  id.u_ = v;
  return id;
}

Id Id::string(std::string s) {
  Id id;
  id.kind_ = Kind::String;
  id.s_ = std::move(s);
  return id;
}

Id Id::number(std::string lexeme) {
  // An integer lexeme that fits 64 bits is the same id as the integer, so that
  // correlation does not depend on how the peer spelled it.
  const bool integral = lexeme.find_first_of(".eE") == std::string::npos;
  if (integral) {
    const char* b = lexeme.data();
    const char* e = b + lexeme.size();
    std::int64_t i = 0;
    if (auto r = std::from_chars(b, e, i); r.ec == std::errc() && r.ptr == e) return integer(i);
    std::uint64_t u = 0;
    if (auto r = std::from_chars(b, e, u); r.ec == std::errc() && r.ptr == e) return unsigned_integer(u);
  }
  Id id;
  id.kind_ = Kind::Number;
  id.s_ = std::move(lexeme);
  return id;
}

std::optional<Id> Id::from_json(const json& v, const std::string* lexeme) {
  switch (v.type()) {
    case json::value_t::null: return Id();
    case json::value_t::string: return string(v.get_ref<const std::string&>());
    case json::value_t::number_integer: return integer(v.get_ref<const json::number_integer_t&>());
    case json::value_t::number_unsigned:
      return unsigned_integer(v.get_ref<const json::number_unsigned_t&>());
    case json::value_t::number_float: {
      // JSON has no NaN or infinity; a host handing in such a double (a
      // JavaScript id of NaN) gets the same answer as any other bad id.
      if (!std::isfinite(v.get_ref<const json::number_float_t&>())) return std::nullopt;
      if (lexeme) return number(*lexeme);
      // No source text (e.g. MessagePack float64): the shortest text that
      // round-trips the double is the best exact rendering there is.
      return number(v.dump());
    }
    default: return std::nullopt;
  }
}

void Id::write_json(std::string& out) const {
  switch (kind_) {
    case Kind::Null: out += "null"; break;
    case Kind::Int: {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof buf, i_);
      out.append(buf, r.ptr);
      break;
    }
    case Kind::Uint: {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof buf, u_);
      out.append(buf, r.ptr);
      break;
    }
    case Kind::Number: out += s_; break;
    case Kind::String: detail::write_json_string(s_, out); break;
  }
}

json Id::to_json() const {
  switch (kind_) {
    case Kind::Null: return nullptr;
    case Kind::Int: return i_;
    case Kind::Uint: return u_;
    case Kind::Number: {
      // libc++ 14 (Emscripten 3.1.6) has no floating-point from_chars; the
      // lexeme is a validated JSON number, which strtod reads in the C locale.
      return std::strtod(s_.c_str(), nullptr);
    }
    case Kind::String: return s_;
  }
  return nullptr;
}

std::string Id::to_string() const {
  std::string s;
  write_json(s);
  return s;
}

bool operator==(const Id& a, const Id& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Id::Kind::Null: return true;
    case Id::Kind::Int: return a.i_ == b.i_;
    case Id::Kind::Uint: return a.u_ == b.u_;
    default: return a.s_ == b.s_;
  }
}

std::size_t Id::hash() const {
  const std::size_t k = static_cast<std::size_t>(kind_) * 0x9e3779b97f4a7c15ull;
  switch (kind_) {
    case Kind::Null: return k;
    case Kind::Int: return k ^ std::hash<std::int64_t>{}(i_);
    case Kind::Uint: return k ^ std::hash<std::uint64_t>{}(u_);
    default: return k ^ std::hash<std::string>{}(s_);
  }
}

}  // namespace weft
