// Classification (§4–§6): a message object's envelope read, judged and made
// into an Item, a document into Incoming, and the JSON codec's EnvelopeBuilder.
#include "weft/message.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "json/parse.h"
#include "rpc/invalid.h"
#include "rpc/made.h"

namespace weft {

using detail::invalid;

namespace {

using detail::Made;

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

std::optional<ResponseMetrics> response_metrics(const json& m) {
  if (!m.is_object()) return std::nullopt;
  auto t = m.find("processing_time_us");
  auto n = m.find("response_size");
  if (t == m.end() || n == m.end() || !t->is_number_unsigned() || !n->is_number_unsigned()) return std::nullopt;
  return ResponseMetrics{t->get<std::uint64_t>(), n->get<std::uint64_t>()};
}

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

namespace {
// The refusal of element `i` of an over-long batch, or nullopt for an element
// that gets no answer (check_batch). It stays a call, and foreign if it was,
// so the role and foreign-message policy treat it as they treat the element.
std::optional<Invalid> refusal(Item& i, const std::string& why) {
  Invalid out;
  if (auto* rq = std::get_if<Request>(&i)) {
    out = detail::invalid(std::move(rq->id), why);
  } else {
    auto* bad = std::get_if<Invalid>(&i);
    if (!bad || !bad->call || !bad->reply || bad->id.is_null()) return std::nullopt;
    out = detail::invalid(std::move(bad->id), why);
    out.foreign = bad->foreign;
  }
  out.call = true;
  return out;
}
}  // namespace

bool batch_past_answering(std::size_t n, std::size_t max_batch) { return n > max_batch && n - max_batch > max_batch; }

void check_batch(Incoming& in, std::size_t n, std::size_t max_batch) {
  in.checked = max_batch;
  // §6: "If the batch rpc call itself fails to be recognized as an valid JSON
  // or as an Array with at least one value, the response from the Server MUST
  // be a single Response object."
  if (n == 0) {
    in.batch = false;
    in.items.clear();
    Invalid bad = detail::invalid(Id(), "empty batch array");
    // It holds no JSON-RPC message: on a shared channel, somebody else's
    // (PeerOptions::ignore_foreign).
    bad.foreign = true;
    in.items.push_back(std::move(bad));
    return;
  }
  if (n <= max_batch) return;
  const std::string why =
      "batch of " + std::to_string(n) + " messages exceeds the limit of " + std::to_string(max_batch);
  std::vector<Item> refused;
  if (!batch_past_answering(n, max_batch))
    for (Item& i : in.items) {
      // A response answers a call this side made: the limit bounds the work
      // asked of this side, and dropping it would leave that call hanging.
      if (std::holds_alternative<Response>(i)) refused.emplace_back(std::move(i));
      else if (auto r = refusal(i, why)) refused.emplace_back(std::move(*r));
    }
  in.items = std::move(refused);
  if (in.items.empty()) {
    in.batch = false;
    in.items.push_back(detail::invalid(Id(), why));
  }
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
  in.batch = true;
  // A batch refused whole (check_batch) is not worth judging element by element.
  if (!batch_past_answering(v.size(), max_batch)) {
    in.items.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      in.items.emplace_back(Made{[&] { return classify_value(v[i], lexeme_for(doc, static_cast<int>(i))); }});
  }
  check_batch(in, v.size(), max_batch);
  return in;
}

// ---- The JSON codec's envelope path (json/parse.h) ---------------------------

void detail::EnvelopeBuilder::begin_array() { in_.batch = true; }

void detail::EnvelopeBuilder::end_array() { check_batch(in_, elements_, max_batch_); }

void detail::EnvelopeBuilder::begin_object() { count(); }

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
  count();
  if (!over_limit()) in_.items.push_back(classify_non_object(v));
}

}  // namespace weft
