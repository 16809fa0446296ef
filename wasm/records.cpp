// Messages across the boundary (records.h): outgoing records, incoming
// descriptors. The layouts are abi.h's; nothing here decides what is valid —
// read_descriptor() describes the slots to judge() (message.h) and builds
// what it decided.
#include "records.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "abi.h"
#include "payloads.h"

namespace weft::wasm {
namespace {

using namespace abi;

double ptr(const char* p) { return static_cast<double>(reinterpret_cast<std::uintptr_t>(p)); }

// An integer id: ID_INT up to 2^53, else ID_BIG (abi.h): its digits, which
// JS gives back as the number they spell when that number's text is the
// same (an id that came from a JavaScript number, 2 ** 60 sent as
// 1152921504606847000), else as the digits, written whole where JSON text
// carries them (js/ids.js) instead of rounded.
void record_int(double* r, bool negative, std::uint64_t magnitude) {
  if (magnitude <= std::uint64_t{1} << 53) {
    const double m = static_cast<double>(magnitude);
    r[R_ID_KIND] = ID_INT;
    r[R_ID_A] = negative ? -m : m;
    return;
  }
  const double high = static_cast<double>(magnitude >> 32);  // >= 2^21: never 0, so it carries the sign
  r[R_ID_KIND] = ID_BIG;
  r[R_ID_A] = negative ? -high : high;
  r[R_ID_B] = static_cast<double>(magnitude & 0xffffffffu);
}

void record_id(double* r, const Id& id) {
  switch (id.kind()) {
    case Id::Kind::Null: r[R_ID_KIND] = ID_NULL; break;
    case Id::Kind::Int: {
      const std::int64_t v = id.as_int();
      // The magnitude of INT64_MIN does not fit an int64: taken as unsigned.
      record_int(r, v < 0, v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v));
      break;
    }
    case Id::Kind::Uint: record_int(r, false, id.as_uint()); break;
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

// A JSON value of the kind JS described, for a value the core reads as a
// scalar (a non-object message, an id without its fast path): strings and
// numbers carry their value; containers their type only.
json scalar(const double* d, int kind, int a, int b, const char* in) {
  switch (static_cast<int>(d[kind])) {
    case VALUE_NULL: return nullptr;
    case VALUE_FALSE: return false;
    case VALUE_TRUE: return true;
    case VALUE_NUMBER: {
      const double v = d[a];
      if (is_int64(v)) return static_cast<std::int64_t>(v);
      return v;
    }
    case VALUE_NON_FINITE: return d[a];
    case VALUE_STRING: return std::string(in + static_cast<std::size_t>(d[a]), static_cast<std::size_t>(d[b]));
    case VALUE_ARRAY: return json::value_t::array;
    case VALUE_OBJECT: return json::value_t::object;
    default: return json::value_t::discarded;
  }
}

// A metrics member's number as a JSON parse of its text would type it
// (non-negative integers unsigned); NaN: not a number, left out.
void metric(json::object_t& o, const char* name, double v) {
  if (std::isnan(v)) return;
  if (std::trunc(v) == v && v >= 0 && v < 1.8e19) o.emplace(name, static_cast<std::uint64_t>(v));
  else if (is_int64(v)) o.emplace(name, static_cast<std::int64_t>(v));
  else o.emplace(name, v);
}

// A result's record, but for its metrics.
void record_result(double* r, const Id& id, json& v, std::string& text) {
  r[R_KIND] = MSG_RESULT;
  record_id(r, id);
  record_payload(r, &v, text);
}

// A request's record, but for its metrics.
void record_request(double* r, const Id& id, const std::string& method, std::optional<json>& params,
                    std::string& text) {
  r[R_KIND] = MSG_REQUEST;
  record_id(r, id);
  record_string(r, method);
  record_payload(r, params ? &*params : nullptr, text);
}

// The first record of `recs`, cleared of what only some messages carry.
double* single(std::vector<double>& recs, std::string& text) {
  if (recs.size() < R_SIZE) recs.resize(R_SIZE);
  text.clear();
  double* r = recs.data();
  r[R_VALUE] = kPAY_NONE;
  r[R_METRICS] = METRICS_NONE;
  return r;
}

}  // namespace

void write_result(const Id& id, json& v, std::vector<double>& recs, std::string& text) {
  record_result(single(recs, text), id, v, text);
}

void write_records(Outgoing& o, std::vector<double>& recs, std::string& text) {
  const std::size_t n = o.messages.size();
  if (recs.size() < n * R_SIZE) recs.resize(n * R_SIZE);
  text.clear();
  double* r = recs.data();
  for (Message& m : o.messages) {
    r[R_VALUE] = kPAY_NONE;
    r[R_METRICS] = METRICS_NONE;
    if (auto* q = std::get_if<Request>(&m)) {
      record_request(r, q->id, q->method, q->params, text);
    } else if (auto* t = std::get_if<Notification>(&m)) {
      r[R_KIND] = MSG_NOTIFICATION;
      record_string(r, t->method);
      record_params(r, t->params, text);
    } else {
      auto& resp = std::get<Response>(m);
      if (resp.metrics) r[R_METRICS] = static_cast<double>(resp.metrics->processing_time_us);
      if (auto* e = std::get_if<Error>(&resp.outcome)) {
        r[R_KIND] = MSG_ERROR;
        record_id(r, resp.id);
        r[R_CODE] = e->code;
        record_string(r, e->message);
        record_payload(r, e->data ? &*e->data : nullptr, text);
      } else {
        record_result(r, resp.id, std::get<json>(resp.outcome), text);
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

namespace {

// The kind judge() reads of the member at slot `kind`. A payload is a
// JavaScript value the core does not look inside: the members that carry one
// (result, error.data) only need to be present.
MemberKind member_kind(const double* d, int kind) {
  switch (static_cast<int>(d[kind])) {
    case VALUE_ABSENT: return MemberKind::Absent;
    case VALUE_NULL: return MemberKind::Null;
    case VALUE_FALSE:
    case VALUE_TRUE: return MemberKind::Boolean;
    case VALUE_NUMBER: return MemberKind::Number;
    case VALUE_NON_FINITE: return MemberKind::NonFinite;
    case VALUE_STRING: return MemberKind::String;
    case VALUE_ARRAY: return MemberKind::Array;
    case VALUE_OBJECT: return MemberKind::Object;
    default: return MemberKind::Other;
  }
}

std::string_view text(const double* d, int a, int b, const char* in) {
  return {in + static_cast<std::size_t>(d[a]), static_cast<std::size_t>(d[b])};
}

// What judge() reads, from the slots: no member is rebuilt to be judged.
Shape shape_of(const double* d, const char* in) {
  Shape s;
  const int version = static_cast<int>(d[D_JSONRPC_KIND]);
  s.version = version == VALUE_VERSION ||
              (version == VALUE_STRING && text(d, D_JSONRPC_A, D_JSONRPC_B, in) == "2.0");
  s.method = member_kind(d, D_METHOD_KIND);
  s.id = member_kind(d, D_ID_KIND);
  s.params = member_kind(d, D_PARAMS_KIND);
  s.result = member_kind(d, D_RESULT_KIND);
  s.error = member_kind(d, D_ERROR_KIND);
  if (s.error == MemberKind::Object) {
    // As a JSON number of that value would be read (scalar(): integral
    // values are integers).
    if (static_cast<int>(d[D_CODE_KIND]) == VALUE_NUMBER) s.code = error_code_from(d[D_CODE_A]);
    s.message_is_string = static_cast<int>(d[D_MESSAGE_KIND]) == VALUE_STRING;
  }
  return s;
}

// The id of a descriptor whose id judge() found usable (or absent: null).
Id usable_id(const double* d, const char* in) {
  switch (static_cast<int>(d[D_ID_KIND])) {
    case VALUE_STRING: return Id::string(std::string(text(d, D_ID_A, D_ID_B, in)));
    case VALUE_NUMBER:
      // A number that is not a safe integer: its JS text is the lexeme.
      if (d[D_ID_C] > 0) return Id::number(std::string(text(d, D_ID_B, D_ID_C, in)));
      if (is_int64(d[D_ID_A])) return Id::integer(static_cast<std::int64_t>(d[D_ID_A]));
      return Id::from_json(json(d[D_ID_A])).value_or(Id());
    default: return Id();
  }
}

// The params of a request or notification (judged an array, an object or
// absent), as payload markers.
std::optional<json> params_of(const double* d) {
  std::optional<json> p;
  switch (static_cast<int>(d[D_PARAMS_KIND])) {
    case VALUE_OBJECT: object_marker_in(p, d[D_PARAMS_A]); break;
    case VALUE_ARRAY: array_marker_in(p, d[D_PARAMS_A]); break;
    default: break;
  }
  return p;
}

// A response's metrics member, judged by the core's rule (metrics are
// agreed by handshake, so this is off the common path).
std::optional<ResponseMetrics> metrics_of(const double* d) {
  if (static_cast<int>(d[D_METRICS_KIND]) != VALUE_OBJECT) return std::nullopt;
  json m(json::value_t::object);
  auto& o = m.get_ref<json::object_t&>();
  metric(o, "processing_time_us", d[D_METRICS_TIME]);
  metric(o, "response_size", d[D_METRICS_SIZE]);
  return response_metrics(m);
}

// Converts to the Request or Notification of descriptor `d`: the Item's
// alternative is initialized from the conversion's result, with no
// temporary in between (a value-initialized one would be zeroed first, and
// a moved one destroyed emptied, per message).
template <class Call>
struct CallOf {
  const double* d;
  const char* in;
  operator Call() const {
    if constexpr (std::is_same_v<Call, Request>)
      return Request{usable_id(d, in), std::string(text(d, D_METHOD_A, D_METHOD_B, in)), params_of(d)};
    else
      return Notification{std::string(text(d, D_METHOD_A, D_METHOD_B, in)), params_of(d)};
  }
};

}  // namespace

// judge() decides; the Item is built straight from the slots.
Item read_descriptor(const double* d, const char* in) {
  if (static_cast<int>(d[D_SHAPE]) != VALUE_OBJECT)
    return classify_non_object(scalar(d, D_SHAPE, D_SHAPE, D_SHAPE, in));
  const Shape s = shape_of(d, in);
  const Verdict v = judge(s);
  switch (v.is) {
    case Verdict::Is::Request: return Item(std::in_place_type<Request>, CallOf<Request>{d, in});
    case Verdict::Is::Notification: return Item(std::in_place_type<Notification>, CallOf<Notification>{d, in});
    case Verdict::Is::Result:
      return Response{usable_id(d, in), value_marker(d[D_RESULT_A]), metrics_of(d)};
    case Verdict::Is::Failure: {
      Error e(*s.code, std::string(text(d, D_MESSAGE_A, D_MESSAGE_B, in)));
      if (static_cast<int>(d[D_DATA_KIND]) != VALUE_ABSENT) e.data = value_marker(d[D_DATA_A]);
      return Response{usable_id(d, in), std::move(e), metrics_of(d)};
    }
    case Verdict::Is::Invalid: break;
  }
  return invalid_of(v, v.echo_id ? usable_id(d, in) : Id());
}

}  // namespace weft::wasm
