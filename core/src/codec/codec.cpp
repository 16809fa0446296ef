// Codec factory and codec names (codec.h). The codecs themselves live in
// json.cpp and msgpack.cpp; each exposes one factory function.
#include "weft/codec.h"

namespace weft {

namespace detail {
std::unique_ptr<Codec> make_json_codec(CodecLimits limits);     // json.cpp
std::unique_ptr<Codec> make_msgpack_codec(CodecLimits limits);  // msgpack.cpp
}  // namespace detail

std::unique_ptr<Codec> make_codec(CodecKind kind, CodecLimits limits) {
  switch (kind) {
    case CodecKind::Json: return detail::make_json_codec(limits);
    case CodecKind::MessagePack: return detail::make_msgpack_codec(limits);
  }
  return nullptr;
}

const char* codec_name(CodecKind kind) {
  switch (kind) {
    case CodecKind::Json: return "json";
    case CodecKind::MessagePack: return "msgpack";
  }
  return nullptr;
}

// Exact, case-sensitive names: they appear in configuration and on the wire
// of whatever negotiates the codec, so one spelling each.
bool parse_codec_name(std::string_view name, CodecKind& out) {
  if (name == "json") {
    out = CodecKind::Json;
    return true;
  }
  if (name == "msgpack") {
    out = CodecKind::MessagePack;
    return true;
  }
  return false;
}

}  // namespace weft
