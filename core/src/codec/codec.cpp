// Codec factory and codec names (codec.h). The codecs themselves live in
// json.cpp and msgpack.cpp; each exposes one factory function.
#include "weft/codec.h"

#include <cmath>
#include <variant>

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

namespace {
bool has_non_finite(const json& v) {
  switch (v.type()) {
    case json::value_t::number_float: return !std::isfinite(*v.get_ptr<const json::number_float_t*>());
    case json::value_t::array:
      for (const json& e : *v.get_ptr<const json::array_t*>())
        if (has_non_finite(e)) return true;
      return false;
    case json::value_t::object:
      for (const auto& [k, e] : *v.get_ptr<const json::object_t*>())
        if (has_non_finite(e)) return true;
      return false;
    default: return false;
  }
}
bool has_non_finite(const Message& m) {
  if (const auto* r = std::get_if<Request>(&m)) return r->params && has_non_finite(*r->params);
  if (const auto* n = std::get_if<Notification>(&m)) return n->params && has_non_finite(*n->params);
  const auto& resp = std::get<Response>(m);
  if (const auto* e = std::get_if<Error>(&resp.outcome)) return e->data && has_non_finite(*e->data);
  return has_non_finite(std::get<json>(resp.outcome));
}
}  // namespace

std::vector<bool> unencodable(const Outgoing& out) {
  std::vector<bool> failed(out.messages.size());
  for (std::size_t i = 0; i < failed.size(); ++i) failed[i] = has_non_finite(out.messages[i]);
  return failed;
}

Error unencodable_error() { return Error(code::kInternalError, "NaN or Infinity has no JSON representation"); }

Error oversize_error(std::size_t n, std::size_t max, std::string_view limit) {
  return Error(code::kInvalidRequest, "the message is " + std::to_string(n) + " bytes, over " + std::string(limit) +
                                          " (" + std::to_string(max) + ")");
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
