// The rules of JSON-RPC 2.0 for one message object (§4 Request object, §5
// Response object): a member's kind, judge() and the Invalid it decides.
#include "weft/message.h"

#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "rpc/invalid.h"

namespace weft {

using detail::invalid;

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
    case MemberKind::NonFinite: return "a number JSON cannot hold";
    case MemberKind::String: return "a string";
    case MemberKind::Array: return "an array";
    case MemberKind::Object: return "an object";
    case MemberKind::Binary: return "binary data";
    case MemberKind::Other: break;
  }
  return "an invalid value";
}

namespace {
constexpr std::string_view kInvalidRequest = "Invalid Request: ";
}  // namespace

// See invalid.h.
Invalid detail::invalid(Id id, std::string_view what, bool reply, MemberKind got) {
  std::string m(kInvalidRequest);
  m += what;
  if (got != MemberKind::Absent) {
    m += ", got ";
    m += kind_name(got);
  }
  return Invalid{std::move(id), Error(code::kInvalidRequest, std::move(m)), reply};
}

// See invalid.h. Every Invalid is made by invalid() above.
std::string_view detail::rule_of(const Invalid& bad) {
  std::string_view m = bad.error.message;
  if (m.substr(0, kInvalidRequest.size()) == kInvalidRequest) m.remove_prefix(kInvalidRequest.size());
  return m;
}

namespace {

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

Invalid invalid_of(const Verdict& v, Id id) {
  Invalid bad = invalid(std::move(id), v.rule, v.reply, v.got);
  bad.foreign = v.foreign;
  bad.call = v.call;
  return bad;
}

}  // namespace weft
