// The MessagePack encoder: a Message packed member by member (envelope keys in
// spec order, then the json payload) with msgpack::packer.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <msgpack.hpp>

#include "codec/msgpack_detail.h"

namespace weft::detail {
namespace {

void pack_str(Packer& pk, std::string_view s) {
  const std::uint32_t n = clamp32(s.size());
  pk.pack_str(n);
  pk.pack_str_body(s.data(), n);
}

void pack_value(Packer& pk, const json& v) {
  switch (v.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
      pk.pack_nil();
      return;
    case json::value_t::boolean:
      if (*v.get_ptr<const json::boolean_t*>()) pk.pack_true(); else pk.pack_false();
      return;
    case json::value_t::number_integer:  // smallest int format (packer picks it)
      pk.pack_int64(*v.get_ptr<const json::number_integer_t*>());
      return;
    case json::value_t::number_unsigned:
      pk.pack_uint64(*v.get_ptr<const json::number_unsigned_t*>());
      return;
    case json::value_t::number_float: {  // always float64: no silent precision loss
      const double d = *v.get_ptr<const json::number_float_t*>();
      if (!std::isfinite(d)) pk.non_finite = true;
      pk.float64(d);
      return;
    }
    case json::value_t::string:
      pack_str(pk, *v.get_ptr<const json::string_t*>());
      return;
    case json::value_t::binary: {  // bin; a subtype, if any, is not carried
      const json::binary_t& b = *v.get_ptr<const json::binary_t*>();
      const std::uint32_t n = clamp32(b.size());
      pk.pack_bin(n);
      pk.pack_bin_body(reinterpret_cast<const char*>(b.data()), n);
      return;
    }
    case json::value_t::array: {
      const json::array_t& a = *v.get_ptr<const json::array_t*>();
      const std::uint32_t n = clamp32(a.size());
      pk.pack_array(n);
      for (std::uint32_t i = 0; i < n; ++i) pack_value(pk, a[i]);
      return;
    }
    case json::value_t::object: {
      const json::object_t& o = *v.get_ptr<const json::object_t*>();
      std::uint32_t n = clamp32(o.size());
      pk.pack_map(n);
      for (const auto& [k, x] : o) {
        if (n-- == 0) break;
        pack_str(pk, k);
        pack_value(pk, x);
      }
      return;
    }
  }
}

// Ids per Id::to_json (message.h): a Number id (kept as a lexeme for JSON)
// travels as float64 because MessagePack has no lexemes (codec.h).
void pack_id(Packer& pk, const Id& id) {
  switch (id.kind()) {
    case Id::Kind::Null: pk.pack_nil(); return;
    case Id::Kind::Int: pk.pack_int64(id.as_int()); return;
    case Id::Kind::Uint: pk.pack_uint64(id.as_uint()); return;
    case Id::Kind::String: pack_str(pk, id.text()); return;
    case Id::Kind::Number: pack_value(pk, id.to_json()); return;
  }
  pk.pack_nil();
}

void pack_error(Packer& pk, const Error& e) {  // §5.1 error object
  pk.pack_map(e.data ? 3 : 2);
  pack_str(pk, "code");
  pk.pack_int64(e.code);
  pack_str(pk, "message");
  pack_str(pk, e.message);
  if (e.data) {
    pack_str(pk, "data");
    pack_value(pk, *e.data);
  }
}

// A request (§4) or, without `id`, a notification (§4.1): the same members
// but the id.
void pack_call(Packer& pk, const std::string& method, const std::optional<json>& params, const Id* id) {
  pk.pack_map(2 + (params ? 1 : 0) + (id ? 1 : 0));
  pack_str(pk, "jsonrpc");
  pack_str(pk, "2.0");
  pack_str(pk, "method");
  pack_str(pk, method);
  if (params) {
    pack_str(pk, "params");
    pack_value(pk, *params);
  }
  if (id) {
    pack_str(pk, "id");
    pack_id(pk, *id);
  }
}

}  // namespace

// See msgpack_detail.h.
void pack_message(Packer& pk, const std::string& out, const Message& m) {
  const std::size_t start = out.size();
  if (const auto* r = std::get_if<Request>(&m)) {
    pack_call(pk, r->method, r->params, &r->id);
  } else if (const auto* n = std::get_if<Notification>(&m)) {
    pack_call(pk, n->method, n->params, nullptr);
  } else if (const auto* s = std::get_if<Response>(&m)) {
    pk.pack_map(s->metrics ? 4 : 3);
    pack_str(pk, "jsonrpc");
    pack_str(pk, "2.0");
    if (const auto* e = std::get_if<Error>(&s->outcome)) {
      pack_str(pk, "error");
      pack_error(pk, *e);
    } else {
      pack_str(pk, "result");
      pack_value(pk, std::get<json>(s->outcome));
    }
    pack_str(pk, "id");
    pack_id(pk, s->id);
    if (s->metrics) {
      const std::uint64_t size = out.size() - start;
      pack_str(pk, "metrics");
      pk.pack_map(2);
      pack_str(pk, "processing_time_us");
      pk.pack_uint64(s->metrics->processing_time_us);
      pack_str(pk, "response_size");
      pk.pack_uint64(size);
    }
  }
}

}  // namespace weft::detail
