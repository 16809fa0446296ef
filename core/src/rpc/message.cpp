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

namespace {

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "a number";
    case json::value_t::number_float:
      return std::isfinite(v.get_ref<const json::number_float_t&>()) ? "a number" : "a non-finite number";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::binary: return "binary data";
    default: return "an invalid value";
  }
}

using detail::Made;

// Out of line and cold: see cold.h. `got`: the value whose type is wrong;
// its type is appended to `what` ("…, got a string").
WEFT_COLD Invalid invalid(Id id, std::string_view what, bool reply = true, const json* got = nullptr) {
  std::string m = "Invalid Request: ";
  m += what;
  if (got) {
    m += ", got ";
    m += type_name(*got);
  }
  return Invalid{std::move(id), Error(code::kInvalidRequest, std::move(m)), reply};
}

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

// The envelope's id: the one its decoder read (Envelope::valid_id), else
// "id" as found — nullopt when absent or not a String, Number or Null (§4).
std::optional<Id> id_of(Envelope& e, const std::string* lexeme) {
  if (e.valid_id) return std::move(e.valid_id);
  if (e.id) return Id::from_json(*e.id, lexeme);
  return std::nullopt;
}

// §5: "id ... MUST be the same as the value of the id member in the Request";
// an id that is not a String, Number or Null cannot be echoed, so it is null.
// Moves method and params out of the envelope: it is discarded afterwards.
Item classify_request(Envelope& e, const std::string* lexeme, bool versioned) {
  std::optional<Id> id = id_of(e, lexeme);
  if (e.id && !id)
    return invalid(Id(), "\"id\" must be a string, number or null", true, &*e.id);
  // What an Invalid carries (§5): made only on the paths that need it.
  auto reply_id = [&id] { return id ? *id : Id(); };
  if (!versioned) return invalid(reply_id(), "\"jsonrpc\" must be exactly \"2.0\"");
  std::string* method = std::get_if<std::string>(&*e.method);
  if (!method)
    return invalid(reply_id(), "\"method\" must be a string", true, &std::get<json>(*e.method));
  // §4.2: "If present, parameters for the rpc call MUST be provided as a
  // Structured value. Either by-position through an Array or by-name through an Object."
  if (e.params && !e.params->is_array() && !e.params->is_object())
    return invalid(reply_id(), "\"params\" must be an array or an object", true, &*e.params);
  // Made in the Item's own storage (Made): a Request returned as itself would
  // be moved into the Item, and the emptied one destroyed, per message.
  if (id)
    return Item(std::in_place_type<Request>,
                Made{[&] { return Request{std::move(*id), std::move(*method), std::move(e.params)}; }});
  return Item(std::in_place_type<Notification>,
              Made{[&] { return Notification{std::move(*method), std::move(e.params)}; }});
}

// What an Invalid that is not about the id carries: the message's id when it
// is usable (§5 "the same value as the id member"), else null.
Id usable_id(Envelope& e, const std::string* lexeme) { return id_of(e, lexeme).value_or(Id()); }

// A response's "metrics" member (docs/protocol.md, "Metrics"): informational,
// so one that is not {"processing_time_us": uint, "response_size": uint} is
// ignored rather than making the response invalid.
std::optional<ResponseMetrics> metrics_of(const Envelope& e) {
  if (!e.metrics || !e.metrics->is_object()) return std::nullopt;
  auto t = e.metrics->find("processing_time_us");
  auto n = e.metrics->find("response_size");
  if (t == e.metrics->end() || n == e.metrics->end() || !t->is_number_unsigned() || !n->is_number_unsigned())
    return std::nullopt;
  return ResponseMetrics{t->get<std::uint64_t>(), n->get<std::uint64_t>()};
}

// Malformed responses are reported, never answered: answering a response
// with an error could make two peers bounce errors at each other forever.
Item classify_response(Envelope& e, const std::string* lexeme, bool versioned) {
  std::optional<Id> id = id_of(e, lexeme);
  const Id rid = id.value_or(Id());
  if (!versioned) return invalid(rid, "response \"jsonrpc\" must be exactly \"2.0\"", false);
  if (!id) return invalid(rid, "response has no usable \"id\"", false);
  if (e.result.has_value() == e.error.has_value())
    return invalid(rid, "response must have exactly one of \"result\" and \"error\"", false);
  if (e.result) return Response{std::move(*id), std::move(*e.result), metrics_of(e)};
  // §5.1: code "MUST be an integer", message "SHOULD be limited to a concise single sentence".
  json* err = &*e.error;
  if (!err->is_object()) return invalid(rid, "\"error\" must be an object", false);
  auto c = err->find("code");
  auto msg = err->find("message");
  const std::optional<int> code = c == err->end() ? std::nullopt : error_code_from(*c);
  if (!code) return invalid(rid, "error \"code\" must be an integer", false);
  if (msg == err->end() || !msg->is_string()) return invalid(rid, "error \"message\" must be a string", false);
  Error err_out(*code, std::move(msg->get_ref<std::string&>()));
  if (auto d = err->find("data"); d != err->end()) err_out.data = std::move(*d);
  return Response{std::move(*id), std::move(err_out), metrics_of(e)};
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
  Invalid bad = invalid(Id(), "expected an object", true, &v);
  bad.foreign = true;
  return bad;
}

// The one place the rules for a message object are applied (§4–§5): every
// decoder (Document, parser events, the WebAssembly binding) ends here.
Item classify(Envelope&& e) {
  const std::string* lexeme = e.id_lexeme ? &*e.id_lexeme : nullptr;
  const bool versioned = e.version;
  const bool call = e.method.has_value();
  Item item = call                  ? classify_request(e, lexeme, versioned)
              : e.result || e.error ? classify_response(e, lexeme, versioned)
                                    : Item(invalid(usable_id(e, lexeme), "no \"method\" member"));
  if (auto* bad = std::get_if<Invalid>(&item)) {
    bad->foreign = !versioned;
    bad->call = call;
  }
  return item;
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
