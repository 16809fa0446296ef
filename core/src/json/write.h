// Private: appending JSON text straight into an output buffer.
//
// The output is byte-identical to nlohmann's dump() with ensure_ascii=false
// and error_handler_t::replace (the vectors pin it), but strings are escaped
// in runs: a 64 KiB string costs one memcpy instead of 64 Ki push_backs,
// which the profile of a 64 KiB echo showed as 40% of the server's time.
#pragma once

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "json/scan.h"
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

// Room for `more` bytes after out's end, growing geometrically: libc++
// (Emscripten) reserves exactly what is asked, so a reserve per string would
// copy the buffer once per string.
inline void reserve_more(std::string& out, std::size_t more) {
  const std::size_t need = out.size() + more;
  if (need > out.capacity()) out.reserve(need > 2 * out.capacity() ? need : 2 * out.capacity());
}

// The plain runs (scan.h) and well-formed UTF-8 between escapes are copied
// with one append each; the output is reserved up front, since a string that
// needs no escape (the usual case) is exactly its length plus the quotes.
inline void write_json_string(std::string_view str, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::size_t mark = out.size();
  reserve_more(out, str.size() + 2);
  out += '"';
  const char* p = str.data();
  const char* const e = p + str.size();
  const char* run = p;  // start of the bytes not yet copied
  for (;;) {
    p = find_special(p, e);
    if (p == e) break;
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c >= 0x80) {
      // Sequence after sequence (non-ASCII text), then back to the scanner.
      do {
        std::size_t bad = 0;
        const std::size_t n = utf8_sequence(reinterpret_cast<const unsigned char*>(p),
                                            reinterpret_cast<const unsigned char*>(e), bad);
        if (n == 0) {  // invalid UTF-8: let nlohmann write its replacement
          out.resize(mark);
          write_json_nlohmann(nlohmann::json(std::string(str)), out);
          return;
        }
        p += n;
      } while (p < e && static_cast<unsigned char>(*p) >= 0x80);
      continue;
    }
    out.append(run, static_cast<std::size_t>(p - run));
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out.append(u, 6);
      }
    }
    run = ++p;
  }
  out.append(run, static_cast<std::size_t>(e - run));
  out += '"';
}

// Set (never cleared here) when write_json_value wrote a NaN or an infinity,
// which JSON has no form for (RFC 8259 §6; nlohmann writes null): the JSON
// codec clears it, encodes, and reports the message as unencodable.
inline thread_local bool wrote_non_finite = false;

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
    case T::number_float:
      if (!std::isfinite(v.get_ref<const double&>())) wrote_non_finite = true;
      write_json_nlohmann(v, out);
      return;
    default: write_json_nlohmann(v, out); return;  // binary, discarded
  }
}

}  // namespace weft::detail
