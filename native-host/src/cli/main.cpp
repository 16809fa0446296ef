// main.cpp — the `weft` command-line tool: serve, call (one-shot or --session), notify.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "cli/options.h"
#include "cli/session_mode.h"
#include "demo.h"
#include "util.h"
#include "weft/host/host.h"

namespace {

using weft::cli::Command;
using weft::cli::Options;
using weft::cli::Transport;

void print(std::FILE* f, const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), f);
  std::fflush(f);
}

int serve(const Options& o) {
  weft::host::ServerOptions so;
  so.framing = o.framing;
  so.codec = o.codec;
  if (o.handshake) {
    weft::Handshake h;
    h.capabilities = {"streams", "progress", "drain"};
    if (o.metrics) h.capabilities.push_back("metrics");
    so.handshake = h;
    so.compression = o.compress;
  }
  if (o.max_depth) so.codec_limits.max_depth = *o.max_depth;
  // Test hooks: shorter frame read timeout / shutdown grace than the defaults.
  weft::Millis ms;
  if (weft::host::detail::env_millis("WEFT_READ_TIMEOUT_MS", ms)) so.framing_limits.read_timeout = ms;
  if (weft::host::detail::env_millis("WEFT_GRACE_MS", ms)) so.grace_ms = ms;
  if (weft::host::detail::env_millis("WEFT_WRITE_TIMEOUT_MS", ms)) so.web.write_timeout = ms;
  so.web.allow_origins = o.allow_origins;
  if (!o.http_path.empty()) so.web.http_path = o.http_path;
  so.web.http_sessions = o.http_sessions;
  if (o.max_message) so.web.max_message = so.framing_limits.max_frame = *o.max_message;
  if (o.max_connections) so.web.max_connections = so.max_connections = *o.max_connections;
  if (o.idle_timeout_ms) so.web.idle_timeout = so.idle_timeout = *o.idle_timeout_ms;
  if (o.max_sessions) so.web.max_sessions = *o.max_sessions;
  if (o.session_idle_timeout_ms) so.web.session_idle_timeout = *o.session_idle_timeout_ms;
  if (o.sse_replay_bytes) so.web.sse_replay_bytes = *o.sse_replay_bytes;
  const auto& l = o.limits;
  if (l.max_in_flight) so.peer_limits.max_in_flight = *l.max_in_flight;
  if (l.max_batch) so.peer_limits.max_batch = *l.max_batch;
  if (l.max_output) so.max_output = *l.max_output;
  if (l.max_response) so.max_response = *l.max_response;
  if (l.frame_timeout) so.framing_limits.read_timeout = *l.frame_timeout;
  if (l.write_timeout) so.write_timeout = so.web.write_timeout = *l.write_timeout;
  if (l.grace) so.grace_ms = *l.grace;
  if (l.reconnect_after) so.reconnect_after_ms = *l.reconnect_after;
  if (l.downtime) so.downtime_ms = *l.downtime;
  weft::host::Server server(std::move(so));
  if (o.demo) {
    auto ex = server.context().get_executor();
    server.on_peer([ex](weft::Peer& p) {
      weft::register_demo_methods(p);
      weft::host::register_sleep(p, ex);
      weft::host::register_bytes(p);
      // The web demo's notification (web-demo/methods.js): acknowledged with
      // a notification back, so that server-to-client messages can be seen.
      p.notification("note", [&p, count = 0](const weft::json& params) mutable {
        const weft::json text = params.is_object() && params.contains("text") ? params["text"] : weft::json();
        (void)p.notify("note.ack", weft::json{{"where", "native"}, {"count", ++count}, {"text", text}});
      });
      // slow {"ms": N} → {"where":"native","slept":N}: the demo's cancellable
      // call; a cancelled one tells the caller with slow.aborted.
      p.method("slow", weft::MethodHandler([&p, ex](weft::json params, weft::Reply reply, const weft::CallInfo&) {
        weft::Millis ms = 5000;
        if (params.is_object() && params.contains("ms") && params["ms"].is_number_integer())
          ms = std::clamp<weft::Millis>(params["ms"].get<weft::Millis>(), 0, 60000);
        auto timer = std::make_shared<boost::asio::steady_timer>(ex, std::chrono::milliseconds(ms));
        auto r = std::make_shared<weft::Reply>(std::move(reply));
        const weft::Millis started = weft::host::now_ms();
        r->on_cancel([&p, timer, started] {
          timer->cancel();
          (void)p.notify("slow.aborted", weft::json{{"where", "native"}, {"afterMs", weft::host::now_ms() - started}});
        });
        timer->async_wait([timer, r, ms](const boost::system::error_code& ec) {
          if (!ec) r->ok(weft::json{{"where", "native"}, {"slept", ms}});
        });
      }));
    });
  }
  // --ws / --http: alone, or next to one socket/stdio transport.
  for (auto [listen, ws] : {std::pair{&o.ws, true}, std::pair{&o.http, false}}) {
    if (!*listen) continue;
    auto r = ws ? server.listen_ws((*listen)->host, (*listen)->port)
                : server.listen_http((*listen)->host, (*listen)->port);
    if (!r) {
      weft::host::detail::log_stderr(r.error().message);
      return 1;
    }
    const std::uint16_t port = ws ? server.ws_port() : server.http_port();
    weft::host::detail::log_stderr(std::string("listening on ") + (ws ? "ws://" : "http://") + (*listen)->host + ":" +
                                   std::to_string(port) + (ws ? "" : server.options().web.http_path));
  }
  if (o.transport == Transport::Default && (o.ws || o.http)) return server.run();
  const std::string framing_name =
      weft::framing_name(o.framing.value_or(weft::host::default_framing(
          o.transport == Transport::Stdio ? weft::host::Transport::Stdio : weft::host::Transport::Unix)));
  const std::string suffix = " (" + framing_name + ", " + weft::codec_name(o.codec) + ")";
  weft::Result<void> r;
  std::string where;
  switch (o.transport) {
    case Transport::Stdio:
      r = server.serve_stdio();
      where = "stdio";
      break;
    case Transport::Tcp:
      r = server.listen_tcp(o.host, o.port);
      where = "tcp:" + o.host + ":" + std::to_string(server.tcp_port());
      break;
    case Transport::Unix:
    case Transport::Default:
    case Transport::Exec:
    case Transport::Address: {
      std::string path = o.unix_path.empty() ? weft::host::default_socket_path() : o.unix_path;
      r = server.listen_unix(path);
      where = "unix:" + path;
      break;
    }
  }
  if (!r) {
    weft::host::detail::log_stderr(r.error().message);
    return 1;
  }
  weft::host::detail::log_stderr("listening on " + where + suffix);
  return server.run();
}

// weft call --stream: each chunk's value as one JSON line as it arrives, then
// the result (docs/streams.md); exit codes as a plain call.
int call_stream(const weft::host::ClientOptions& co, const Options& o) {
  weft::host::ClientConfig cfg = weft::host::to_config(co);
  cfg.default_timeout.reset();  // --timeout is the stream's silence, below
  // Streamable HTTP: a stream opens with a notification ($/weft/open), and a
  // notification cannot start a session; the handshake, a request, does
  // (docs/transports.md, "Streamable HTTP").
  if (!cfg.handshake && cfg.address.rfind("http://", 0) == 0) {
    cfg.handshake.emplace();
    cfg.handshake->capabilities = {"streams", "progress", "drain"};
  }
  weft::host::BlockingClient bc(std::move(cfg));
  weft::host::StreamPolicy policy;
  policy.timeout = o.timeout_ms;
  auto s = bc.stream(o.method, o.params, policy);
  while (auto c = s.next())
    print(stdout, c->value.dump(-1, ' ', false, weft::json::error_handler_t::replace) + "\n");
  const weft::host::Outcome& out = s.outcome();
  using S = weft::host::Outcome::Status;
  if (out.status == S::Ok)
    print(stdout, out.result.dump(-1, ' ', false, weft::json::error_handler_t::replace) + "\n");
  else if (out.status == S::RemoteError || out.status == S::Cancelled)
    print(stderr, out.error.to_json().dump(-1, ' ', false, weft::json::error_handler_t::replace) + "\n");
  else
    weft::host::detail::log_stderr(out.error.message);
  return out.exit_code();
}

int client(const Options& o) {
  weft::host::ClientOptions co;
  switch (o.transport) {
    case Transport::Tcp:
      co.endpoint.kind = weft::host::Endpoint::Kind::Tcp;
      co.endpoint.host = o.host;
      co.endpoint.port = o.port;
      break;
    case Transport::Exec:
      co.endpoint.kind = weft::host::Endpoint::Kind::Exec;
      co.endpoint.command = o.exec;
      break;
    case Transport::Address:
      co.endpoint.kind = weft::host::Endpoint::Kind::Address;
      co.endpoint.address = o.address;
      break;
    default:
      co.endpoint.kind = weft::host::Endpoint::Kind::Unix;
      co.endpoint.path = o.unix_path.empty() ? weft::host::default_socket_path() : o.unix_path;
      break;
  }
  co.framing = o.framing;
  co.codec = o.codec;
  if (o.max_depth) co.codec_limits.max_depth = *o.max_depth;
  co.timeout = o.timeout_ms;
  co.retries = o.retries;
  co.verbose = o.verbose;
  co.metrics = o.metrics;
  co.compression = o.compress;
  if (o.session) return weft::cli::run_session(weft::host::to_config(co), stdin, stdout);
  if (o.stream) return call_stream(co, o);
  const bool is_call = o.command == Command::Call;
  weft::host::Outcome out = is_call ? weft::host::call(co, o.method, o.params)
                                    : weft::host::notify(co, o.method, o.params);
  using S = weft::host::Outcome::Status;
  switch (out.status) {
    case S::Ok:
      if (is_call) print(stdout, out.result.dump(-1, ' ', false, weft::json::error_handler_t::replace) + "\n");
      break;
    case S::RemoteError:
    case S::Cancelled:
      print(stderr, out.error.to_json().dump(-1, ' ', false, weft::json::error_handler_t::replace) + "\n");
      break;
    case S::ConnectFailed:
    case S::Timeout:
      weft::host::detail::log_stderr(out.error.message);
      break;
  }
  if (out.metrics)  // --metrics (docs/protocol.md "Metrics"), for results and error answers
    print(stderr, "metrics {\"processing_time_us\":" + std::to_string(out.metrics->processing_time_us) +
                      ",\"response_size\":" + std::to_string(out.metrics->response_size) + "}\n");
  return out.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  weft::cli::Parsed p = weft::cli::parse(args);
  if (!p.error.empty()) {
    print(stderr, "weft: " + p.error + "\n");
    return 2;
  }
  const Options& o = p.options;
  if (o.version) {
    print(stdout, std::string("weft ") + weft::host::host_version() + "\n");
    return 0;
  }
  if (o.help || o.command == Command::None) {
    print(stdout, weft::cli::usage(o.command));
    return 0;
  }
  if (o.command == Command::Serve) return serve(o);
  return client(o);
}
