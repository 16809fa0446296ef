// Messages across the boundary (records.h): outgoing records, incoming
// descriptors. The layouts are abi.h's; nothing here decides what is valid —
// read_descriptor() only rebuilds the members, classify() judges them.
#include "records.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "abi.h"
#include "payloads.h"

namespace weft::wasm {
namespace {

using namespace abi;

double ptr(const char* p) { return static_cast<double>(reinterpret_cast<std::uintptr_t>(p)); }

void record_id(double* r, const Id& id) {
  switch (id.kind()) {
    case Id::Kind::Null: r[R_ID_KIND] = ID_NULL; break;
    case Id::Kind::Int: r[R_ID_KIND] = ID_INT; r[R_ID_A] = static_cast<double>(id.as_int()); break;
    case Id::Kind::Uint: r[R_ID_KIND] = ID_INT; r[R_ID_A] = static_cast<double>(id.as_uint()); break;
    case Id::Kind::String:
    case Id::Kind::Number:
      r[R_ID_KIND] = id.kind() == Id::Kind::String ? ID_STRING : ID_LEXEME;
      r[R_ID_A] = ptr(id.text().data());
      r[R_ID_B] = static_cast<double>(id.text().size());
      break;
  }
}

void record_payload(double* r, json* v, std::string& text) {
  if (!v) {
    r[R_PAY] = kPAY_NONE;
    return;
  }
  const double n = take_marker(*v);
  if (n >= 0) {
    r[R_PAY] = n;
    return;
  }
  const std::size_t at = text.size();
  text += v->dump(-1, ' ', false, json::error_handler_t::replace);
  r[R_PAY] = kPAY_TEXT;
  r[R_TEXT_P] = static_cast<double>(at);
  r[R_TEXT_N] = static_cast<double>(text.size() - at);
}

// Notification params the core built around a payload ($/weft/chunk,
// $/progress): the text holds the other members, R_VALUE the payload's handle.
void record_params(double* r, std::optional<json>& params, std::string& text) {
  r[R_VALUE] = kPAY_NONE;
  if (params && params->is_object()) {
    auto v = params->find("value");
    const double n = v != params->end() ? marker_of(*v) : -1;
    if (n >= 0) {
      json rest = json::object();
      for (auto it = params->begin(); it != params->end(); ++it)
        if (it.key() != "value") rest[it.key()] = *it;
      record_payload(r, &rest, text);
      r[R_VALUE] = n;
      return;
    }
  }
  record_payload(r, params ? &*params : nullptr, text);
}

void record_string(double* r, const std::string& s) {
  r[R_STR_P] = ptr(s.data());
  r[R_STR_N] = static_cast<double>(s.size());
}

// A JS number that a JSON parse of its text would give as an integer: it is
// integral and fits int64.
bool is_int64(double v) { return std::trunc(v) == v && std::fabs(v) < 9.2e18; }

// A JSON value of the kind JS described, for a member the core reads as a
// scalar: strings and numbers carry their value; containers their type only.
// `make` gets what the json is built from (a json per value would be made
// and destroyed again for every member of every message).
template <class Make>
decltype(auto) with_scalar(const double* d, int kind, int a, int b, const char* in, Make&& make) {
  switch (static_cast<int>(d[kind])) {
    case VALUE_NULL: return make(nullptr);
    case VALUE_FALSE: return make(false);
    case VALUE_TRUE: return make(true);
    case VALUE_NUMBER: {
      const double v = d[a];
      if (is_int64(v)) return make(static_cast<std::int64_t>(v));
      return make(v);
    }
    case VALUE_NON_FINITE: return make(d[a]);
    case VALUE_STRING:
      return make(std::string(in + static_cast<std::size_t>(d[a]), static_cast<std::size_t>(d[b])));
    case VALUE_ARRAY: return make(json::value_t::array);
    case VALUE_OBJECT: return make(json::value_t::object);
    default: return make(json::value_t::discarded);
  }
}

json scalar(const double* d, int kind, int a, int b, const char* in) {
  return with_scalar(d, kind, a, b, in, [](auto&& v) { return json(std::forward<decltype(v)>(v)); });
}

// The same, made in `slot`.
void set_scalar(std::optional<json>& slot, const double* d, int kind, int a, int b, const char* in) {
  with_scalar(d, kind, a, b, in, [&slot](auto&& v) { slot.emplace(std::forward<decltype(v)>(v)); });
}

bool present(const double* d, int kind) { return static_cast<int>(d[kind]) != VALUE_ABSENT; }

// "method" as the envelope holds it, made in `slot`: a string
// as its text (no json string on the heap per message), anything else as
// the value found.
void set_string(std::optional<StringMember>& slot, const double* d, int kind, int a, int b, const char* in) {
  if (static_cast<int>(d[kind]) == VALUE_STRING)
    slot.emplace(std::in_place_index<0>, in + static_cast<std::size_t>(d[a]), static_cast<std::size_t>(d[b]));
  else
    slot.emplace(string_member(scalar(d, kind, a, b, in)));
}

// A metrics member's number as a JSON parse of its text would type it
// (non-negative integers unsigned); NaN: not a number, left out.
void metric(json::object_t& o, const char* name, double v) {
  if (std::isnan(v)) return;
  if (std::trunc(v) == v && v >= 0 && v < 1.8e19) o.emplace(name, static_cast<std::uint64_t>(v));
  else if (is_int64(v)) o.emplace(name, static_cast<std::int64_t>(v));
  else o.emplace(name, v);
}

}  // namespace

void write_records(Outgoing& o, std::vector<double>& recs, std::string& text) {
  const std::size_t n = o.messages.size();
  if (recs.size() < n * R_SIZE) recs.resize(n * R_SIZE);
  text.clear();
  double* r = recs.data();
  for (Message& m : o.messages) {
    r[R_VALUE] = kPAY_NONE;
    r[R_METRICS] = METRICS_NONE;
    if (auto* q = std::get_if<Request>(&m)) {
      r[R_KIND] = MSG_REQUEST;
      record_id(r, q->id);
      record_string(r, q->method);
      record_payload(r, q->params ? &*q->params : nullptr, text);
    } else if (auto* t = std::get_if<Notification>(&m)) {
      r[R_KIND] = MSG_NOTIFICATION;
      record_string(r, t->method);
      record_params(r, t->params, text);
    } else {
      auto& resp = std::get<Response>(m);
      record_id(r, resp.id);
      if (resp.metrics) r[R_METRICS] = static_cast<double>(resp.metrics->processing_time_us);
      if (auto* e = std::get_if<Error>(&resp.outcome)) {
        r[R_KIND] = MSG_ERROR;
        r[R_CODE] = e->code;
        record_string(r, e->message);
        record_payload(r, e->data ? &*e->data : nullptr, text);
      } else {
        r[R_KIND] = MSG_RESULT;
        record_payload(r, &std::get<json>(resp.outcome), text);
      }
    }
    r += R_SIZE;
  }
}

namespace {
// A descriptor that converts to its Item: emplace_back() initializes the
// element from the conversion's result, with no temporary in between.
struct Described {
  const double* d;
  const char* in;
  operator Item() const { return read_descriptor(d, in); }
};
}  // namespace

void append_described(std::vector<Item>& items, const double* d, const char* in) {
  items.emplace_back(Described{d, in});
}

std::optional<Id> read_descriptor_id(const double* d, const char* in) {
  if (!present(d, D_ID_KIND)) return std::nullopt;
  if (static_cast<int>(d[D_ID_KIND]) == VALUE_NUMBER && d[D_ID_C] > 0) {
    const std::string lexeme(in + static_cast<std::size_t>(d[D_ID_B]), static_cast<std::size_t>(d[D_ID_C]));
    return Id::from_json(json(d[D_ID_A]), &lexeme);
  }
  return Id::from_json(scalar(d, D_ID_KIND, D_ID_A, D_ID_B, in));
}

Item read_descriptor(const double* d, const char* in) {
  if (static_cast<int>(d[D_SHAPE]) != VALUE_OBJECT)
    return classify_non_object(scalar(d, D_SHAPE, D_SHAPE, D_SHAPE, in));
  Envelope e;
  e.version = static_cast<int>(d[D_JSONRPC_KIND]) == VALUE_STRING &&
              std::string_view(in + static_cast<std::size_t>(d[D_JSONRPC_A]),
                               static_cast<std::size_t>(d[D_JSONRPC_B])) == "2.0";
  if (present(d, D_METHOD_KIND)) set_string(e.method, d, D_METHOD_KIND, D_METHOD_A, D_METHOD_B, in);
  if (static_cast<int>(d[D_ID_KIND]) == VALUE_NUMBER && d[D_ID_C] > 0) {
    // A number that is not a safe integer: its JS text is the lexeme.
    e.id.emplace(d[D_ID_A]);
    e.id_lexeme.emplace(in + static_cast<std::size_t>(d[D_ID_B]), static_cast<std::size_t>(d[D_ID_C]));
  } else if (const int k = static_cast<int>(d[D_ID_KIND]); k == VALUE_NUMBER && is_int64(d[D_ID_A])) {
    e.valid_id = Id::integer(static_cast<std::int64_t>(d[D_ID_A]));  // as scalar() would read it
  } else if (k == VALUE_STRING) {
    e.valid_id = Id::string(std::string(in + static_cast<std::size_t>(d[D_ID_A]), static_cast<std::size_t>(d[D_ID_B])));
  } else if (k != VALUE_ABSENT) {
    set_scalar(e.id, d, D_ID_KIND, D_ID_A, D_ID_B, in);
  }
  switch (static_cast<int>(d[D_PARAMS_KIND])) {
    case VALUE_ABSENT: break;
    case VALUE_OBJECT: object_marker_in(e.params, d[D_PARAMS_A]); break;
    case VALUE_ARRAY: array_marker_in(e.params, d[D_PARAMS_A]); break;
    default: set_scalar(e.params, d, D_PARAMS_KIND, D_PARAMS_A, D_PARAMS_A, in); break;
  }
  if (present(d, D_RESULT_KIND)) value_marker_in(e.result, d[D_RESULT_A]);
  const int ek = static_cast<int>(d[D_ERROR_KIND]);
  if (ek == VALUE_OBJECT) {
    json err(json::value_t::object);
    auto& o = err.get_ref<json::object_t&>();
    if (present(d, D_CODE_KIND)) o.emplace("code", scalar(d, D_CODE_KIND, D_CODE_A, D_CODE_A, in));
    if (present(d, D_MESSAGE_KIND))
      o.emplace("message", scalar(d, D_MESSAGE_KIND, D_MESSAGE_A, D_MESSAGE_B, in));
    if (present(d, D_DATA_KIND)) o.emplace("data", value_marker(d[D_DATA_A]));
    e.error = std::move(err);
  } else if (ek != VALUE_ABSENT) {
    set_scalar(e.error, d, D_ERROR_KIND, D_ERROR_KIND, D_ERROR_KIND, in);
  }
  if (present(d, D_METRICS_KIND)) {  // judged by the core (metrics_of), like any member
    if (static_cast<int>(d[D_METRICS_KIND]) == VALUE_OBJECT) {
      json m(json::value_t::object);
      auto& o = m.get_ref<json::object_t&>();
      metric(o, "processing_time_us", d[D_METRICS_TIME]);
      metric(o, "response_size", d[D_METRICS_SIZE]);
      e.metrics = std::move(m);
    } else {
      e.metrics = nullptr;  // not an object: ignored whatever it is (metrics_of)
    }
  }
  return classify(std::move(e));
}

}  // namespace weft::wasm
