// weft_wasm.cpp — the WebAssembly face of the core: one glue file.
//
// JS talks to a `Host` (a weft::Peer, or a weft::Connection for the text path)
// through a handful of numeric exports; the core talks back through the EM_JS
// imports below. Strings travel through one reusable input buffer (JS writes
// UTF-8 into it); numbers through small fixed arrays of doubles.
//
// Two paths:
//  * object path (the JS API). Payloads the protocol does not inspect
//    (params, result, error.data) stay in JS, numbered; the core holds a
//    *marker* in their place that keeps the JSON type it validates (see
//    "Markers" below). Methods that declare a ParamSpec (and $/… methods) get
//    their params as JSON text instead, because the core must check them.
//      - in: JS describes each message's members in a descriptor (g_desc:
//        presence and JSON type of method/params/result/error/id, strings in
//        the input buffer) and the glue builds the weft::Document from it;
//        Peer::receive → classify() validates it as if it had been parsed.
//        Shapes the descriptor does not cover (batches, non-objects, odd
//        member types, inline params) arrive as envelope JSON text, with
//        markers written as {"":N} / [{"":N}], and go through the JSON codec.
//      - out: the send callback writes one record of doubles per message
//        (kind, id, method or error code/message, payload slot or JSON text)
//        and JS builds the plain objects from them.
//  * text path (the shared vectors): a Connection with NDJSON framing and the
//    JSON codec, exactly like the native runner, so both emit the same bytes.
//
// The core never throws (Emscripten builds have exception catching off); this
// file parses only text it or JS produced, with exceptions disabled too, and
// uses nlohmann's non-throwing parse (discarded value on error).
#include <emscripten.h>
#include <emscripten/bind.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weft/demo.h"
#include "weft/weft.h"

using namespace weft;

// --- calls into JS (the loader installs Module.weft before any export runs) ---
// clang-format off
EM_JS(void, js_emit, (int h, const char* p, size_t n), { Module.weft.emit(h, p, n); });
EM_JS(void, js_send, (int h, const double* recs, int count, int batch, const char* text),
      { Module.weft.send(h, recs, count, batch, text); });
EM_JS(void, js_settle, (int h, int token, double slot, const char* p, size_t n),
      { Module.weft.settle(h, token, slot, p, n); });
EM_JS(void, js_fail, (int h, int token, int code, const char* m, size_t mn, double slot, const char* p, size_t n),
      { Module.weft.fail(h, token, code, m, mn, slot, p, n); });
EM_JS(double, js_dispatch, (int h, int fn, int token, double slot, const char* p, size_t n),
      { return Module.weft.dispatch(h, fn, token, slot, p, n); });
EM_JS(void, js_cancelled, (int h, int token), { Module.weft.cancelled(h, token); });
EM_JS(void, js_diag, (int h, int kind, const char* p, size_t n), { Module.weft.diag(h, kind, p, n); });
// clang-format on

namespace {

constexpr double kNoSlot = -1;    // no payload (params absent)
constexpr double kTextSlot = -2;  // the value is JSON text, passed alongside

// --- Markers: a payload left in JS, by number N -----------------------------
// The core keeps a marker where the payload would be. It must have the JSON
// type the core checks, cost little (each is built, and copied once by
// classify()), and never be mistaken for a value the core produced itself
// ($/cancelRequest's {"id":…}, ParamSpec-normalised params, inline params):
//  * result, error.data (opaque to the core, any type will do): binary data
//    with no bytes and subtype N. Nothing in the object path creates binary
//    values (the JSON codec cannot); one allocation.
//  * object params: {"\xFF": N}. "\xFF" is not UTF-8: the JSON codec rejects
//    it and JS's UTF-8 encoder never writes it, so no real key is "\xFF".
//  * array params: [<discarded>, N]. A discarded value never comes out of a
//    successful parse. Two allocations each (map + node, vector + buffer).
// (Before: {"":N} and [{"":N}] for all of them: forgeable by params {"":3}.)
// Envelope text (the fallback for unusual shapes, see weft_receive) still
// writes {"":N} / [{"":N}]; adopt_markers() turns those into the above at
// the positions JS says hold payloads.
//
// Pools: building a marker allocates (binary holder; map + node; vector +
// buffer) and destroying one frees it all, and nlohmann's destructor also
// allocates a stack for any non-empty container: on the small-call path that
// was a tenth of the wasm time. So markers the glue gets back — in the
// messages it sends (send_records), the params its handlers receive, the
// results its calls settle with — are kept (up to kPoolMax of each kind) and
// refilled with the next number instead. Only values marker_kind() recognises
// go back, so a pooled value is always a well-formed marker.
enum MarkerKind : int { kValueMarker, kObjectMarker, kArrayMarker, kNotMarker };
constexpr std::size_t kPoolMax = 256;
std::vector<json> g_pool[3];

json pooled(MarkerKind k) {
  json j = std::move(g_pool[k].back());
  g_pool[k].pop_back();
  return j;
}
json value_marker(double n) {
  const auto u = static_cast<std::uint64_t>(n);
  if (g_pool[kValueMarker].empty()) return json::binary(json::binary_t::container_type{}, u);
  json j = pooled(kValueMarker);
  j.get_binary().set_subtype(u);
  return j;
}
json object_marker(double n) {
  const auto u = static_cast<std::uint64_t>(n);
  if (!g_pool[kObjectMarker].empty()) {
    json j = pooled(kObjectMarker);
    j.get_ref<json::object_t&>().begin()->second.get_ref<json::number_unsigned_t&>() = u;
    return j;
  }
  json j(json::value_t::object);
  j.get_ref<json::object_t&>().emplace(std::string(1, '\xFF'), u);
  return j;
}
json array_marker(double n) {
  const auto u = static_cast<std::uint64_t>(n);
  if (!g_pool[kArrayMarker].empty()) {
    json j = pooled(kArrayMarker);
    j.get_ref<json::array_t&>()[1].get_ref<json::number_unsigned_t&>() = u;
    return j;
  }
  json j(json::value_t::array);
  auto& a = j.get_ref<json::array_t&>();
  a.reserve(2);
  a.emplace_back(json::value_t::discarded);
  a.emplace_back(u);
  return j;
}

// Which marker `v` is (kNotMarker: a real value), and its number in `n`.
MarkerKind marker_kind(const json& v, double& n) {
  switch (v.type()) {
    case json::value_t::binary: {
      const auto& b = v.get_ref<const json::binary_t&>();
      if (b.empty() && b.has_subtype()) {
        n = static_cast<double>(b.subtype());
        return kValueMarker;
      }
      break;
    }
    case json::value_t::object: {
      const auto& o = v.get_ref<const json::object_t&>();
      if (o.size() != 1) break;
      const auto& [k, u] = *o.begin();
      if (k.size() == 1 && k[0] == '\xFF' && u.is_number_unsigned()) {
        n = static_cast<double>(u.get<std::uint64_t>());
        return kObjectMarker;
      }
      break;
    }
    case json::value_t::array: {
      const auto& a = v.get_ref<const json::array_t&>();
      if (a.size() == 2 && a[0].is_discarded() && a[1].is_number_unsigned()) {
        n = static_cast<double>(a[1].get<std::uint64_t>());
        return kArrayMarker;
      }
      break;
    }
    default: break;
  }
  return kNotMarker;
}

// N if `v` is one of the markers above; kTextSlot otherwise.
double marker_of(const json& v) {
  double n = kTextSlot;
  marker_kind(v, n);
  return n;
}

// Gives marker `v` back to its pool (a real value is left alone).
void recycle(json& v) {
  double n;
  const MarkerKind k = marker_kind(v, n);
  if (k != kNotMarker && g_pool[k].size() < kPoolMax) g_pool[k].push_back(std::move(v));
}
void recycle(std::optional<json>& v) {
  if (v) recycle(*v);
}

// The markers of messages that were just sent.
void recycle(Outgoing& o) {
  for (Message& m : o.messages) {
    if (auto* q = std::get_if<Request>(&m)) recycle(q->params);
    else if (auto* t = std::get_if<Notification>(&m)) recycle(t->params);
    else if (auto* r = std::get_if<Response>(&m)) {
      if (auto* e = std::get_if<Error>(&r->outcome)) recycle(e->data);
      else recycle(std::get<json>(r->outcome));
    }
  }
}

// N if `v` is {"":N} or [{"":N}] (envelope text as JS writes it); else -1.
double text_marker(const json& v) {
  const json* o = &v;
  if (v.is_array()) {
    if (v.size() != 1) return -1;
    o = &v[0];
  }
  if (!o->is_object() || o->size() != 1) return -1;
  auto it = o->find("");
  if (it == o->end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return -1;
  return static_cast<double>(it->get<std::int64_t>());
}

// Bits of the per-message mask JS sends with envelope text: which members
// hold payload markers (anything else is a real value, even if it looks like one).
constexpr unsigned kParamsSlot = 1, kResultSlot = 2, kDataSlot = 4;

void adopt_markers(json& m, unsigned bits) {
  if (!bits || !m.is_object()) return;
  auto& o = m.get_ref<json::object_t&>();
  if (bits & kParamsSlot)
    if (auto it = o.find("params"); it != o.end())
      if (double n = text_marker(it->second); n >= 0)
        it->second = it->second.is_array() ? array_marker(n) : object_marker(n);
  if (bits & kResultSlot)
    if (auto it = o.find("result"); it != o.end())
      if (double n = text_marker(it->second); n >= 0) it->second = value_marker(n);
  if (bits & kDataSlot)
    if (auto e = o.find("error"); e != o.end() && e->second.is_object())
      if (auto it = e->second.find("data"); it != e->second.end())
        if (double n = text_marker(*it); n >= 0) *it = value_marker(n);
}

void dump_to(const json& v, std::string& out) {
  out.clear();
  out = v.dump(-1, ' ', false, json::error_handler_t::replace);
}

struct Host {
  int handle = 0;
  bool text = false;  // text path: params/results are JSON text, never markers
  std::unique_ptr<Peer> own;
  std::unique_ptr<Connection> conn;
  Peer* peer = nullptr;
  std::vector<Reply> replies;  // async answers, by token
  std::vector<int> free_replies;
  std::string tmp;  // params/results text for JS (reused)

  int store(Reply&& r) {
    if (!free_replies.empty()) {
      int t = free_replies.back();
      free_replies.pop_back();
      replies[t] = std::move(r);
      return t;
    }
    replies.push_back(std::move(r));
    return static_cast<int>(replies.size() - 1);
  }
  bool has(int t) const { return t >= 0 && t < static_cast<int>(replies.size()) && !replies[t].done(); }
  Reply take(int t) {
    Reply r = std::move(replies[t]);
    free_replies.push_back(t);
    return r;
  }

  // A payload for JS: its marker number, or JSON text in `tmp` (kTextSlot).
  double payload(const json& v) {
    if (!text) {
      double n = marker_of(v);
      if (n >= 0) return n;
    }
    dump_to(v, tmp);
    return kTextSlot;
  }
};

std::vector<std::unique_ptr<Host>> g_hosts;  // handle = index + 1
std::vector<char> g_in;                      // JS → core text, reused
std::string g_err;                           // last failed call's error object
std::vector<double> g_ids;                   // ids of the last batch
double g_status[4];                          // [0] next deadline or -1, [1] error length
double g_desc[16];                           // one incoming message, described (weft_receive_obj)

Host* host(int h) {
  if (h <= 0 || h > static_cast<int>(g_hosts.size())) return nullptr;
  return g_hosts[h - 1].get();
}

Millis to_ms(double now) { return static_cast<Millis>(std::floor(now)); }

void note_deadline(Host* x) {
  std::optional<Millis> d = x->conn ? x->conn->next_deadline() : x->peer->next_deadline();
  g_status[0] = d ? static_cast<double>(*d) : -1;
}

std::optional<Millis> to_timeout(double t) {
  if (t < 0) return std::nullopt;  // the peer's default
  return static_cast<Millis>(t);
}

// Per-call timeout from JS: >= 0 ms, -1 the endpoint's default, -2 none at all.
CallOptions call_options(double t) {
  CallOptions o;
  if (t == -2) o.no_timeout = true;
  else o.timeout = to_timeout(t);
  return o;
}

// params for call/notify from the input buffer: kind 0 none, 1 object marker,
// 2 array marker, 3 JSON text of `arg` bytes starting at `at`.
bool read_params(int kind, double arg, std::size_t at, std::optional<json>& out) {
  switch (kind) {
    case 0: return true;
    case 1: out = object_marker(arg); return true;
    case 2: out = array_marker(arg); return true;
    case 3: {
      auto n = static_cast<std::size_t>(arg);
      json v = json::parse(g_in.data() + at, g_in.data() + at + n, nullptr, false);
      if (v.is_discarded()) return false;
      out = std::move(v);
      return true;
    }
  }
  return false;
}

// --- The Document of weft_receive_obj, reused ------------------------------
// Building a fresh json object per message (map, one node per member, member
// strings) showed in the profile of small calls; classify() moves method,
// params and payloads out but leaves the object and its keys. So the glue
// keeps one Document per *shape* (which members are present) and refills it:
// no allocation and no key lookups in the steady state. A spare is taken
// while in use, so a receive nested in a handler builds its own.
//
// Members in the std::map's (sorted) key order; a shape is a set of them.
constexpr const char* kMemberKeys[] = {"error", "id", "jsonrpc", "method", "params", "result"};
enum Member : int { kError, kId, kJsonrpc, kMethod, kParams, kResult, kMembers };
constexpr int kShapes = 1 << kMembers;
Document g_spares[kShapes];
bool g_have_spare[kShapes];

// A Document whose top-level object has exactly the members of `shape`, in
// `at` (indexed by Member; unset for absent members).
Document take_spare(unsigned shape, json* at[kMembers]) {
  Document doc;
  if (g_have_spare[shape]) {
    doc = std::move(g_spares[shape]);
    g_have_spare[shape] = false;
  }
  doc.id_lexemes.clear();
  // A spare's keys are the ones this function gave it (classify() and the
  // core only move values out), so they are not compared again.
  if (doc.value.is_object()) {
    auto& o = doc.value.get_ref<json::object_t&>();
    if (o.size() == static_cast<std::size_t>(__builtin_popcount(shape))) {
      auto it = o.begin();
      for (int i = 0; i < kMembers; ++i)
        if (shape & (1u << i)) at[i] = &(it++)->second;
      return doc;
    }
  }
  doc.value = json(json::value_t::object);
  auto& o = doc.value.get_ref<json::object_t&>();
  for (int i = 0; i < kMembers; ++i)
    if (shape & (1u << i)) at[i] = &o.emplace_hint(o.end(), kMemberKeys[i], nullptr)->second;
  return doc;
}

// Drops what a kept object holds, except its keys, small strings and (one
// level down: "error") objects.
void scrub(json::object_t& o, bool nested) {
  for (auto& [k, v] : o) {
    if (v.is_string()) {
      if (v.get_ref<const std::string&>().capacity() > 64) v = std::string();
    } else if (v.is_object() && nested) {
      scrub(v.get_ref<json::object_t&>(), false);
    } else {
      v = nullptr;
    }
  }
}

// After receive: keep the object, but nothing big (a long id string, …).
void keep_spare(unsigned shape, Document&& doc) {
  if (!doc.value.is_object() || g_have_spare[shape]) return;
  scrub(doc.value.get_ref<json::object_t&>(), true);
  g_spares[shape] = std::move(doc);
  g_have_spare[shape] = true;
}

// The member `key` of `o` when `want`, created if missing; else removes it.
json* member(json::object_t& o, const char* key, bool want) {
  auto it = o.find(key);
  if (!want) {
    if (it != o.end()) o.erase(it);
    return nullptr;
  }
  if (it != o.end()) return &it->second;
  return &o.emplace(key, nullptr).first->second;
}

void set_string(json& j, const char* p, std::size_t n) {
  if (j.is_string()) j.get_ref<std::string&>().assign(p, n);
  else j = std::string(p, n);
}

// --- Outgoing messages as records (object path) ----------------------------
// js_send gets `count` records of kRec doubles; JS builds the plain objects.
//   kKind    0 request, 1 notification, 2 result response, 3 error response
//   kIdKind  0 null, 1 number (kIdA: value), 2 string, 3 non-integer number
//            (2, 3: kIdA pointer, kIdB byte length of the string / lexeme)
//   kStr*    method (0, 1) or error message (3): pointer, byte length
//   kCode    error code (3)
//   kPay     params (0, 1), result (2), error.data (3): -1 absent, N >= 0 the
//            payload marker N, -2 JSON text at `text` + kTextP, kTextN bytes
//            (values the core produced: $/cancelRequest's params, …)
// Pointers stay valid during js_send only; JS reads every record before it
// hands anything to the transport (which may re-enter the core).
enum : int { kKind, kIdKind, kIdA, kIdB, kStrP, kStrN, kCode, kPay, kTextP, kTextN, kRec };
std::vector<double> g_rec;
std::string g_text;

double ptr(const char* p) { return static_cast<double>(reinterpret_cast<std::uintptr_t>(p)); }

void record_id(double* r, const Id& id) {
  switch (id.kind()) {
    case Id::Kind::Null: r[kIdKind] = 0; break;
    case Id::Kind::Int: r[kIdKind] = 1; r[kIdA] = static_cast<double>(id.as_int()); break;
    case Id::Kind::Uint: r[kIdKind] = 1; r[kIdA] = static_cast<double>(id.as_uint()); break;
    case Id::Kind::String:
    case Id::Kind::Number:
      r[kIdKind] = id.kind() == Id::Kind::String ? 2 : 3;
      r[kIdA] = ptr(id.text().data());
      r[kIdB] = static_cast<double>(id.text().size());
      break;
  }
}

void record_payload(double* r, const json* v) {
  if (!v) {
    r[kPay] = kNoSlot;
    return;
  }
  double n = marker_of(*v);
  if (n >= 0) {
    r[kPay] = n;
    return;
  }
  const std::size_t at = g_text.size();
  g_text += v->dump(-1, ' ', false, json::error_handler_t::replace);
  r[kPay] = kTextSlot;
  r[kTextP] = static_cast<double>(at);
  r[kTextN] = static_cast<double>(g_text.size() - at);
}

void send_records(int h, const Outgoing& o) {
  const std::size_t n = o.messages.size();
  if (g_rec.size() < n * kRec) g_rec.resize(n * kRec);
  g_text.clear();
  double* r = g_rec.data();
  for (const Message& m : o.messages) {
    if (const auto* q = std::get_if<Request>(&m)) {
      r[kKind] = 0;
      record_id(r, q->id);
      r[kStrP] = ptr(q->method.data());
      r[kStrN] = static_cast<double>(q->method.size());
      record_payload(r, q->params ? &*q->params : nullptr);
    } else if (const auto* t = std::get_if<Notification>(&m)) {
      r[kKind] = 1;
      r[kStrP] = ptr(t->method.data());
      r[kStrN] = static_cast<double>(t->method.size());
      record_payload(r, t->params ? &*t->params : nullptr);
    } else {
      const auto& resp = std::get<Response>(m);
      record_id(r, resp.id);
      if (const auto* e = std::get_if<Error>(&resp.outcome)) {
        r[kKind] = 3;
        r[kCode] = e->code;
        r[kStrP] = ptr(e->message.data());
        r[kStrN] = static_cast<double>(e->message.size());
        record_payload(r, e->data ? &*e->data : nullptr);
      } else {
        r[kKind] = 2;
        record_payload(r, &std::get<json>(resp.outcome));
      }
    }
    r += kRec;
  }
  js_send(h, g_rec.data(), static_cast<int>(n), o.batch ? 1 : 0, g_text.data());
}

CallCallback settle_to(Host* x, int token) {
  const int h = x->handle;
  return [h, token](Result<json> r) {
    Host* x = host(h);
    if (!x) return;
    if (r.ok()) {
      double slot = x->payload(r.value());
      if (slot >= 0) recycle(r.value());
      js_settle(h, token, slot, x->tmp.data(), slot == kTextSlot ? x->tmp.size() : 0);
    } else if (x->text) {
      std::string e;
      dump_to(r.error().to_json(), e);
      js_settle(h, token, -3, e.data(), e.size());
    } else {
      const Error& e = r.error();
      double slot = e.data ? x->payload(*e.data) : kNoSlot;
      js_fail(h, token, e.code, e.message.data(), e.message.size(), slot, x->tmp.data(),
              slot == kTextSlot ? x->tmp.size() : 0);
    }
  };
}

std::optional<ParamSpec> parse_spec(const json& j) {
  if (!j.is_object()) return std::nullopt;
  ParamSpec s;
  static const char* names[] = {"any", "null", "boolean", "integer", "number", "string", "array", "object"};
  if (auto it = j.find("params"); it != j.end() && it->is_array()) {
    for (const auto& p : *it) {
      Param q;
      if (p.is_string()) {
        q.name = p.get<std::string>();
      } else if (p.is_object()) {
        if (auto n = p.find("name"); n != p.end() && n->is_string()) q.name = n->get<std::string>();
        if (auto t = p.find("type"); t != p.end() && t->is_string())
          for (int i = 0; i < 8; ++i)
            if (t->get<std::string>() == names[i]) q.type = static_cast<ParamType>(i);
        if (auto r = p.find("required"); r != p.end() && r->is_boolean()) q.required = r->get<bool>();
      }
      s.params.push_back(std::move(q));
    }
  }
  auto flag = [&](const char* k, bool& f) {
    if (auto it = j.find(k); it != j.end() && it->is_boolean()) f = it->get<bool>();
  };
  flag("byPosition", s.by_position);
  flag("byName", s.by_name);
  flag("allowExtra", s.allow_extra);
  return s;
}

}  // namespace

extern "C" {

// The input buffer, at least `n` bytes. Its address stays valid until the next
// call that asks for more.
EMSCRIPTEN_KEEPALIVE char* weft_in(std::size_t n) {
  if (g_in.size() < n + 1) g_in.resize(n + 1 + n / 2);
  return g_in.data();
}
EMSCRIPTEN_KEEPALIVE double* weft_status() { return g_status; }

// A new endpoint. mode 0: object path (a Peer); mode 1: text path (NDJSON
// Connection with the JSON codec and the demo methods, as the native vectors).
// Limits of 0 keep the core's defaults; timeout < 0 means none.
EMSCRIPTEN_KEEPALIVE int weft_create(int mode, double default_timeout, double max_in_flight,
                                     double max_pending, double max_batch) {
  auto x = std::make_unique<Host>();
  int h = 0;
  for (std::size_t i = 0; i < g_hosts.size(); ++i)
    if (!g_hosts[i]) h = static_cast<int>(i) + 1;
  if (!h) {
    g_hosts.emplace_back();
    h = static_cast<int>(g_hosts.size());
  }
  x->handle = h;
  PeerLimits limits;
  if (max_in_flight > 0) limits.max_in_flight = static_cast<std::size_t>(max_in_flight);
  if (max_pending > 0) limits.max_pending = static_cast<std::size_t>(max_pending);
  if (max_batch > 0) limits.max_batch = static_cast<std::size_t>(max_batch);
  auto diag = [h](const Diagnostic& d) {
    js_diag(h, static_cast<int>(d.kind), d.message.data(), d.message.size());
  };
  if (mode == 1) {
    x->text = true;
    ConnectionOptions o;
    o.framing = Framing::Ndjson;
    o.codec = CodecKind::Json;
    o.peer_limits = limits;
    o.default_timeout = to_timeout(default_timeout);
    o.write = [h](std::string_view bytes) {
      if (!bytes.empty() && bytes.back() == '\n') bytes.remove_suffix(1);
      js_emit(h, bytes.data(), bytes.size());
    };
    o.diagnostic = diag;
    x->conn = std::make_unique<Connection>(std::move(o));
    x->peer = &x->conn->peer();
    register_demo_methods(*x->peer);
  } else {
    PeerOptions o;
    o.limits = limits;
    o.default_timeout = to_timeout(default_timeout);
    o.send = [h](Outgoing&& m) {
      send_records(h, m);
      recycle(m);
    };
    o.diagnostic = diag;
    x->own = std::make_unique<Peer>(std::move(o));
    x->peer = x->own.get();
  }
  g_hosts[h - 1] = std::move(x);
  return h;
}

// Fails pending calls (kClosed, or code/message from the input buffer when
// code != 0), cancels requests being served; the host stays until destroy.
EMSCRIPTEN_KEEPALIVE void weft_close(int h, int code, std::size_t mlen) {
  Host* x = host(h);
  if (!x) return;
  std::optional<Error> why;
  if (code != 0) why = Error(code, std::string(g_in.data(), mlen));
  if (x->conn)
    x->conn->close(why);
  else
    x->peer->close(why);
}

EMSCRIPTEN_KEEPALIVE void weft_destroy(int h) {
  Host* x = host(h);
  if (!x) return;
  std::unique_ptr<Host> gone = std::move(g_hosts[h - 1]);
  gone->replies.clear();
  gone.reset();
}

// Registers JS function `fn` for `name` (input buffer [0, nlen)); flags bit 0:
// a notification handler. A ParamSpec as JSON may follow the name (slen bytes).
EMSCRIPTEN_KEEPALIVE int weft_method(int h, std::size_t nlen, int fn, int flags, std::size_t slen) {
  Host* x = host(h);
  if (!x) return 0;
  std::string name(g_in.data(), nlen);
  std::optional<ParamSpec> spec;
  if (slen) {
    json j = json::parse(g_in.data() + nlen, g_in.data() + nlen + slen, nullptr, false);
    if (j.is_discarded()) return 0;
    spec = parse_spec(j);
  }
  if (flags & 1) {
    x->peer->notification(
        std::move(name),
        [h, fn](const json& params) {
          Host* x = host(h);
          if (!x) return;
          double slot = params.is_null() ? kNoSlot : x->payload(params);
          js_dispatch(h, fn, -1, slot, x->tmp.data(), slot == kTextSlot ? x->tmp.size() : 0);
        },
        std::move(spec));
    return 1;
  }
  x->peer->method(
      std::move(name),
      MethodHandler([h, fn](json params, Reply reply, const CallInfo&) {
        Host* x = host(h);
        if (!x) return;
        int token = x->store(std::move(reply));
        double slot = params.is_null() ? kNoSlot : x->payload(params);
        if (slot >= 0) recycle(params);
        // >= 0: answered now with that payload; -1: later, by token; -2: done.
        double r = js_dispatch(h, fn, token, slot, x->tmp.data(), slot == kTextSlot ? x->tmp.size() : 0);
        x = host(h);
        if (!x || !x->has(token)) return;
        if (r >= 0) {
          x->take(token).ok(x->text ? json(r) : value_marker(r));
        } else if (r == -1) {
          x->replies[token].on_cancel([h, token] { js_cancelled(h, token); });
        }
      }),
      std::move(spec));
  return 1;
}

EMSCRIPTEN_KEEPALIVE int weft_remove(int h, std::size_t nlen) {
  Host* x = host(h);
  return x && x->peer->remove(std::string(g_in.data(), nlen)) ? 1 : 0;
}

// Answers request `token`: kind 0 the payload N, 1 JSON text (input buffer,
// `arg` bytes), 2 an error object as JSON text (`arg` bytes).
EMSCRIPTEN_KEEPALIVE void weft_reply(int h, int token, int kind, double arg) {
  Host* x = host(h);
  if (!x || !x->has(token)) return;
  Reply r = x->take(token);
  if (kind == 0) {
    r.ok(value_marker(arg));
    return;
  }
  auto n = static_cast<std::size_t>(arg);
  json v = json::parse(g_in.data(), g_in.data() + n, nullptr, false);
  if (v.is_discarded()) {
    r.error(Error(code::kInternalError, "Internal error: the handler's answer is not valid JSON"));
    return;
  }
  if (kind == 1) {
    r.ok(std::move(v));
    return;
  }
  Error e(code::kInternalError, "Internal error");
  if (auto c = v.find("code"); c != v.end() && c->is_number_integer()) {
    auto k = c->get<std::int64_t>();
    if (k >= INT32_MIN && k <= INT32_MAX) e.code = static_cast<int>(k);
  }
  if (auto m = v.find("message"); m != v.end() && m->is_string()) e.message = m->get<std::string>();
  if (auto d = v.find("data"); d != v.end()) e.data = *d;
  r.error(std::move(e));
}

// Answers request `token` with an error: `code`, the message in the input
// buffer [0, mlen), data the payload N (or none when slot < 0).
EMSCRIPTEN_KEEPALIVE void weft_reply_error(int h, int token, int code, std::size_t mlen, double slot) {
  Host* x = host(h);
  if (!x || !x->has(token)) return;
  Reply r = x->take(token);
  Error e(code, std::string(g_in.data(), mlen));
  if (slot >= 0) e.data = value_marker(slot);
  r.error(std::move(e));
}

// One frame of text (text path), or one incoming message or batch as envelope
// JSON text (object path: the shapes weft_receive_obj does not cover), `n`
// bytes in the input buffer. Object path: `count` mask bytes at `mask_at`
// (one per top-level message) say which members hold payload markers
// (kParamsSlot, …). Returns the next deadline (-1: none).
EMSCRIPTEN_KEEPALIVE double weft_receive(int h, std::size_t n, double now, std::size_t mask_at,
                                         std::size_t count) {
  Host* x = host(h);
  if (!x) return -1;
  if (x->conn) {
    g_in[n] = '\n';
    x->conn->feed(std::string_view(g_in.data(), n + 1), to_ms(now));
  } else {
    static const auto codec = make_codec(CodecKind::Json);
    auto doc = codec->decode(std::string_view(g_in.data(), n));
    if (doc.ok()) {
      json& v = doc->value;
      const auto* mask = reinterpret_cast<const unsigned char*>(g_in.data() + mask_at);
      if (!v.is_array()) {
        if (count) adopt_markers(v, mask[0]);
      } else {
        for (std::size_t i = 0; i < v.size() && i < count; ++i) adopt_markers(v[i], mask[i]);
      }
      x->peer->receive(std::move(*doc), to_ms(now));
    } else {
      x->peer->receive_error(doc.error());
    }
  }
  if (!(x = host(h))) return -1;
  note_deadline(x);
  return g_status[0];
}

// One incoming message (object path), described by JS in weft_desc() with its
// strings in the input buffer; the glue builds the Document the envelope text
// would have decoded to, and classify() judges it as usual. JS only describes
// messages whose "jsonrpc" is "2.0" and whose members have the usual types:
//   [0] method: -1 absent, else byte length (at offset [1])
//   [2] params: 0 absent, 1 object payload, 2 array payload ([3]: N)
//   [5] result: -1 absent, else payload N
//   [6] error: -1 absent, else the message's byte length (at offset [8]);
//       [7] code (an integer), [9] data: -1 absent, else payload N
//   [10] id: 0 absent, 1 null, 2 integer ([11]), 3 string ([11] byte length
//        at offset [12]), 4 other number ([11] value, its JS text — the lexeme
//        the JSON codec would have kept — [12] bytes at offset [13])
EMSCRIPTEN_KEEPALIVE double weft_receive_obj(int h, double now) {
  Host* x = host(h);
  if (!x || x->conn) return -1;
  const double* d = g_desc;
  const char* in = g_in.data();
  auto at = [in](double offset) { return in + static_cast<std::size_t>(offset); };
  auto len = [](double n) { return static_cast<std::size_t>(n); };
  const int id = static_cast<int>(d[10]);
  const unsigned shape = (d[6] >= 0 ? 1u << kError : 0) | (id != 0 ? 1u << kId : 0) | 1u << kJsonrpc |
                         (d[0] >= 0 ? 1u << kMethod : 0) | (d[2] != 0 ? 1u << kParams : 0) |
                         (d[5] >= 0 ? 1u << kResult : 0);
  json* m[kMembers];
  Document doc = take_spare(shape, m);
  set_string(*m[kJsonrpc], "2.0", 3);
  if (d[0] >= 0) set_string(*m[kMethod], at(d[1]), len(d[0]));
  if (d[2] == 1) *m[kParams] = object_marker(d[3]);
  else if (d[2] == 2) *m[kParams] = array_marker(d[3]);
  if (d[5] >= 0) *m[kResult] = value_marker(d[5]);
  if (d[6] >= 0) {
    json& e = *m[kError];
    if (!e.is_object()) e = json(json::value_t::object);
    auto& eo = e.get_ref<json::object_t&>();
    *member(eo, "code", true) = static_cast<std::int64_t>(d[7]);
    set_string(*member(eo, "message", true), at(d[8]), len(d[6]));
    if (json* v = member(eo, "data", d[9] >= 0)) *v = value_marker(d[9]);
  }
  switch (id) {
    case 0: break;
    case 1: *m[kId] = nullptr; break;
    case 2: *m[kId] = static_cast<std::int64_t>(d[11]); break;
    case 3: set_string(*m[kId], at(d[12]), len(d[11])); break;
    default:
      *m[kId] = d[11];
      doc.id_lexemes.push_back(IdLexeme{-1, std::string(at(d[13]), len(d[12]))});
      break;
  }
  x->peer->receive(std::move(doc), to_ms(now));
  keep_spare(shape, std::move(doc));
  if (!(x = host(h))) return -1;
  note_deadline(x);
  return g_status[0];
}
EMSCRIPTEN_KEEPALIVE double* weft_desc() { return g_desc; }

// An outgoing request: method = input buffer [0, mlen), params per
// read_params (text right after the method). Returns the id (> 0), or 0 with
// the error object's JSON at weft_error() (length in status[1]).
EMSCRIPTEN_KEEPALIVE double weft_call(int h, int token, std::size_t mlen, int pkind, double parg,
                                      double timeout, double now) {
  Host* x = host(h);
  if (!x) return 0;
  std::optional<json> params;
  Result<Id> r = Error(code::kInvalidParams, "Invalid params: not valid JSON");
  if (read_params(pkind, parg, mlen, params)) {
    CallOptions o = call_options(timeout);
    r = x->peer->call(std::string(g_in.data(), mlen), std::move(params), settle_to(x, token), o,
                      to_ms(now));
  }
  if (!(x = host(h))) return 0;
  note_deadline(x);
  if (!r.ok()) {
    dump_to(r.error().to_json(), g_err);
    g_status[1] = static_cast<double>(g_err.size());
    return 0;
  }
  return r->kind() == Id::Kind::Int ? static_cast<double>(r->as_int()) : 0;
}

// A notification; 1 on success, else 0 with the error at weft_error().
EMSCRIPTEN_KEEPALIVE int weft_notify(int h, std::size_t mlen, int pkind, double parg) {
  Host* x = host(h);
  if (!x) return 0;
  std::optional<json> params;
  Result<void> r = Error(code::kInvalidParams, "Invalid params: not valid JSON");
  if (read_params(pkind, parg, mlen, params)) r = x->peer->notify(std::string(g_in.data(), mlen), std::move(params));
  if (r.ok()) return 1;
  dump_to(r.error().to_json(), g_err);
  g_status[1] = static_cast<double>(g_err.size());
  return 0;
}

// A batch described as JSON in the input buffer: [[method, kind, arg, token], …]
// with kind as read_params (3: arg is the params value itself) and token -1
// for a notification. Returns the number of ids written at weft_ids(), or -1
// with the error at weft_error().
EMSCRIPTEN_KEEPALIVE int weft_batch(int h, std::size_t n, double timeout, double now) {
  Host* x = host(h);
  if (!x) return -1;
  json d = json::parse(g_in.data(), g_in.data() + n, nullptr, false);
  std::vector<BatchEntry> entries;
  if (d.is_array()) {
    for (auto& e : d) {
      if (!e.is_array() || e.size() != 4 || !e[0].is_string() || !e[1].is_number_integer() ||
          !e[3].is_number_integer())
        continue;
      BatchEntry b;
      b.method = e[0].get<std::string>();
      switch (e[1].get<int>()) {
        case 1: b.params = object_marker(e[2].get<double>()); break;
        case 2: b.params = array_marker(e[2].get<double>()); break;
        case 3: b.params = std::move(e[2]); break;
        default: break;
      }
      int token = e[3].get<int>();
      if (token >= 0) b.done = settle_to(x, token);
      entries.push_back(std::move(b));
    }
  }
  CallOptions o = call_options(timeout);
  auto r = x->peer->batch(std::move(entries), o, to_ms(now));
  if (!(x = host(h))) return -1;
  note_deadline(x);
  if (!r.ok()) {
    dump_to(r.error().to_json(), g_err);
    g_status[1] = static_cast<double>(g_err.size());
    return -1;
  }
  g_ids.clear();
  for (const Id& id : *r) g_ids.push_back(id.kind() == Id::Kind::Int ? static_cast<double>(id.as_int()) : 0);
  return static_cast<int>(g_ids.size());
}
EMSCRIPTEN_KEEPALIVE const double* weft_ids() { return g_ids.data(); }
EMSCRIPTEN_KEEPALIVE const char* weft_error() { return g_err.c_str(); }

// Gives up on outgoing call `id`: its completion runs now with -32800 and the
// other side is sent $/cancelRequest. 1 if the call was pending.
EMSCRIPTEN_KEEPALIVE int weft_cancel(int h, double id) {
  Host* x = host(h);
  return x && x->peer->cancel(Id::integer(static_cast<std::int64_t>(id))) ? 1 : 0;
}

// Fails calls whose deadline has passed; returns the next deadline (-1: none).
EMSCRIPTEN_KEEPALIVE double weft_advance(int h, double now) {
  Host* x = host(h);
  if (!x) return -1;
  if (x->conn)
    x->conn->advance(to_ms(now));
  else
    x->peer->advance(to_ms(now));
  if (!(x = host(h))) return -1;
  note_deadline(x);
  return g_status[0];
}

EMSCRIPTEN_KEEPALIVE double weft_pending(int h) {
  Host* x = host(h);
  return x ? static_cast<double>(x->peer->pending()) : 0;
}
EMSCRIPTEN_KEEPALIVE double weft_in_flight(int h) {
  Host* x = host(h);
  return x ? static_cast<double>(x->peer->in_flight()) : 0;
}
// Bytes malloc has handed out and not taken back: the leak check's measure.
EMSCRIPTEN_KEEPALIVE double weft_heap_used() { return static_cast<double>(mallinfo().uordblks); }

}  // extern "C"

// Cold, descriptive API through embind: the version and the error codes, so
// JS takes them from the core instead of restating them.
namespace {
emscripten::val codes() {
  auto o = emscripten::val::object();
  o.set("ParseError", code::kParseError);
  o.set("InvalidRequest", code::kInvalidRequest);
  o.set("MethodNotFound", code::kMethodNotFound);
  o.set("InvalidParams", code::kInvalidParams);
  o.set("InternalError", code::kInternalError);
  o.set("ServerError", code::kServerError);
  o.set("Timeout", code::kTimeout);
  o.set("Closed", code::kClosed);
  o.set("Overloaded", code::kOverloaded);
  o.set("RequestCancelled", code::kRequestCancelled);
  return o;
}
std::string core_version() { return weft::version(); }
}  // namespace

EMSCRIPTEN_BINDINGS(weft) {
  emscripten::function("version", &core_version);
  emscripten::function("codes", &codes);
}
