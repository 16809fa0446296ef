// Private: appending JSON text straight into an output buffer.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace weft::detail {

// Serialises with nlohmann's serializer into `out` (no temporary string).
// Invalid UTF-8 is replaced with U+FFFD instead of throwing (dump() would
// throw type_error 316, and Emscripten builds abort on throw).
inline void write_json_value(const nlohmann::json& v, std::string& out) {
  nlohmann::detail::serializer<nlohmann::json> s(
      nlohmann::detail::output_adapter<char, std::string>(out), ' ',
      nlohmann::json::error_handler_t::replace);
  s.dump(v, false, false, 0);
}

inline void write_json_string(std::string_view str, std::string& out) {
  // Fast path: printable ASCII without quotes or backslashes needs no escaping.
  bool plain = true;
  for (unsigned char c : str)
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) { plain = false; break; }
  if (plain) {
    out += '"';
    out.append(str);
    out += '"';
    return;
  }
  write_json_value(nlohmann::json(std::string(str)), out);
}

}  // namespace weft::detail
