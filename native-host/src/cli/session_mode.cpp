// session_mode.cpp — see session_mode.h.
#include "cli/session_mode.h"

#include <algorithm>
#include <deque>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

namespace weft::cli {

namespace {

std::string dump(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

SessionLine bad(std::size_t n, int code, const std::string& why) {
  SessionLine l;
  l.kind = SessionLine::Kind::Bad;
  l.id = Id();
  l.error = Error(code, "line " + std::to_string(n) + ": " + why);
  return l;
}

// A typed rpc.handshake offering compression (the capability
// "compression", docs/protocol.md "Compression") is refused here: a server
// that agrees compresses its next large answers, which this session's
// connection, set up without --compress, cannot read. --compress makes the
// session's own handshake agree on it, on every connection.
SessionLine checked(SessionLine l, std::size_t n) {
  // A notification cannot agree to anything: it goes as it is.
  if (l.kind != SessionLine::Kind::Call || l.method != "rpc.handshake" || !l.params || !l.params->is_object())
    return l;
  auto caps = l.params->find("capabilities");
  if (caps == l.params->end() || !caps->is_array() ||
      std::find(caps->begin(), caps->end(), json("compression")) == caps->end())
    return l;
  Id id = l.id;
  l = bad(n, code::kInvalidParams,
          "rpc.handshake offering compression is not sent from session mode (its answers would arrive "
          "compressed); pass --compress zstd to weft call instead");
  l.id = std::move(id);
  return l;
}

}  // namespace

SessionLine parse_session_line(const std::string& raw, std::size_t n, const CodecLimits& limits) {
  const auto first = raw.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = raw.find_last_not_of(" \t\r");
  const std::string line = raw.substr(first, last - first + 1);
  SessionLine l;
  if (line[0] == '{' || line[0] == '[') {
    // The codec's reader keeps the text of a numeric id (1.50, 1E3, big
    // integers) so that it is echoed as it was written (docs/protocol.md).
    auto doc = make_codec(CodecKind::Json, limits)->decode(line);
    if (!doc) return bad(n, doc.error().code, doc.error().message);
    json& v = doc->value;
    if (v.is_array()) return bad(n, code::kInvalidRequest, "batches are not supported in session mode; one request per line");
    if (!v.is_object()) return bad(n, code::kInvalidRequest, "a request must be a JSON object");
    if (auto j = v.find("jsonrpc"); j != v.end() && *j != "2.0")
      return bad(n, code::kInvalidRequest, "\"jsonrpc\" must be \"2.0\"");
    if (!v.contains("method") || !v["method"].is_string())
      return bad(n, code::kInvalidRequest, "\"method\" must be a string");
    if (v.contains("params") && !v["params"].is_array() && !v["params"].is_object())
      return bad(n, code::kInvalidRequest, "\"params\" must be an array or an object");
    l.method = v["method"].get<std::string>();
    if (v.contains("params")) l.params = v["params"];
    if (v.contains("id")) {
      const std::string* lexeme = doc->id_lexemes.empty() ? nullptr : &doc->id_lexemes.front().lexeme;
      auto id = Id::from_json(v["id"], lexeme);
      if (!id) return bad(n, code::kInvalidRequest, "\"id\" must be a string, a number or null");
      l.kind = SessionLine::Kind::Call;
      l.id = std::move(*id);
    } else {
      l.kind = SessionLine::Kind::Notify;
    }
    return checked(std::move(l), n);
  }
  const auto space = line.find_first_of(" \t");
  l.method = line.substr(0, space);
  if (space != std::string::npos) {
    const std::string rest = line.substr(line.find_first_not_of(" \t", space));
    json p = json::parse(rest, nullptr, false);
    if (p.is_discarded()) return bad(n, code::kParseError, "PARAMS_JSON is not valid JSON: " + rest);
    if (!p.is_array() && !p.is_object()) return bad(n, code::kInvalidParams, "PARAMS_JSON must be an array or an object");
    l.params = std::move(p);
  }
  l.kind = SessionLine::Kind::Call;
  l.id = Id::integer(static_cast<std::int64_t>(n));
  return checked(std::move(l), n);
}

std::string session_answer(const Id& id, const host::Outcome& o) {
  // Members in the order of the specification's examples (§7).
  std::string s = "{\"jsonrpc\":\"2.0\",";
  s += o.ok() ? "\"result\":" + dump(o.result) : "\"error\":" + dump(o.error.to_json());
  s += ",\"id\":" + id.to_string() + "}";
  return s;
}

int run_session(const host::ClientConfig& config, std::FILE* in, std::FILE* out) {
  boost::asio::io_context io(1);
  auto guard = boost::asio::make_work_guard(io);
  host::Client client(io, config);

  // Answers leave in input order: slot k waits for line k's answer.
  struct Slot {
    std::optional<std::string> text;
  };
  std::deque<Slot> slots;
  std::size_t printed = 0;  // slots already written (and popped)
  bool eof = false;
  int worst = 0;
  auto grade = [&](int code) { worst = std::max(worst, code); };
  auto print_ready = [&] {
    while (!slots.empty() && slots.front().text) {
      std::string s = *slots.front().text + "\n";
      std::fwrite(s.data(), 1, s.size(), out);
      slots.pop_front();
      ++printed;
    }
    std::fflush(out);
  };
  bool finishing = false;
  std::size_t notes = 0;
  auto maybe_finish = [&] {
    if (eof && slots.empty() && !finishing) {
      finishing = true;
      // Notifications still queued are written before the connection closes.
      client.shutdown([&] { guard.reset(); });
    }
  };

  std::size_t number = 0;
  auto on_line = [&](const std::string& text) {
    SessionLine l = parse_session_line(text, ++number, config.codec_limits);
    switch (l.kind) {
      case SessionLine::Kind::Blank: return;
      case SessionLine::Kind::Notify: {
        ++notes;
        if (auto r = client.notify(l.method, l.params); !r) {
          slots.push_back({session_answer(Id(), host::Outcome{host::Outcome::Status::ConnectFailed, {}, r.error()})});
          grade(3);
        }
        break;
      }
      case SessionLine::Kind::Bad: {
        host::Outcome o;
        o.status = host::Outcome::Status::RemoteError;
        o.error = l.error;
        slots.push_back({session_answer(l.id, o)});
        grade(1);
        break;
      }
      case SessionLine::Kind::Call: {
        const std::size_t index = printed + slots.size();
        slots.push_back({});
        client.call(l.method, l.params, {}, [&, index, id = l.id](host::Outcome o) {
          grade(o.exit_code());
          slots[index - printed].text = session_answer(id, o);
          print_ready();
          maybe_finish();
        });
        break;
      }
    }
    print_ready();
  };

  // stdin is read on its own thread (a pipe, a terminal or a regular file
  // alike); each line is handed to the event loop.
  std::thread reader([&] {
    char* buf = nullptr;
    std::size_t cap = 0;
    ssize_t n;
    while ((n = ::getline(&buf, &cap, in)) >= 0) {
      std::string line(buf, static_cast<std::size_t>(n));
      if (!line.empty() && line.back() == '\n') line.pop_back();
      boost::asio::post(io, [&, line = std::move(line)] { on_line(line); });
    }
    std::free(buf);
    boost::asio::post(io, [&] {
      eof = true;
      print_ready();
      maybe_finish();
    });
  });
  io.run();
  reader.join();
  if (notes > 0 && client.connections() == 0) {
    // Notifications have no answer line: a connection that never opened is
    // reported here.
    std::string why = client.last_error() ? client.last_error()->message : "could not connect";
    std::fprintf(stderr, "weft: notifications not sent: %s\n", why.c_str());
    grade(3);
  }
  if (client.unsent_notifications() > 0) grade(3);  // too large to send (logged)
  return worst;
}

}  // namespace weft::cli
