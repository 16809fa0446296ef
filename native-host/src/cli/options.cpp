// options.cpp — see options.h.
#include "cli/options.h"

#include <cerrno>
#include <cstdlib>

#include "address.h"
#include "weft/connection.h"

namespace weft::cli {

namespace {

constexpr unsigned long long kMaxDepthLimit = 10000;

bool parse_u64(const std::string& s, unsigned long long max, unsigned long long& out) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  errno = 0;
  out = std::strtoull(s.c_str(), nullptr, 10);
  return errno == 0 && out <= max;
}

bool parse_host_port(const std::string& s, std::string& host, std::uint16_t& port) {
  std::string h, p;
  if (!s.empty() && s.front() == '[') {
    auto close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') return false;
    h = s.substr(1, close - 1);
    p = s.substr(close + 2);
  } else {
    auto colon = s.rfind(':');
    if (colon == std::string::npos) return false;
    h = s.substr(0, colon);
    p = s.substr(colon + 1);
  }
  unsigned long long v = 0;
  if (h.empty() || !parse_u64(p, 65535, v)) return false;
  host = h;
  port = static_cast<std::uint16_t>(v);
  return true;
}

// --ws/--http: HOST:PORT, or PORT alone for the loopback address.
bool parse_listen(const std::string& s, std::string& host, std::uint16_t& port) {
  unsigned long long v = 0;
  if (s.find(':') == std::string::npos && parse_u64(s, 65535, v)) {
    host = "127.0.0.1";
    port = static_cast<std::uint16_t>(v);
    return true;
  }
  return parse_host_port(s, host, port);
}

const char* command_name(Command c) {
  switch (c) {
    case Command::Serve: return "serve";
    case Command::Call: return "call";
    case Command::Notify: return "notify";
    case Command::None: break;
  }
  return "weft";
}

}  // namespace

std::string usage(Command c) {
  switch (c) {
    case Command::Serve:
      return "Usage: weft serve (--stdio | --unix PATH | --tcp HOST:PORT) [--framing lsp|ndjson|len32be|len32le]\n"
             "                  [--codec json|msgpack] [--max-depth N] [--demo]\n"
             "                  [--handshake] [--metrics] [--compress zstd]\n"
             "       weft serve [--ws [HOST:]PORT] [--http [HOST:]PORT] [--http-path PATH] [--http-stateless]\n"
             "                  [--max-sessions N] [--session-idle-timeout MS] [--sse-replay-bytes BYTES]\n"
             "                  [--allow-origin ORIGIN]... [--max-message BYTES] [--max-connections N]\n"
             "                  [--idle-timeout MS] [--demo]\n"
             "\n"
             "Serve JSON-RPC 2.0. rpc.ping and rpc.discover are always there; --demo adds\n"
             "subtract, add, sum, update, notify_hello, notify_sum, get_data, echo, fail, sleep\n"
             "and bytes (a stream: weft call --stream bytes '{\"count\":3,\"size\":4}').\n"
             "\n"
             "  --stdio            one connection over stdin/stdout (stdout carries only frames)\n"
             "  --unix PATH        Unix socket (mode 0600); default $WEFT_SOCKET, else\n"
             "                     $XDG_RUNTIME_DIR/weft.sock, else /tmp/weft-$USER.sock\n"
             "  --tcp HOST:PORT    TCP (use a loopback address; port 0 picks one)\n"
             "  --framing F        lsp (default on stdio), ndjson, len32be (default on sockets), len32le\n"
             "  --codec C          json (default) or msgpack\n"
             "  --max-depth N      accept messages nested up to N levels (1 to 10000, default 256);\n"
             "                     deeper ones are answered -32600 with id null\n"
             "  --demo             register the demo methods\n"
             "  --handshake        serve rpc.handshake (streams, progress, drain) on every listener\n"
             "  --metrics          also agree on \"metrics\": answers carry processing time and size\n"
             "  --compress zstd    also agree on zstd compression of frames over 1 KiB\n"
             "                     (--framing len32be/len32le, and --ws in binary frames);\n"
             "                     --http: take Content-Encoding: zstd bodies, and zstd-encode\n"
             "                     JSON answers over 1 KiB when Accept-Encoding allows it\n"
             "\n"
             "  --ws [HOST:]PORT   WebSocket: one message per frame; JSON in text frames, MessagePack\n"
             "                     in binary frames with the subprotocol weft.msgpack (HOST 127.0.0.1)\n"
             "  --http [HOST:]PORT MCP Streamable HTTP at --http-path (default /mcp)\n"
             "  --http-stateless   no Mcp-Session-Id: every POST is served alone; GET/DELETE get 405\n"
             "  --max-sessions N   live --http sessions (default 1024); past it a new one ends the session\n"
             "                     idle longest, or gets 503 when all are busy\n"
             "  --session-idle-timeout MS  end a session with no request and no open stream for MS\n"
             "                     (default 600000; 0: never)\n"
             "  --sse-replay-bytes BYTES   SSE data a session keeps for Last-Event-ID replay\n"
             "                     (default 1048576; 0: no limit); resuming past a dropped event: 400\n"
             "  --allow-origin O   allow browser pages from origin O (exact, e.g. http://127.0.0.1:8080;\n"
             "                     * for any); other Origins get 403. Repeatable\n"
             "  --ws and --http may be combined with each other and with --unix or --tcp.\n"
             "\n"
             "Limits (0 turns a timeout off; the timeouts that close a connection apply to\n"
             "sockets, not to --stdio):\n"
             "  --max-message BYTES    largest request: frame payload, WebSocket message or HTTP body\n"
             "                         (default 10000000); a larger frame: -32600, which names\n"
             "                         the library's name for this limit, max_frame\n"
             "  --max-response BYTES   largest answer a --unix/--tcp/--stdio connection sends\n"
             "                         (default 100000000); a larger result is answered -32603\n"
             "  --max-in-flight N      requests served at once per connection (default 1000); more: -32003\n"
             "  --max-batch N          elements of one batch (default 4096); more: -32600\n"
             "  --max-connections N    open connections: --unix/--tcp default 1000, more get -32003\n"
             "                         and are closed; per --ws/--http listener default 256 (503)\n"
             "  --max-output BYTES     answers queued per connection before reading pauses (default 8388608)\n"
             "  --frame-timeout MS     a frame must arrive within MS of its first byte, else the\n"
             "                         connection is closed (default 30000)\n"
             "  --write-timeout MS     close a connection that accepts no output for MS (default 30000)\n"
             "  --idle-timeout MS      close a connection idle for MS (--unix/--tcp default 0: never;\n"
             "                         --ws/--http default 60000)\n"
             "  --grace MS             SIGINT/SIGTERM/SIGHUP: time in-flight requests get to finish (default 5000)\n"
             "  --reconnect-after MS   drain notice: when clients should connect again (default 1000)\n"
             "  --downtime MS          drain notice: expected downtime (default 0: unknown)\n"
             "\n"
             "SIGINT/SIGTERM: drain: stop accepting, send $/weft/drain (reason \"shutdown\") on every\n"
             "open connection, answer new requests there -32005, let in-flight requests finish\n"
             "(--grace), close, remove the socket file, exit 0. A second SIGINT/SIGTERM closes at\n"
             "once. SIGHUP (reload): the same drain with reason \"reload\", then exit 0 for the\n"
             "supervisor to start the new process (systemd Restart=always). Logs go to stderr.\n";
    case Command::Call:
    case Command::Notify: {
      const bool call = c == Command::Call;
      std::string s = std::string("Usage: weft ") + command_name(c) +
                      " (--unix PATH | --tcp HOST:PORT | --exec CMD | --connect ADDR) [--framing F]\n"
                      "                 [--codec C] [--max-depth N] [--timeout MS] [--retries N] METHOD [PARAMS_JSON]\n";
      if (call) s += "       weft call (same options) [--metrics] [--compress zstd] ...\n";
      if (call) s += "       weft call (same options) --session   < requests, one per line\n"
                     "       weft call (same options) --stream METHOD [PARAMS_JSON]\n";
      s += "\n";
      s += call ? "Send one request and print its result as JSON on stdout. With --session, read\n"
                  "requests from stdin over one connection (a JSON-RPC request object, or METHOD\n"
                  "[PARAMS_JSON], per line) and print one JSON-RPC response per line, in input order.\n"
                  "With --stream, open a stream (docs/streams.md): print each chunk's value as one JSON\n"
                  "line as it arrives, then the result as the last line; --timeout is then the longest\n"
                  "silence between chunks.\n"
                : "Send one notification; exit 0 once it is written (over HTTP: once the server\n"
                  "took its POST), 3 if it could not be sent or the server refused it.\n";
      s += "\n"
           "  --unix PATH        Unix socket (default $WEFT_SOCKET, else $XDG_RUNTIME_DIR/weft.sock,\n"
           "                     else /tmp/weft-$USER.sock)\n"
           "  --tcp HOST:PORT    TCP\n"
           "  --exec CMD         run CMD with /bin/sh -c and talk over its stdin/stdout\n"
           "  --connect ADDR     unix:PATH, tcp:HOST:PORT, exec:CMD, ws://HOST:PORT/PATH (WebSocket)\n"
           "                     or http://HOST:PORT/PATH (MCP Streamable HTTP)\n"
           "  --framing F        lsp (default with --exec), ndjson, len32be (default on sockets), len32le\n"
           "  --codec C          json (default) or msgpack\n"
           "  --max-depth N      accept replies nested up to N levels (1 to 10000, default 256)\n"
           "  --timeout MS       give up after MS milliseconds (exit 4); default: wait\n"
           "  --retries N        connection refused / no socket: retry N times (default 3),\n"
           "                     backoff 100 ms, 200 ms, 400 ms, ... plus jitter\n"
           "  -v, --verbose      log retries to stderr\n"
           "  PARAMS_JSON        a JSON array or object\n"
           "\n";
      if (call)
        s += "  --metrics          offer rpc.handshake with \"metrics\"; print the answer's metrics\n"
             "                     to stderr as: metrics {\"processing_time_us\":N,\"response_size\":N}\n"
             "  --compress zstd    offer zstd compression in rpc.handshake (len32 framings, ws://);\n"
             "                     http://: send Accept-Encoding: zstd and inflate such answers\n"
             "\n";
      s += call ? "Exit: 0 result (stdout), 1 error response (JSON on stderr), 2 usage,\n"
                  "      3 connection failure, 4 timeout. --session: the highest of its answers' codes.\n"
                : "Exit: 0 written, 2 usage, 3 connection failure, 4 timeout.\n";
      return s;
    }
    case Command::None: break;
  }
  return "Usage: weft <command> [options]\n"
         "\n"
         "Commands:\n"
         "  serve    serve JSON-RPC 2.0 on stdio, a Unix socket or TCP\n"
         "  call     send a request and print the result\n"
         "  notify   send a notification\n"
         "\n"
         "Run `weft <command> --help` for a command's options.\n";
}

Parsed parse(const std::vector<std::string>& args) {
  Parsed out;
  Options& o = out.options;
  auto err = [&](std::string m) {
    out.error = std::move(m);
    return out;
  };
  if (args.empty()) return err("missing command (serve, call or notify); try --help");
  const std::string& cmd = args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    o.help = true;
    return out;
  }
  if (cmd == "--version") {
    o.version = true;
    return out;
  }
  if (cmd == "serve") o.command = Command::Serve;
  else if (cmd == "call") o.command = Command::Call;
  else if (cmd == "notify") o.command = Command::Notify;
  else if (!cmd.empty() && cmd[0] == '-') return err("unknown option '" + cmd + "' (expected a command first)");
  else return err("unknown command '" + cmd + "' (expected serve, call or notify)");

  const bool serve = o.command == Command::Serve;
  const std::string name = command_name(o.command);
  std::vector<std::string> positional;
  bool only_positional = false;
  auto set_transport = [&](Transport t, const std::string& flag) -> bool {
    if (o.transport != Transport::Default) {
      out.error = std::string(serve ? "only one of --stdio, --unix, --tcp" : "only one of --unix, --tcp, --exec, --connect") +
                  " may be given (" + flag + ")";
      return false;
    }
    o.transport = t;
    return true;
  };

  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string a = args[i];
    if (only_positional || a.empty() || a[0] != '-' || a == "-") {
      positional.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    std::optional<std::string> inline_value;
    if (a.rfind("--", 0) == 0) {
      auto eq = a.find('=');
      if (eq != std::string::npos) {
        inline_value = a.substr(eq + 1);
        a = a.substr(0, eq);
      }
    }
    auto value = [&](std::string& v) -> bool {
      if (inline_value) {
        v = *inline_value;
        return true;
      }
      if (i + 1 >= args.size()) {
        out.error = a + " needs a value";
        return false;
      }
      v = args[++i];
      return true;
    };
    auto no_value = [&]() -> bool {
      if (inline_value) {
        out.error = a + " takes no value";
        return false;
      }
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      if (!no_value()) return out;
      o.help = true;
    } else if (a == "--stdio" && serve) {
      if (!no_value() || !set_transport(Transport::Stdio, a)) return out;
    } else if (a == "--unix") {
      if (!value(v) || !set_transport(Transport::Unix, a)) return out;
      if (v.empty()) return err("--unix needs a non-empty path");
      o.unix_path = v;
    } else if (a == "--tcp") {
      if (!value(v) || !set_transport(Transport::Tcp, a)) return out;
      if (!parse_host_port(v, o.host, o.port)) return err("--tcp expects HOST:PORT, got '" + v + "'");
    } else if (a == "--exec" && !serve) {
      if (!value(v) || !set_transport(Transport::Exec, a)) return out;
      if (v.empty()) return err("--exec needs a command");
      o.exec = v;
    } else if (a == "--connect" && !serve) {
      if (!value(v) || !set_transport(Transport::Address, a)) return out;
      auto addr = host::detail::parse_address(v);
      if (!addr) return err("--connect: " + addr.error().message);
      o.address = v;
    } else if (a == "--session" && o.command == Command::Call) {
      if (!no_value()) return out;
      o.session = true;
    } else if (a == "--stream" && o.command == Command::Call) {
      if (!no_value()) return out;
      o.stream = true;
    } else if (a == "--framing") {
      if (!value(v)) return out;
      Framing f;
      if (!parse_framing_name(v, f)) return err("unknown framing '" + v + "' (lsp, ndjson, len32be, len32le)");
      o.framing = f;
    } else if (a == "--codec") {
      if (!value(v)) return out;
      // Any case on the command line, as --framing: the core's names are
      // exact because they also travel on the wire (codec.h).
      std::string lower = v;
      for (char& c : lower)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      CodecKind k;
      if (!parse_codec_name(lower, k)) return err("unknown codec '" + v + "' (json, msgpack)");
      o.codec = k;
    } else if (a == "--max-depth") {
      // The encoders recurse over a value, so the limit also bounds the stack
      // an echoed value costs: 10000 levels is far past any real message.
      if (!value(v)) return out;
      unsigned long long n;
      if (!parse_u64(v, kMaxDepthLimit, n) || n == 0)
        return err("--max-depth expects an integer from 1 to " + std::to_string(kMaxDepthLimit) + ", got '" + v + "'");
      o.max_depth = static_cast<std::size_t>(n);
    } else if ((a == "--ws" || a == "--http") && serve) {
      if (!value(v)) return out;
      Options::Listen l;
      if (!parse_listen(v, l.host, l.port)) return err(a + " expects [HOST:]PORT, got '" + v + "'");
      (a == "--ws" ? o.ws : o.http) = l;
    } else if (a == "--http-path" && serve) {
      if (!value(v)) return out;
      if (v.empty() || v[0] != '/') return err("--http-path expects a path starting with '/', got '" + v + "'");
      o.http_path = v;
    } else if (a == "--http-stateless" && serve) {
      if (!no_value()) return out;
      o.http_sessions = false;
    } else if (a == "--allow-origin" && serve) {
      if (!value(v)) return out;
      if (v.empty()) return err("--allow-origin needs an origin (scheme://host:port) or *");
      o.allow_origins.push_back(v);
    } else if ((a == "--max-message" || a == "--max-connections") && serve) {
      if (!value(v)) return out;
      unsigned long long n;
      if (!parse_u64(v, 1ull << 32, n) || n == 0) return err(a + " expects an integer from 1 to 2^32, got '" + v + "'");
      (a == "--max-message" ? o.max_message : o.max_connections) = static_cast<std::size_t>(n);
    } else if (a == "--max-sessions" && serve) {
      if (!value(v)) return out;
      unsigned long long n;
      if (!parse_u64(v, 1ull << 32, n) || n == 0) return err(a + " expects an integer from 1 to 2^32, got '" + v + "'");
      o.max_sessions = static_cast<std::size_t>(n);
    } else if (a == "--sse-replay-bytes" && serve) {
      if (!value(v)) return out;
      unsigned long long n;
      if (!parse_u64(v, 1ull << 40, n)) return err(a + " expects bytes (0: no limit), got '" + v + "'");
      o.sse_replay_bytes = static_cast<std::size_t>(n);
    } else if (a == "--session-idle-timeout" && serve) {
      if (!value(v)) return out;
      unsigned long long n;
      if (!parse_u64(v, 1ull << 40, n)) return err(a + " expects milliseconds (0: none), got '" + v + "'");
      o.session_idle_timeout_ms = static_cast<Millis>(n);
    } else if (a == "--idle-timeout" && serve) {
      if (!value(v)) return out;
      unsigned long long n;
      if (!parse_u64(v, 1ull << 40, n)) return err("--idle-timeout expects milliseconds (0: none), got '" + v + "'");
      o.idle_timeout_ms = static_cast<Millis>(n);
    } else if (serve && (a == "--max-in-flight" || a == "--max-batch" || a == "--max-output" ||
                         a == "--max-response")) {
      if (!value(v)) return out;
      unsigned long long n;
      if (!parse_u64(v, 1ull << 40, n) || n == 0)
        return err(a + " expects an integer from 1 to 2^40, got '" + v + "'");
      auto& l = o.limits;
      (a == "--max-in-flight" ? l.max_in_flight
       : a == "--max-batch"   ? l.max_batch
       : a == "--max-output"  ? l.max_output
                              : l.max_response) = static_cast<std::size_t>(n);
    } else if (serve && (a == "--frame-timeout" || a == "--write-timeout" || a == "--grace" ||
                         a == "--reconnect-after" || a == "--downtime")) {
      if (!value(v)) return out;
      unsigned long long ms;
      if (!parse_u64(v, 1ull << 40, ms)) return err(a + " expects milliseconds (0 or more), got '" + v + "'");
      auto& l = o.limits;
      (a == "--frame-timeout"     ? l.frame_timeout
       : a == "--write-timeout"   ? l.write_timeout
       : a == "--reconnect-after" ? l.reconnect_after
       : a == "--downtime"        ? l.downtime
                                  : l.grace) = static_cast<Millis>(ms);
    } else if (a == "--handshake" && serve) {
      if (!no_value()) return out;
      o.handshake = true;
    } else if (a == "--metrics" && o.command != Command::Notify) {
      if (!no_value()) return out;
      o.handshake = o.metrics = true;
    } else if (a == "--compress" && o.command != Command::Notify) {
      if (!value(v)) return out;
      if (v != "zstd") return err("unknown compression '" + v + "' (zstd)");
      if (!compression_available(v)) return err("--compress zstd: this weft was built without libzstd");
      o.handshake = true;
      o.compress = {v};
    } else if (a == "--demo" && serve) {
      if (!no_value()) return out;
      o.demo = true;
    } else if (a == "--timeout" && !serve) {
      if (!value(v)) return out;
      unsigned long long ms;
      if (!parse_u64(v, 1ull << 40, ms) || ms == 0) return err("--timeout expects milliseconds > 0, got '" + v + "'");
      o.timeout_ms = static_cast<Millis>(ms);
    } else if (a == "--retries" && !serve) {
      if (!value(v)) return out;
      unsigned long long n;
      if (!parse_u64(v, 30, n)) return err("--retries expects an integer from 0 to 30, got '" + v + "'");
      o.retries = static_cast<int>(n);
    } else if ((a == "--verbose" || a == "-v") && !serve) {
      if (!no_value()) return out;
      o.verbose = true;
    } else {
      return err("unknown option '" + a + "' for weft " + name + "; try weft " + name + " --help");
    }
  }
  if (o.help) return out;
  if (o.framing == Framing::Ndjson && o.codec == CodecKind::MessagePack)
    return err("--framing ndjson needs --codec json (MessagePack bytes may contain newlines)");

  if (serve) {
    if (!positional.empty()) return err("unexpected argument '" + positional[0] + "' for weft serve");
    return out;
  }
  if (o.session && o.stream) return err("--session and --stream cannot be combined");
  if (o.session) {
    if (!positional.empty()) return err("--session reads requests from stdin; unexpected argument '" + positional[0] + "'");
    return out;
  }
  if (positional.empty()) return err("missing METHOD; try weft " + name + " --help");
  if (positional.size() > 2) return err("unexpected argument '" + positional[2] + "'");
  o.method = positional[0];
  if (o.method.empty()) return err("METHOD must not be empty");
  if (positional.size() == 2) {
    json p = json::parse(positional[1], nullptr, false);
    if (p.is_discarded()) return err("PARAMS_JSON is not valid JSON: " + positional[1]);
    if (!p.is_array() && !p.is_object()) return err("PARAMS_JSON must be a JSON array or object");
    o.params = std::move(p);
  }
  return out;
}

}  // namespace weft::cli
