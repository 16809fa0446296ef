// The JSON-RPC 2.0 message model: ids, validation (§4–§6) and the JSON writer.
#include "weft/message.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "json/parse.h"
#include "json/write.h"
#include "cold.h"
#include "rpc/made.h"

namespace weft {

// ---- Id ---------------------------------------------------------------------

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

// ---- Validation (§4 Request object, §5 Response object, §6 Batch) ------------

MemberKind kind_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return MemberKind::Null;
    case json::value_t::boolean: return MemberKind::Boolean;
    case json::value_t::string: return MemberKind::String;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return MemberKind::Number;
    case json::value_t::number_float:
      return std::isfinite(v.get_ref<const json::number_float_t&>()) ? MemberKind::Number : MemberKind::NonFinite;
    case json::value_t::array: return MemberKind::Array;
    case json::value_t::object: return MemberKind::Object;
    case json::value_t::binary: return MemberKind::Binary;
    default: return MemberKind::Other;
  }
}

const char* kind_name(MemberKind k) {
  switch (k) {
    case MemberKind::Absent: return "nothing";
    case MemberKind::Null: return "null";
    case MemberKind::Boolean: return "a boolean";
    case MemberKind::Number: return "a number";
    case MemberKind::NonFinite: return "a non-finite number";
    case MemberKind::String: return "a string";
    case MemberKind::Array: return "an array";
    case MemberKind::Object: return "an object";
    case MemberKind::Binary: return "binary data";
    case MemberKind::Other: break;
  }
  return "an invalid value";
}

namespace {

using detail::Made;

// Out of line and cold: see cold.h. `got`: the kind of the value whose type
// is wrong, appended to `what` ("…, got a string"); Absent: none.
WEFT_COLD Invalid invalid(Id id, std::string_view what, bool reply = true, MemberKind got = MemberKind::Absent) {
  std::string m = "Invalid Request: ";
  m += what;
  if (got != MemberKind::Absent) {
    m += ", got ";
    m += kind_name(got);
  }
  return Invalid{std::move(id), Error(code::kInvalidRequest, std::move(m)), reply};
}

// §4: an id is "a String, Number, or Null value"; anything else cannot be
// echoed (§5), so a message carrying one is answered with id null.
bool usable(MemberKind k) { return k == MemberKind::String || k == MemberKind::Number || k == MemberKind::Null; }

// A verdict that the message breaks `rule`.
Verdict broken(const char* rule, bool echo_id, bool reply = true, MemberKind got = MemberKind::Absent) {
  Verdict v;
  v.rule = rule;
  v.echo_id = echo_id;
  v.reply = reply;
  v.got = got;
  return v;
}

Verdict judge_request(const Shape& s) {
  const bool echo = usable(s.id);
  if (s.id != MemberKind::Absent && !echo) return broken("\"id\" must be a string, number or null", false, true, s.id);
  if (!s.version) return broken("\"jsonrpc\" must be exactly \"2.0\"", echo);
  if (s.method != MemberKind::String) return broken("\"method\" must be a string", echo, true, s.method);
  // §4.2: "If present, parameters for the rpc call MUST be provided as a
  // Structured value. Either by-position through an Array or by-name through an Object."
  if (s.params != MemberKind::Absent && s.params != MemberKind::Array && s.params != MemberKind::Object)
    return broken("\"params\" must be an array or an object", echo, true, s.params);
  Verdict v;
  v.is = s.id == MemberKind::Absent ? Verdict::Is::Notification : Verdict::Is::Request;
  return v;
}

// Malformed responses are reported, never answered: answering a response
// with an error could make two peers bounce errors at each other forever.
Verdict judge_response(const Shape& s) {
  const bool echo = usable(s.id);
  if (!s.version) return broken("response \"jsonrpc\" must be exactly \"2.0\"", echo, false);
  if (!echo) return broken("response has no usable \"id\"", false, false);
  if ((s.result != MemberKind::Absent) == (s.error != MemberKind::Absent))
    return broken("response must have exactly one of \"result\" and \"error\"", true, false);
  Verdict v;
  if (s.result != MemberKind::Absent) {
    v.is = Verdict::Is::Result;
    return v;
  }
  // §5.1: code "MUST be an integer", message "SHOULD be limited to a concise single sentence".
  if (s.error != MemberKind::Object) return broken("\"error\" must be an object", true, false);
  if (!s.code) return broken("error \"code\" must be an integer", true, false);
  if (!s.message_is_string) return broken("error \"message\" must be a string", true, false);
  v.is = Verdict::Is::Failure;
  return v;
}

}  // namespace

// The one place the rules for a message object are applied (§4–§5): every
// decoder (Document, parser events, the WebAssembly binding) ends here.
Verdict judge(const Shape& s) {
  const bool call = s.method != MemberKind::Absent;
  Verdict v = call ? judge_request(s)
              : s.result != MemberKind::Absent || s.error != MemberKind::Absent
                  ? judge_response(s)
                  : broken("no \"method\" member", usable(s.id));
  if (v.is == Verdict::Is::Invalid) {
    v.foreign = !s.version;
    v.call = call;
  }
  return v;
}

std::optional<ResponseMetrics> response_metrics(const json& m) {
  if (!m.is_object()) return std::nullopt;
  auto t = m.find("processing_time_us");
  auto n = m.find("response_size");
  if (t == m.end() || n == m.end() || !t->is_number_unsigned() || !n->is_number_unsigned()) return std::nullopt;
  return ResponseMetrics{t->get<std::uint64_t>(), n->get<std::uint64_t>()};
}

Invalid invalid_of(const Verdict& v, Id id) {
  Invalid bad = invalid(std::move(id), v.rule, v.reply, v.got);
  bad.foreign = v.foreign;
  bad.call = v.call;
  return bad;
}

namespace {

// The members JSON-RPC defines (§4, §5); any other is ignored.
enum class Member : std::uint8_t { None, Jsonrpc, Method, Params, Id, Result, Error, Metrics };

// One switch on the length and one compare: this runs per member of every message.
Member envelope_member(std::string_view name) {
  switch (name.size()) {
    case 2: return name == "id" ? Member::Id : Member::None;
    case 5: return name == "error" ? Member::Error : Member::None;
    case 6:
      if (name == "method") return Member::Method;
      if (name == "params") return Member::Params;
      if (name == "result") return Member::Result;
      return Member::None;
    case 7:
      if (name == "jsonrpc") return Member::Jsonrpc;
      return name == "metrics" ? Member::Metrics : Member::None;  // docs/protocol.md "Metrics"
    default: return Member::None;
  }
}

// Stores member `m`'s value (a repeat replaces the earlier one: last wins).
void set_member(Envelope& e, Member m, json&& v) {
  switch (m) {
    case Member::None: return;
    case Member::Jsonrpc: e.version = v.is_string() && v.get_ref<const std::string&>() == "2.0"; return;
    case Member::Method: e.method = string_member(std::move(v)); return;
    case Member::Params: e.params = std::move(v); return;
    case Member::Id: e.id = std::move(v); return;
    case Member::Result: e.result = std::move(v); return;
    case Member::Error: e.error = std::move(v); return;
    case Member::Metrics: e.metrics = std::move(v); return;
  }
}

// The same for a string value, given as its text.
void set_member_text(Envelope& e, Member m, std::string_view text) {
  if (m == Member::Jsonrpc) e.version = text == "2.0";
  else if (m == Member::Method) e.method.emplace(std::in_place_index<0>, text);
  else set_member(e, m, json(std::string(text)));
}

// The envelope of a decoded object, its members moved out (the object is
// discarded afterwards). One pass: a find() per member on the std::map costs
// string compares, which the profile of a server answering small calls showed
// (memcmp) at a tenth of its time.
Envelope envelope_of(json::object_t& obj, std::string* lexeme) {
  Envelope e;
  for (auto& [k, v] : obj) set_member(e, envelope_member(k), std::move(v));
  if (lexeme) e.id_lexeme = std::move(*lexeme);
  return e;
}

// A member's kind, Absent when it is missing.
MemberKind kind_of_member(const std::optional<json>& v) { return v ? kind_of(*v) : MemberKind::Absent; }

// What judge() reads of an envelope.
Shape shape_of(const Envelope& e) {
  Shape s;
  s.version = e.version;
  if (e.method) s.method = e.method->index() == 0 ? MemberKind::String : kind_of(std::get<json>(*e.method));
  if (e.valid_id) s.id = e.valid_id->is_null() ? MemberKind::Null
                         : e.valid_id->kind() == Id::Kind::String ? MemberKind::String : MemberKind::Number;
  else s.id = kind_of_member(e.id);
  s.params = kind_of_member(e.params);
  s.result = kind_of_member(e.result);
  s.error = kind_of_member(e.error);
  if (s.error == MemberKind::Object) {
    if (auto c = e.error->find("code"); c != e.error->end()) s.code = error_code_from(*c);
    auto m = e.error->find("message");
    s.message_is_string = m != e.error->end() && m->is_string();
  }
  return s;
}

// The envelope's id (judged usable): the one its decoder read
// (Envelope::valid_id), else "id" as found; null when absent.
Id id_of(Envelope& e, const std::string* lexeme) {
  if (e.valid_id) return std::move(*e.valid_id);
  if (e.id) return Id::from_json(*e.id, lexeme).value_or(Id());
  return Id();
}

// A top-level value or batch element of a decoded document.
Item classify_value(json& v, std::string* lexeme) {
  if (!v.is_object()) return classify_non_object(v);
  return classify(envelope_of(*v.get_ptr<json::object_t*>(), lexeme));
}

std::string* lexeme_for(Document& doc, int index) {
  for (auto& l : doc.id_lexemes)
    if (l.index == index) return &l.lexeme;
  return nullptr;
}

}  // namespace

StringMember string_member(json v) {
  if (v.is_string()) return StringMember(std::in_place_index<0>, std::move(v.get_ref<std::string&>()));
  return StringMember(std::in_place_index<1>, std::move(v));
}

Item classify_non_object(const json& v) {
  Invalid bad = invalid(Id(), "expected an object", true, kind_of(v));
  bad.foreign = true;
  return bad;
}

// judge() decides; this builds what it decided from the envelope, moving
// method and payloads out of it (it is discarded afterwards). Requests are
// made in the Item's own storage (Made): a Request returned as itself would
// be moved into the Item, and the emptied one destroyed, per message.
Item classify(Envelope&& e) {
  const std::string* lexeme = e.id_lexeme ? &*e.id_lexeme : nullptr;
  const Shape s = shape_of(e);
  const Verdict v = judge(s);
  const auto metrics = [&e] { return e.metrics ? response_metrics(*e.metrics) : std::nullopt; };
  switch (v.is) {
    case Verdict::Is::Request:
      return Item(std::in_place_type<Request>, Made{[&] {
                    return Request{id_of(e, lexeme), std::move(std::get<std::string>(*e.method)), std::move(e.params)};
                  }});
    case Verdict::Is::Notification:
      return Item(std::in_place_type<Notification>,
                  Made{[&] { return Notification{std::move(std::get<std::string>(*e.method)), std::move(e.params)}; }});
    case Verdict::Is::Result: return Response{id_of(e, lexeme), std::move(*e.result), metrics()};
    case Verdict::Is::Failure: {
      json& err = *e.error;
      Error out(*s.code, std::move(err.find("message")->get_ref<std::string&>()));
      if (auto d = err.find("data"); d != err.end()) out.data = std::move(*d);
      return Response{id_of(e, lexeme), std::move(out), metrics()};
    }
    case Verdict::Is::Invalid: break;
  }
  return invalid_of(v, v.echo_id ? id_of(e, lexeme) : Id());
}

std::optional<Invalid> batch_violation(std::size_t n, std::size_t max_batch) {
  // §6: "If the batch rpc call itself fails to be recognized as an valid JSON
  // or as an Array with at least one value, the response from the Server MUST
  // be a single Response object."
  if (n == 0) return invalid(Id(), "empty batch array");
  if (n > max_batch)
    return invalid(Id(), "batch of " + std::to_string(n) + " messages exceeds the limit of " +
                             std::to_string(max_batch));
  return std::nullopt;
}

Incoming classify(const Document& doc, std::size_t max_batch) {
  Document copy = doc;
  return classify(std::move(copy), max_batch);
}

Incoming classify(Document&& doc, std::size_t max_batch) {
  Incoming in;
  json& v = doc.value;
  if (!v.is_array()) {
    in.items.emplace_back(Made{[&] { return classify_value(v, lexeme_for(doc, -1)); }});
    return in;
  }
  if (auto bad = batch_violation(v.size(), max_batch)) {
    in.items.push_back(std::move(*bad));
    return in;
  }
  in.batch = true;
  in.items.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    in.items.emplace_back(Made{[&] { return classify_value(v[i], lexeme_for(doc, static_cast<int>(i))); }});
  return in;
}

// ---- The JSON codec's envelope path (json_parse.h) ---------------------------

void detail::EnvelopeBuilder::begin_array() { in_.batch = true; }

void detail::EnvelopeBuilder::end_array() {
  if (auto bad = batch_violation(elements_, max_batch_)) {
    in_.batch = false;
    in_.items.clear();
    in_.items.push_back(std::move(*bad));
  }
}

void detail::EnvelopeBuilder::begin_object() {
  if (in_.batch && ++elements_ == max_batch_ + 1) in_.items = {};
}

bool detail::EnvelopeBuilder::want(std::string_view name) {
  return !over_limit() && envelope_member(name) != Member::None;
}

void detail::EnvelopeBuilder::member(std::string_view name, json&& value, std::string_view number_text) {
  const Member m = envelope_member(name);
  set_member(envelope_, m, std::move(value));
  // A repeated "id" replaces the earlier one, lexeme included (last wins).
  if (m == Member::Id) {
    if (number_text.empty()) envelope_.id_lexeme.reset();
    else envelope_.id_lexeme.emplace(number_text);
  }
}

void detail::EnvelopeBuilder::member_text(std::string_view name, std::string_view text) {
  const Member m = envelope_member(name);
  set_member_text(envelope_, m, text);
  if (m == Member::Id) envelope_.id_lexeme.reset();
}

void detail::EnvelopeBuilder::end_object() {
  if (!over_limit()) in_.items.emplace_back(Made{[this] { return classify(std::move(envelope_)); }});
  envelope_ = Envelope();
}

void detail::EnvelopeBuilder::value(json&& v) {
  if (in_.batch && ++elements_ == max_batch_ + 1) in_.items = {};
  if (!over_limit()) in_.items.push_back(classify_non_object(v));
}

// ---- Writing ----------------------------------------------------------------

// The envelope's fixed text as string_view literals: appended without a strlen each.
using namespace std::string_view_literals;

void write_json(const Message& m, std::string& out) {
  // Each message's fixed opening as one literal: an append each costs more
  // than its bytes (the answer to a small call is ~40 bytes in six appends).
  const std::size_t start = out.size();
  if (auto* r = std::get_if<Request>(&m)) {
    out += R"({"jsonrpc":"2.0","method":)"sv;
    detail::write_json_string(r->method, out);
    if (r->params) {
      out += R"(,"params":)"sv;
      detail::write_json_value(*r->params, out);
    }
    out += R"(,"id":)"sv;
    r->id.write_json(out);
  } else if (auto* n = std::get_if<Notification>(&m)) {
    out += R"({"jsonrpc":"2.0","method":)"sv;
    detail::write_json_string(n->method, out);
    if (n->params) {
      out += R"(,"params":)"sv;
      detail::write_json_value(*n->params, out);
    }
  } else {
    const auto& resp = std::get<Response>(m);
    if (resp.is_error()) {
      const Error& e = std::get<Error>(resp.outcome);
      out += R"({"jsonrpc":"2.0","error":{"code":)"sv;
      out += std::to_string(e.code);
      out += R"(,"message":)"sv;
      detail::write_json_string(e.message, out);
      if (e.data) {
        out += R"(,"data":)"sv;
        detail::write_json_value(*e.data, out);
      }
      out += R"(},"id":)"sv;
    } else {
      out += R"({"jsonrpc":"2.0","result":)"sv;
      detail::write_json_value(std::get<json>(resp.outcome), out);
      out += R"(,"id":)"sv;
    }
    resp.id.write_json(out);
    if (resp.metrics) {
      // response_size: this response's bytes without the metrics member,
      // i.e. up to here plus the closing brace (ResponseMetrics).
      const std::size_t size = out.size() - start + 1;
      out += R"(,"metrics":{"processing_time_us":)";
      out += std::to_string(resp.metrics->processing_time_us);
      out += R"(,"response_size":)";
      out += std::to_string(size);
      out += '}';
    }
  }
  out += '}';
}

void write_json(const Outgoing& o, std::string& out) {
  if (!o.batch) {
    for (const auto& m : o.messages) write_json(m, out);
    return;
  }
  out += '[';
  for (std::size_t i = 0; i < o.messages.size(); ++i) {
    if (i) out += ',';
    write_json(o.messages[i], out);
  }
  out += ']';
}

std::string to_json_text(const Message& m) {
  std::string s;
  write_json(m, s);
  return s;
}

json to_json_value(const Message& m) {
  json j = json::object();
  j["jsonrpc"] = "2.0";
  if (auto* r = std::get_if<Request>(&m)) {
    j["method"] = r->method;
    if (r->params) j["params"] = *r->params;
    j["id"] = r->id.to_json();
  } else if (auto* n = std::get_if<Notification>(&m)) {
    j["method"] = n->method;
    if (n->params) j["params"] = *n->params;
  } else {
    const auto& resp = std::get<Response>(m);
    if (resp.is_error()) j["error"] = std::get<Error>(resp.outcome).to_json();
    else j["result"] = std::get<json>(resp.outcome);
    j["id"] = resp.id.to_json();
    if (resp.metrics)  // response_size as given: this is no encoding
      j["metrics"] = json{{"processing_time_us", resp.metrics->processing_time_us},
                          {"response_size", resp.metrics->response_size}};
  }
  return j;
}

}  // namespace weft
