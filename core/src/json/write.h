// Private: appending JSON text straight into an output buffer.
//
// The output is byte-identical to nlohmann's dump() with ensure_ascii=false
// and error_handler_t::replace (the vectors pin it), but strings are escaped
// in runs: a 64 KiB string costs one memcpy instead of 64 Ki push_backs,
// which the profile of a 64 KiB echo showed as 40% of the server's time.
#pragma once

#include <charconv>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "json/utf8.h"

namespace weft::detail {

// nlohmann's serializer for one value; used for floats, binary, and strings
// with invalid UTF-8 (replaced by U+FFFD rather than throwing type_error 316,
// which Emscripten builds would turn into an abort).
inline void write_json_nlohmann(const nlohmann::json& v, std::string& out) {
  nlohmann::detail::serializer<nlohmann::json> s(
      nlohmann::detail::output_adapter<char, std::string>(out), ' ',
      nlohmann::json::error_handler_t::replace);
  s.dump(v, false, false, 0);
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid.
inline std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t bad = 0;
  return utf8_sequence(p + i, p + s.size(), bad);
}

inline void write_json_string(std::string_view str, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::size_t mark = out.size();
  out += '"';
  std::size_t run = 0;  // start of the bytes not yet copied
  for (std::size_t i = 0; i < str.size();) {
    const unsigned char c = static_cast<unsigned char>(str[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const std::size_t n = utf8_length(str, i);
      if (n == 0) {  // invalid UTF-8: let nlohmann write its replacement
        out.resize(mark);
        write_json_nlohmann(nlohmann::json(std::string(str)), out);
        return;
      }
      i += n;
      continue;
    }
    out.append(str.data() + run, i - run);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
    run = ++i;
  }
  out.append(str.data() + run, str.size() - run);
  out += '"';
}

inline void write_json_value(const nlohmann::json& v, std::string& out) {
  using T = nlohmann::json::value_t;
  switch (v.type()) {
    case T::null: out += "null"; return;
    case T::boolean: out += v.get_ref<const bool&>() ? "true" : "false"; return;
    case T::string: write_json_string(v.get_ref<const std::string&>(), out); return;
    case T::number_integer:
    case T::number_unsigned: {
      char buf[24];
      auto r = v.is_number_unsigned()
                   ? std::to_chars(buf, buf + sizeof buf, v.get_ref<const std::uint64_t&>())
                   : std::to_chars(buf, buf + sizeof buf, v.get_ref<const std::int64_t&>());
      out.append(buf, r.ptr);
      return;
    }
    case T::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ',';
        first = false;
        write_json_value(e, out);
      }
      out += ']';
      return;
    }
    case T::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ',';
        first = false;
        write_json_string(it.key(), out);
        out += ':';
        write_json_value(it.value(), out);
      }
      out += '}';
      return;
    }
    default: write_json_nlohmann(v, out); return;  // floats, binary, discarded
  }
}

}  // namespace weft::detail
