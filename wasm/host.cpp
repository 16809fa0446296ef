// Hosts (host.h): the registry, the Peer's callbacks, and the EM_JS hooks —
// the only place the module calls JavaScript.
#include "host.h"

#include <emscripten.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "abi.h"
#include "payloads.h"
#include "records.h"

// clang-format off
// (Module.weft is js/module.js's hooks, installed before any export runs)
EM_JS(void, js_send, (int h, const double* recs, int count, int batch, const char* text),
      { Module.weft.send(h, recs, count, batch, text); });
EM_JS(void, js_result, (int h, const double* rec, const char* text), { Module.weft.result(h, rec, text); });
EM_JS(void, js_discard, (int h, const double* recs, int count), { Module.weft.discard(h, recs, count); });
EM_JS(void, js_settle, (int h, int token, double slot, const char* p, size_t n),
      { Module.weft.settle(h, token, slot, p, n); });
EM_JS(void, js_fail, (int h, int token, int code, const char* m, size_t mn, double slot, const char* p, size_t n),
      { Module.weft.fail(h, token, code, m, mn, slot, p, n); });
EM_JS(double, js_dispatch, (int h, int fn, int token, double slot, const char* p, size_t n),
      { return Module.weft.dispatch(h, fn, token, slot, p, n); });
EM_JS(void, js_cancelled, (int h, int token), { Module.weft.cancelled(h, token); });
EM_JS(void, js_diag, (int h, int kind, const char* p, size_t n), { Module.weft.diag(h, kind, p, n); });
EM_JS(int, js_materialize, (int h, double handle, const char* kp, size_t kn),
      { return Module.weft.materialize(h, handle, kp, kn); });
EM_JS(double, js_kept, (), { return Module.weft.kept(); });
EM_JS(int, js_members, (int h, double handle), { return Module.weft.members(h, handle); });
EM_JS(double, js_assemble, (const char* p, size_t n), { return Module.weft.assemble(p, n); });
EM_JS(double, js_now, (int h), { return Module.weft.now(h); });
EM_JS(double, js_chunk_size, (int h, double handle, double stop), { return Module.weft.chunkSize(h, handle, stop); });
EM_JS(void, js_metrics, (int h, int token, double us, double size), { Module.weft.metrics(h, token, us, size); });
EM_JS(void, js_drain, (int h, const char* p, size_t n, double downtime, double reconnect_after),
      { Module.weft.drain(h, p, n, downtime, reconnect_after); });
// clang-format on

namespace weft::wasm {
namespace {

std::vector<std::unique_ptr<Host>> g_hosts;  // handle = index + 1
std::vector<char> g_in(4096);
std::vector<double> g_desc;
std::vector<double> g_rec;
std::string g_text;

void dump_to(const json& v, std::string& out) {
  out = v.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

// PeerOptions::inspect: the core needs to look inside params that are still
// a JS value; JS hands over their JSON text. A member named `keep` stays a
// JS value: JS leaves it out of the text and hands over an inbound handle
// for it (js_kept), which becomes a marker in its place.
void materialize(int h, json& v, const char* keep) {
  const double handle = marker_of(v);
  if (handle < 0) {  // params a ParamSpec check made: their members may be markers
    if (auto* o = v.get_ptr<json::object_t*>())
      for (auto& kv : *o)
        if (marker_of(kv.second) >= 0) materialize(h, kv.second);
    return;
  }
  const int n = js_materialize(h, handle, keep, keep ? std::strlen(keep) : 0);
  if (n < 0) {  // not representable as JSON (a cycle, a BigInt): same type, empty
    v = v.is_array() ? json::array() : json::object();
    return;
  }
  auto& in = input();
  json parsed = json::parse(in.data(), in.data() + n, nullptr, false);
  if (parsed.is_discarded()) parsed = v.is_array() ? json::array() : json::object();
  if (keep && parsed.is_object()) {
    const double kept = js_kept();
    if (kept >= 0) parsed[keep] = value_marker(kept);
  }
  v = std::move(parsed);
}

// PeerOptions::inspect_members: JS describes each member of the params
// (js/module.js members()): a JSON value when it is one exactly, else
// [handle, ParamType] for a value that stays in JS (a marker here). So the
// check sees each member's type and the handler gets the members unchanged.
std::optional<Error> materialize_members(int h, json& v) {
  const double handle = marker_of(v);
  if (handle < 0) return std::nullopt;
  const int n = js_members(h, handle);
  auto& in = input();
  json parsed = n < 0 ? json() : json::parse(in.data(), in.data() + n, nullptr, false);
  // [handle, type]: both unsigned integers, as members() writes them.
  auto place = [](json& m) {
    const auto* a = m.get_ptr<const json::array_t*>();
    if (!a) return;
    const auto* n = a->size() == 2 ? (*a)[0].get_ptr<const json::number_unsigned_t*>() : nullptr;
    const auto* t = a->size() == 2 ? (*a)[1].get_ptr<const json::number_unsigned_t*>() : nullptr;
    m = n && t ? typed_marker(static_cast<double>(*n), static_cast<ParamType>(*t)) : json();
  };
  if (auto* a = parsed.get_ptr<json::array_t*>()) {
    for (json& m : *a) place(m);
  } else if (auto* o = parsed.get_ptr<json::object_t*>()) {
    for (auto& kv : *o) place(kv.second);
  } else {
    return Error(code::kInvalidParams, n == -1 ? "Invalid params: a member name is not Unicode text (a lone surrogate)"
                                               : "Invalid params: they cannot be read (reading them threw)");
  }
  v = std::move(parsed);
  return std::nullopt;
}

// The object `v` for JS when some of its members are markers: the JSON text
// [{members, a marker's as 0}, name, handle, name, handle...], which JS
// assembles (js/module.js assemble()) into an inbound value; -1 when no
// member is a marker.
double assemble(const json& v, std::string& text) {
  const auto* o = v.get_ptr<const json::object_t*>();
  auto marked = [](const auto& kv) { return marker_of(kv.second) >= 0; };
  if (!o || std::none_of(o->begin(), o->end(), marked)) return -1;
  std::string list;
  text = "[{";
  for (const auto& [k, m] : *o) {
    const std::string name = json(k).dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 2) text += ',';
    text += name;
    text += ':';
    if (const double n = marker_of(m); n >= 0) {
      text += '0';
      list += ',';
      list += name;
      list += ',';
      list += std::to_string(static_cast<std::uint64_t>(n));
    } else {
      text += m.dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  text += '}';
  text += list;
  text += ']';
  return js_assemble(text.data(), text.size());
}

int Host::store(Reply&& r) {
  if (!free_replies.empty()) {
    const int t = free_replies.back();
    free_replies.pop_back();
    replies[t] = std::move(r);
    return t;
  }
  replies.push_back(std::move(r));
  return static_cast<int>(replies.size() - 1);
}

bool Host::has(int t) const {
  return t >= 0 && t < static_cast<int>(replies.size()) && !replies[t].done();
}

Reply Host::take(int t) {
  Reply r = std::move(replies[t]);
  free_replies.push_back(t);
  return r;
}

double Host::payload(const json& v) {
  const double n = marker_of(v);
  return n >= 0 ? n : as_text(v);
}

double Host::take_payload(json& v) {
  const double n = take_marker(v);
  return n >= 0 ? n : as_text(v);
}

double Host::as_text(const json& v) {
  if (const double n = assemble(v, tmp); n >= 0) return n;
  dump_to(v, tmp);
  return abi::kPAY_TEXT;
}

Host* host(int h) {
  if (h <= 0 || h > static_cast<int>(g_hosts.size())) return nullptr;
  return g_hosts[h - 1].get();
}

std::vector<char>& input() { return g_in; }

double* descriptors(std::size_t n) {
  if (g_desc.size() < n) g_desc.resize(n);
  return g_desc.data();
}

void js_send_records(int h, Outgoing& o) {
  write_records(o, g_rec, g_text);
  js_send(h, g_rec.data(), static_cast<int>(o.messages.size()), o.batch ? 1 : 0, g_text.data());
}

void js_discard_records(int h, Outgoing& o) {
  // Not g_rec: a discard can happen inside a send. Its own buffers are kept
  // (a method's answer to every notification it serves is discarded), and
  // a discard within one (JS frees handles only) would get fresh ones.
  static std::vector<double> kept_recs;
  static std::string kept_text;
  static bool busy = false;
  std::vector<double> fresh_recs;
  std::string fresh_text;
  const bool reuse = !busy;
  busy = true;
  std::vector<double>& recs = reuse ? kept_recs : fresh_recs;
  std::string& text = reuse ? kept_text : fresh_text;
  write_records(o, recs, text);
  js_discard(h, recs.data(), static_cast<int>(o.messages.size()));
  if (reuse) busy = false;
}

double js_dispatch_call(int h, int fn, int token, double slot, const std::string& text) {
  return js_dispatch(h, fn, token, slot, text.data(), slot == abi::kPAY_TEXT ? text.size() : 0);
}

void js_cancelled_call(int h, int token) { js_cancelled(h, token); }


int create_host(PeerOptions o) {
  int h = 0;
  for (std::size_t i = 0; i < g_hosts.size(); ++i)
    if (!g_hosts[i]) h = static_cast<int>(i) + 1;
  if (!h) {
    g_hosts.emplace_back();
    h = static_cast<int>(g_hosts.size());
  }
  auto x = std::make_unique<Host>();
  x->handle = h;
  // A message the transport cannot send comes back later, through
  // weft_undelivered (js/outgoing.js): the hooks only post.
  o.send = [h](Outgoing&& m) { js_send_records(h, m); };
  // One result, one record: no Outgoing made for it.
  o.send_result = [h](const Id& id, json&& v) {
    write_result(id, v, g_rec, g_text);
    js_result(h, g_rec.data(), g_text.data());
  };
  // One request, no record, when it is weft_call's: its caller holds the
  // method and params it gave (PAY_CALLER) and posts them with the id the
  // core chose; the params' marker goes back to the pool. Any other (the
  // handshake's, whose params the core made) goes as every message does.
  o.send_request = [h](const Id& id, const std::string& method, std::optional<json>& params) {
    Host* x = host(h);
    if (x && x->calling) {
      if (params) take_marker(*params);
      x->post_request = true;
      return;
    }
    Outgoing m;
    m.messages.emplace_back(Request{id, method, std::move(params)});
    js_send_records(h, m);
  };
  o.discard = [h](Outgoing&& m) {
    js_discard_records(h, m);
  };
  o.inspect = [h](json& params, const char* keep) { materialize(h, params, keep); };
  o.inspect_members = [h](json& params) { return materialize_members(h, params); };
  o.placeholder_type = placeholder_type;
  o.clock = [h] { return static_cast<Millis>(js_now(h)); };  // the endpoint's clock option
  // The same clock in µs (performance.now() has sub-ms resolution): with
  // it the core measures answers once "metrics" is agreed (docs/protocol.md).
  o.clock_us = [h] { return static_cast<std::int64_t>(std::floor(js_now(h) * 1000)); };
  // Chunk values are JS values held by handle: JS measures the value by
  // weft::chunk_size's rule (js/size.js); the core compares and refuses.
  o.chunk_size = [h](const json& v, std::size_t stop) -> std::size_t {
    const double handle = marker_of(v);
    if (handle < 0) return weft::chunk_size(v, stop);
    const double n = js_chunk_size(h, handle, static_cast<double>(stop));
    constexpr double kMax = static_cast<double>(std::numeric_limits<std::size_t>::max());  // 32 bits here
    return !(n > 0) ? 0 : n >= kMax ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(n);
  };
  o.on_drain = [h](const DrainNotice& n) {
    js_drain(h, n.reason.data(), n.reason.size(), static_cast<double>(n.downtime),
             static_cast<double>(n.reconnect_after));
  };
  o.diagnostic = [h](const Diagnostic& d) {
    js_diag(h, static_cast<int>(d.kind), d.message.data(), d.message.size());
  };
  x->peer = std::make_unique<Peer>(std::move(o));
  g_hosts[h - 1] = std::move(x);
  return h;
}

void js_report(int h, Diagnostic::Kind kind, const std::string& message) {
  js_diag(h, static_cast<int>(kind), message.data(), message.size());
}

void destroy_host(int h) {
  if (!host(h)) return;
  std::unique_ptr<Host> gone = std::move(g_hosts[h - 1]);
  gone->replies.clear();
}

CallCallback settle_to(int h, int token) {
  return [h, token](Result<json> r) {
    Host* x = host(h);
    if (!x) return;
    if (r.ok()) {
      // The result's marker serves the next answer received.
      const double slot = x->take_payload(r.value());
      js_settle(h, token, slot, x->tmp.data(), slot == abi::kPAY_TEXT ? x->tmp.size() : 0);
      return;
    }
    const Error& e = r.error();
    const double slot = e.data ? x->payload(*e.data) : abi::kPAY_NONE;
    js_fail(h, token, e.code, e.message.data(), e.message.size(), slot, x->tmp.data(),
            slot == abi::kPAY_TEXT ? x->tmp.size() : 0);
  };
}

std::function<void(const ResponseMetrics&)> metrics_to(int h, int token) {
  return [h, token](const ResponseMetrics& m) {
    js_metrics(h, token, static_cast<double>(m.processing_time_us), static_cast<double>(m.response_size));
  };
}

bool wants_metrics(const Host& x, int ask) {
  if (ask == abi::METRICS_ASK) return true;
  // Agreed: error answers and streams expose them even unasked (RPCError.metrics).
  const auto& a = x.peer->agreed();
  return a && std::find(a->capabilities.begin(), a->capabilities.end(), "metrics") != a->capabilities.end();
}

}  // namespace weft::wasm
