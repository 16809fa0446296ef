// Replays tests/vectors/peer/*.txt against the native core (format:
// tests/vectors/peer/README.md). tests/js/vectors.test.mjs replays the same
// files against the WebAssembly build; both must produce the same bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>

#include "count_fixture.h"
#include "demo.h"
#include "peer_script.h"
#include "weft/weft.h"

using namespace weft;

namespace {

struct Sleep {
  Millis due;
  std::uint64_t order;
  std::int64_t ms;
  Reply reply;
};

struct Harness {
  std::deque<std::string> out;
  std::map<std::int64_t, json> chunks;  // values received per streamed call
  std::vector<std::string> diags;
  std::map<std::int64_t, json> settled;
  std::map<std::int64_t, json> metrics;  // what on_metrics received, per call
  std::vector<std::shared_ptr<Sleep>> sleeps;
  std::uint64_t sleep_order = 0;
  Millis now = 0;
  std::unique_ptr<Connection> conn;

  // `options`: the case's `options` step (README), or an empty object.
  explicit Harness(const json& options) {
    ConnectionOptions o;
    o.framing = Framing::Ndjson;
    o.codec = CodecKind::Json;
    // The host's µs clock is the case's clock (`time MS`).
    o.clock_us = [this] { return static_cast<std::int64_t>(now) * 1000; };
    if (auto it = options.find("handshake"); it != options.end()) {
      Handshake hs;
      hs.capabilities = it->get<std::vector<std::string>>();
      o.handshake = std::move(hs);
    }
    if (auto it = options.find("max_stream_chunk"); it != options.end())
      o.peer_limits.max_stream_chunk = it->get<std::size_t>();
    if (auto it = options.find("max_batch"); it != options.end())
      o.peer_limits.max_batch = it->get<std::size_t>();
    o.write = [this](std::string_view bytes) {
      // One frame per write: the payload without its '\n'.
      out.emplace_back(bytes.substr(0, bytes.size() - 1));
    };
    o.diagnostic = [this](const Diagnostic& d) { diags.push_back(kind_name(d.kind)); };
    conn = std::make_unique<Connection>(std::move(o));
    register_demo_methods(conn->peer());
    ParamSpec spec;
    spec.params = {{"ms", ParamType::Integer}};
    conn->peer().method(
        "sleep",
        MethodHandler([this](json p, Reply reply, const CallInfo&) {
          auto s = std::make_shared<Sleep>();
          s->ms = p["ms"].get<std::int64_t>();
          s->due = now + s->ms;
          s->order = sleep_order++;
          s->reply = std::move(reply);
          std::weak_ptr<Sleep> w = s;
          s->reply.on_cancel([w] {
            if (auto s = w.lock()) s->reply.error(Error(code::kRequestCancelled, "Request cancelled"));
          });
          sleeps.push_back(std::move(s));
        }),
        spec);
    test::serve_count(conn->peer());
  }

  static std::string kind_name(Diagnostic::Kind k) {
    switch (k) {
      case Diagnostic::Kind::UnknownResponse: return "UnknownResponse";
      case Diagnostic::Kind::InvalidResponse: return "InvalidResponse";
      case Diagnostic::Kind::UnhandledNotification: return "UnhandledNotification";
      case Diagnostic::Kind::NotificationFailed: return "NotificationFailed";
      case Diagnostic::Kind::ErrorWithoutId: return "ErrorWithoutId";
      case Diagnostic::Kind::LateReply: return "LateReply";
      case Diagnostic::Kind::BadFrame: return "BadFrame";
      case Diagnostic::Kind::IgnoredMessage: return "IgnoredMessage";
      case Diagnostic::Kind::SendFailed: return "SendFailed";
    }
    return "?";
  }

  void set_time(Millis t) {
    now = t;
    // Sleeps first, by due time then start order; then the peer's timeouts.
    std::stable_sort(sleeps.begin(), sleeps.end(), [](const auto& a, const auto& b) {
      return a->due != b->due ? a->due < b->due : a->order < b->order;
    });
    while (!sleeps.empty() && sleeps.front()->due <= now) {
      auto s = sleeps.front();
      sleeps.erase(sleeps.begin());
      s->reply.ok(s->ms);
    }
    conn->advance(now);
  }

  CallOptions metered(std::int64_t* id_slot) {
    CallOptions o;
    o.on_metrics = [this, id_slot](const ResponseMetrics& m) {
      metrics[*id_slot] = json{{"processing_time_us", m.processing_time_us}, {"response_size", m.response_size}};
    };
    return o;
  }

  CallCallback settle_into(std::int64_t* id_slot) {
    return [this, id_slot](Result<json> r) {
      json j = r.ok() ? json{{"result", r.value()}} : json{{"error", r.error().to_json()}};
      settled[*id_slot] = std::move(j);
    };
  }
};

void run_case(const std::string& file, const test::ScriptCase& c) {
  const bool configured = !c.steps.empty() && c.steps.front().op == "options";
  Harness h(configured ? json::parse(c.steps.front().rest) : json::object());
  std::vector<std::unique_ptr<std::int64_t>> id_slots;
  auto expect_drained = [&](int line) {
    INFO(file << ":" << line << " — unexpected output after this step");
    CHECK(h.out.empty());
    if (!h.out.empty()) CHECK(h.out.front() == "");
    h.out.clear();
  };
  int last_line = 0;
  for (const auto& s : c.steps) {
    INFO(file << ":" << s.line << ": " << s.op << " " << s.rest);
    if (s.op == "options") {
      CHECK(&s == &c.steps.front());  // the peer is built with them
      continue;
    }
    if (s.op == "<--") {
      REQUIRE_FALSE(h.out.empty());
      CHECK(h.out.front() == s.rest);
      h.out.pop_front();
      continue;
    }
    expect_drained(last_line);
    last_line = s.line;
    if (s.op == "-->") {
      h.conn->feed(s.rest + "\n", h.now);
    } else if (s.op == "call") {
      std::string rest = s.rest;
      std::optional<Millis> timeout;
      if (auto p = rest.rfind(" timeout="); p != std::string::npos) {
        timeout = std::stoll(rest.substr(p + 9));
        rest = rest.substr(0, p);
      }
      auto sp = rest.find(' ');
      std::string method = rest.substr(0, sp);
      std::string ptext = sp == std::string::npos ? "-" : rest.substr(sp + 1);
      std::optional<json> params;
      if (ptext != "-") params = json::parse(ptext);
      id_slots.push_back(std::make_unique<std::int64_t>(0));
      auto* slot = id_slots.back().get();
      CallOptions co = h.metered(slot);
      co.timeout = timeout;
      auto r = h.conn->peer().call(method, params, h.settle_into(slot), std::move(co), h.now);
      REQUIRE(r.ok());
      *slot = r->as_int();
    } else if (s.op == "stream") {
      std::string rest = s.rest;
      auto p = rest.rfind(" credit=");
      REQUIRE(p != std::string::npos);
      StreamOptions so;
      so.credit = static_cast<std::uint32_t>(std::stoul(rest.substr(p + 8)));
      rest = rest.substr(0, p);
      auto sp = rest.find(' ');
      std::optional<json> params;
      if (sp != std::string::npos && rest.substr(sp + 1) != "-") params = json::parse(rest.substr(sp + 1));
      id_slots.push_back(std::make_unique<std::int64_t>(0));
      auto* slot = id_slots.back().get();
      so.on_chunk = [&h, slot](Chunk&& c) {
        auto& got = h.chunks[*slot];
        if (got.is_null()) got = json::array();
        got.push_back(std::move(c.value));
      };
      auto r = h.conn->peer().stream(rest.substr(0, sp), params, std::move(so), h.settle_into(slot),
                                     h.metered(slot), h.now);
      REQUIRE(r.ok());
      *slot = r->as_int();
    } else if (s.op == "chunks") {
      auto sp = s.rest.find(' ');
      json got = h.chunks[std::stoll(s.rest.substr(0, sp))];
      CHECK((got.is_null() ? json::array() : got) == json::parse(s.rest.substr(sp + 1)));
    } else if (s.op == "notify") {
      auto sp = s.rest.find(' ');
      std::optional<json> params;
      if (sp != std::string::npos && s.rest.substr(sp + 1) != "-") params = json::parse(s.rest.substr(sp + 1));
      REQUIRE(h.conn->peer().notify(s.rest.substr(0, sp), params).ok());
    } else if (s.op == "cancel") {
      CHECK(h.conn->peer().cancel(Id::integer(std::stoll(s.rest))));
    } else if (s.op == "time") {
      h.set_time(std::stoll(s.rest));
    } else if (s.op == "close") {
      h.conn->close();
    } else if (s.op == "settled") {
      auto sp = s.rest.find(' ');
      const std::int64_t id = std::stoll(s.rest.substr(0, sp));
      REQUIRE(h.settled.count(id) == 1);
      CHECK(h.settled[id] == json::parse(s.rest.substr(sp + 1)));
    } else if (s.op == "metrics") {
      auto sp = s.rest.find(' ');
      const std::int64_t id = std::stoll(s.rest.substr(0, sp));
      CHECK(h.metrics[id] == json::parse(s.rest.substr(sp + 1)));  // null: none
    } else if (s.op == "pending") {
      CHECK(h.conn->peer().pending() == std::stoul(s.rest));
    } else if (s.op == "inflight") {
      CHECK(h.conn->peer().in_flight() == std::stoul(s.rest));
    } else if (s.op == "diag") {
      CHECK(std::find(h.diags.begin(), h.diags.end(), s.rest) != h.diags.end());
    } else {
      FAIL("unknown step '" << s.op << "'");
    }
  }
  expect_drained(last_line);
}

}  // namespace

TEST_CASE("endpoint vectors replay exactly", "[vectors]") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(WEFT_VECTORS_DIR) / "peer"))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 3);
  std::size_t cases = 0;
  for (const auto& f : files) {
    for (const auto& c : test::parse_script(f.string())) {
      ++cases;
      DYNAMIC_SECTION(f.filename().string() << ": " << c.name) { run_case(f.filename().string(), c); }
    }
  }
  CHECK(cases > 0);
}
