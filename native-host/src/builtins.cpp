// builtins.cpp — rpc.ping, rpc.discover (OpenRPC), the demo `sleep` and the
// streaming generator `bytes`.
#include "weft/host/builtins.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "weft/host/server.h"

namespace weft::host {

namespace {

const char* schema_type(ParamType t) {
  switch (t) {
    case ParamType::Null: return "null";
    case ParamType::Boolean: return "boolean";
    case ParamType::Integer: return "integer";
    case ParamType::Number: return "number";
    case ParamType::String: return "string";
    case ParamType::Array: return "array";
    case ParamType::Object: return "object";
    case ParamType::Any: break;
  }
  return nullptr;
}

constexpr Millis kMaxSleepMs = 24 * 3600 * 1000;
constexpr std::uint64_t kMaxBytesCount = 1ull << 40;

// One `bytes` stream: writes while the caller has credit, waits for
// on_writable when it has none (docs/streams.md, "C++").
struct BytesProducer : std::enable_shared_from_this<BytesProducer> {
  Reply reply;
  std::uint64_t count = 0, size = 0, next = 0;
  void go() {
    while (next < count) {
      // json::binary(vector&&) takes the bytes without copying them.
      auto w = reply.write(json::binary(std::vector<std::uint8_t>(size, static_cast<std::uint8_t>(next & 0xff))),
                           next + 1 == count, count);
      if (!w) {
        // Cancelled (kClosed): the core has answered -32800 already.
        if (w.error().code != code::kClosed) reply.error(w.error());
        return;
      }
      ++next;
      if (!*w) return reply.on_writable([self = shared_from_this()] { self->go(); });
    }
    reply.ok(json{{"chunks", count}, {"bytes", count * size}});
  }
};

// A non-negative integer no larger than `max`, or nullopt.
std::optional<std::uint64_t> count_param(const json& v, std::uint64_t max) {
  if (v.is_number_unsigned()) {
    const auto n = v.get<std::uint64_t>();
    return n <= max ? std::optional(n) : std::nullopt;
  }
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0 && static_cast<std::uint64_t>(v.get<std::int64_t>()) <= max)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return std::nullopt;
}

}  // namespace

json openrpc_document(const std::vector<MethodInfo>& methods, const std::string& title,
                      const std::string& version) {
  json list = json::array();
  for (const MethodInfo& m : methods) {
    json entry = {{"name", m.name}};
    if (!m.description.empty()) entry["description"] = m.description;
    json params = json::array();
    if (m.spec) {
      for (const Param& p : m.spec->params) {
        json schema = json::object();
        if (const char* t = schema_type(p.type)) schema["type"] = t;
        params.push_back({{"name", p.name}, {"required", p.required}, {"schema", schema}});
      }
      entry["paramStructure"] = m.spec->by_position && m.spec->by_name ? "either"
                                : m.spec->by_position                   ? "by-position"
                                                                        : "by-name";
    }
    entry["params"] = std::move(params);
    // OpenRPC 1.3: a method without "result" is used only as a notification.
    if (!m.notification) entry["result"] = {{"name", "result"}, {"schema", json::object()}};
    list.push_back(std::move(entry));
  }
  return {{"openrpc", "1.3.2"},
          {"info", {{"title", title}, {"version", version}}},
          {"methods", std::move(list)}};
}

void register_builtins(Peer& peer, Millis started_ms, std::string title,
                       std::function<json()> extra) {
  peer.method(
      "rpc.ping",
      SyncHandler([started_ms, extra = std::move(extra)](const json&) -> Result<json> {
        json r = {{"status", "ok"}, {"uptime_ms", now_ms() - started_ms},
                  {"version", host_version()}};
        if (extra) {
          json more = extra();
          if (more.is_object()) r.update(more);
        }
        return r;
      }),
      ParamSpec{}, "Health check: status, uptime and version");
  Peer* p = &peer;  // the handler lives inside the peer
  peer.method(
      "rpc.discover",
      SyncHandler([p, title = std::move(title)](const json&) -> Result<json> {
        return openrpc_document(p->methods(), title, host_version());
      }),
      ParamSpec{}, "The OpenRPC document of this server's methods");
}

void register_sleep(Peer& peer, boost::asio::any_io_executor executor) {
  ParamSpec spec;
  spec.params = {Param{"ms", ParamType::Integer, true}};
  peer.method(
      "sleep",
      MethodHandler([executor](json params, Reply reply, const CallInfo&) {
        const json& v = params.is_object() && params.contains("ms") ? params["ms"] : params;
        if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > kMaxSleepMs) ||
            (!v.is_number_unsigned() && (v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > kMaxSleepMs))) {
          reply.error(Error(code::kInvalidParams,
                            "Invalid params: ms must be an integer from 0 to 86400000"));
          return;
        }
        struct State {
          boost::asio::steady_timer timer;
          Reply reply;
          Millis ms;
        };
        const Millis ms = v.get<Millis>();
        auto st = std::make_shared<State>(State{boost::asio::steady_timer(executor), std::move(reply), ms});
        st->timer.expires_after(std::chrono::milliseconds(ms));
        st->timer.async_wait([st](const boost::system::error_code& ec) {
          if (ec)
            st->reply.error(Error(code::kRequestCancelled, "Request cancelled"));
          else
            st->reply.ok(st->ms);
        });
        std::weak_ptr<State> w = st;
        st->reply.on_cancel([w] {
          if (auto s = w.lock()) s->timer.cancel();
        });
      }),
      spec, "Answers ms after ms milliseconds without blocking; cancellable");
}

void register_bytes(Peer& peer) {
  ParamSpec spec;
  spec.params = {Param{"count", ParamType::Integer, true}, Param{"size", ParamType::Integer, true}};
  peer.method(
      "bytes",
      // A chunk over max_stream_chunk would be refused by its write, but only
      // after its bytes were allocated: refused here, before.
      MethodHandler([max = peer.limits().max_stream_chunk](json params, Reply reply, const CallInfo&) {
        if (!reply.streaming())
          return reply.error(Error(code::kInvalidRequest,
                                   "Invalid Request: bytes streams its result: call it as a stream "
                                   "(weft call --stream, Client::stream)"));
        const auto count = count_param(params["count"], kMaxBytesCount);
        const auto size = count_param(params["size"], max);
        if (!count) return reply.error(Error(code::kInvalidParams, "Invalid params: count must be an integer from 0 to 2^40"));
        if (!size)
          return reply.error(Error(code::kInvalidParams, "Invalid params: size must be an integer from 0 to " +
                                                             std::to_string(max) + " (max_stream_chunk)"));
        auto p = std::make_shared<BytesProducer>();
        p->reply = std::move(reply);
        p->count = *count;
        p->size = *size;
        p->go();
      }),
      spec, "Streams count chunks of size bytes each (binary), then {chunks, bytes}");
}

}  // namespace weft::host
