// The persistent Client when its server drains (weft/host/client.h, "Drain";
// docs/protocol.md, "Drain"): it stops sending on that connection, its calls
// in flight complete once, it reconnects after reconnect_after, and what was
// made meanwhile is answered by the new server, each call once. A drained
// server (Server::drain) runs on its own thread and ends once its
// connections are closed; the second one listens on the same socket.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "weft/host/host.h"

using weft::json;
using weft::host::Client;
using weft::host::Outcome;
using S = weft::host::Outcome::Status;

#include "client_test_support.h"

namespace {

constexpr weft::Millis kReconnectAfter = 300;

weft::DrainNotice reload() { return weft::DrainNotice{"reload", 0, kReconnectAfter}; }

// A server whose drain waits for the calls in flight (quiet_server's grace is 0).
weft::host::ServerOptions draining_server() {
  auto so = quiet_server();
  so.grace_ms = 20000;
  return so;
}

// How many times a server ran "work" for each argument (the servers run on
// their own threads).
struct Tally {
  std::mutex m;
  std::map<int, int> runs;
  void add(int i) {
    std::lock_guard<std::mutex> g(m);
    ++runs[i];
  }
  int of(int i) {
    std::lock_guard<std::mutex> g(m);
    return runs.count(i) ? runs[i] : 0;
  }
  std::size_t size() {
    std::lock_guard<std::mutex> g(m);
    return runs.size();
  }
};

// The new server: "work" answers its argument and is counted.
std::unique_ptr<Running> second_server(const std::string& path, Tally& tally) {
  auto s = std::make_unique<Running>(quiet_server());
  s->server.on_peer([&tally](weft::Peer& p) {
    p.method("work", [&tally](const json& params) -> weft::Result<json> {
      tally.add(params[0].get<int>());
      return json{{"server", 2}, {"i", params[0]}};
    });
  });
  REQUIRE(s->server.listen_unix(path));
  s->start();
  return s;
}

// A first server whose "go" drains it and is then answered, and the second
// server that takes the socket once the first has ended, counting the "note"
// notifications it reads. The client's loop is told of each note (it may
// have nothing else to do by then: a work guard keeps it waiting), and gives
// up after 10 s.
struct ShutdownDuringDrain {
  // Declared before the servers, whose threads post to it, so as to outlive them.
  TempDir dir;
  std::string path = dir.path + "/s.sock";
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard = boost::asio::make_work_guard(io);
  boost::asio::steady_timer give_up{io};
  bool timed_out = false;
  std::vector<int> notes;  // on the client's thread
  std::atomic<bool> first_done{false};
  std::unique_ptr<Running> first = std::make_unique<Running>(draining_server());
  std::unique_ptr<Running> second;

  ShutdownDuringDrain() {
    first->server.on_peer([this](weft::Peer& p) {
      p.method("go", [this](json, weft::Reply r, const weft::CallInfo&) {
        first->server.drain(reload());
        r.ok(json("went"));
      });
    });
    REQUIRE(first->server.listen_unix(path));
    first->thread = std::thread([this] {
      first->server.run();
      first_done = true;
      boost::asio::post(io, [] {});  // wakes the client's loop
    });
    give_up.expires_after(std::chrono::seconds(10));
    give_up.async_wait([this](const boost::system::error_code& ec) { timed_out = !ec; });
  }
  // Once the first server has ended.
  void start_second() {
    first->thread.join();
    second = std::make_unique<Running>(quiet_server());
    second->server.on_peer([this](weft::Peer& p) {
      p.notification("note", [this](const json& params) {
        boost::asio::post(io, [this, i = params[0].get<int>()] { notes.push_back(i); });
      });
    });
    REQUIRE(second->server.listen_unix(path));
    second->start();
  }
  void run(const std::function<bool()>& done) {
    run_until(io, [&] { return timed_out || done(); });
    REQUIRE_FALSE(timed_out);
  }
  ~ShutdownDuringDrain() { give_up.cancel(); }
};

}  // namespace

TEST_CASE("drain: the client stops sending, completes its calls in flight once, reconnects after reconnect_after, "
          "and the calls made meanwhile are answered by the new server once") {
  TempDir dir;
  const std::string path = dir.path + "/s.sock";
  constexpr int kInFlight = 20, kMeanwhile = 30;
  // The first server holds every "work" request; with all of them held it
  // drains (the notice goes out) and then answers them.
  auto first = std::make_unique<Running>(draining_server());
  Tally first_runs;
  std::vector<weft::Reply> held;
  first->server.on_peer([&](weft::Peer& p) {
    p.method("work", [&](json params, weft::Reply r, const weft::CallInfo&) {
      first_runs.add(params[0].get<int>());
      held.push_back(std::move(r));
      if (held.size() < kInFlight) return;
      first->server.drain(reload());
      for (std::size_t i = 0; i < held.size(); ++i) held[i].ok(json{{"server", 1}, {"i", i}});
    });
  });
  std::atomic<bool> first_done{false};
  REQUIRE(first->server.listen_unix(path));
  first->thread = std::thread([&] {
    first->server.run();
    first_done = true;
  });

  boost::asio::io_context io;
  auto cfg = config("unix:" + path);
  std::vector<weft::DrainNotice> notices;
  std::vector<int> answers(kInFlight + kMeanwhile, 0);
  std::vector<Outcome> outcomes(kInFlight + kMeanwhile);
  int settled = 0;
  Client* cp = nullptr;
  auto make = [&](int i) {
    cp->call("work", json::array({i}), {.timeout = 30000}, [&, i](Outcome o) {
      ++answers[i];
      ++settled;
      outcomes[i] = std::move(o);
    });
  };
  cfg.on_drain = [&](const weft::DrainNotice& n) {
    notices.push_back(n);
    for (int i = kInFlight; i < kInFlight + kMeanwhile; ++i) make(i);  // made while draining
  };
  Client client(io, cfg);
  cp = &client;
  std::vector<std::pair<bool, weft::Millis>> events;
  client.on_connection = [&](bool open, const std::string&) { events.emplace_back(open, weft::host::now_ms()); };
  for (int i = 0; i < kInFlight; ++i) make(i);

  // The first server ends once its connection is closed; the second one
  // takes the socket (the client waits reconnect_after before it connects).
  run_until(io, [&] { return events.size() == 2 && first_done; });
  first->thread.join();
  Tally second_runs;
  auto second = second_server(path, second_runs);
  run_until(io, [&] { return settled == kInFlight + kMeanwhile; });

  REQUIRE(notices.size() == 1);
  CHECK(notices[0].reason == "reload");
  CHECK(notices[0].reconnect_after == kReconnectAfter);
  for (int i = 0; i < kInFlight; ++i) {
    INFO("in flight " << i);
    REQUIRE(answers[i] == 1);
    REQUIRE(outcomes[i].status == S::Ok);
    CHECK(outcomes[i].result["server"] == 1);  // completed by the draining server
    CHECK(first_runs.of(i) == 1);
    CHECK(second_runs.of(i) == 0);
  }
  for (int i = kInFlight; i < kInFlight + kMeanwhile; ++i) {
    INFO("made meanwhile " << i);
    REQUIRE(answers[i] == 1);
    REQUIRE(outcomes[i].status == S::Ok);
    CHECK(outcomes[i].result == json{{"server", 2}, {"i", i}});
    CHECK(outcomes[i].attempts == 1);  // never sent on the drained connection
    CHECK(first_runs.of(i) == 0);
    CHECK(second_runs.of(i) == 1);
  }
  REQUIRE(events.size() == 3);
  CHECK(events[1].first == false);
  CHECK(events[2].first == true);
  CHECK(events[2].second - events[1].second >= kReconnectAfter);  // waited reconnect_after
  CHECK(client.connections() == 2);
  CHECK(client.pending() == 0);
}

TEST_CASE("drain: a call with retry the draining server refused with -32005 is sent again after the reconnection, "
          "once; one without retry fails with that -32005") {
  TempDir dir;
  const std::string path = dir.path + "/s.sock";
  // "first" drains the server from inside its handler: the requests behind
  // it, already on their way, reach a draining server and are refused -32005
  // by the core, unrun.
  auto first = std::make_unique<Running>(draining_server());
  Tally first_runs;
  first->server.on_peer([&](weft::Peer& p) {
    p.method("first", [&](const json&) -> weft::Result<json> {
      first->server.drain(reload());
      return json("first");
    });
    p.method("work", [&](const json& params) -> weft::Result<json> {
      first_runs.add(params[0].get<int>());
      return json{{"server", 1}};
    });
  });
  std::atomic<bool> first_done{false};
  REQUIRE(first->server.listen_unix(path));
  first->thread = std::thread([&] {
    first->server.run();
    first_done = true;
  });

  boost::asio::io_context io;
  Client client(io, config("unix:" + path));
  client.connect();
  run_until(io, [&] { return client.state() == Client::State::Open; });
  std::vector<Outcome> outcomes(3);
  std::vector<int> answers(3, 0);
  int settled = 0;
  auto done = [&](int i) {
    return [&, i](Outcome o) {
      ++answers[i];
      ++settled;
      outcomes[i] = std::move(o);
    };
  };
  // One turn of the loop: the three requests leave in one write.
  client.call("first", std::nullopt, {.timeout = 30000}, done(0));
  client.call("work", json::array({1}), {.timeout = 30000}, done(1));
  client.call("work", json::array({2}), {.timeout = 30000, .retry = true}, done(2));
  run_until(io, [&] { return settled == 2 && first_done; });
  first->thread.join();
  Tally second_runs;
  auto second = second_server(path, second_runs);
  run_until(io, [&] { return settled == 3; });

  CHECK(answers == std::vector<int>{1, 1, 1});
  CHECK(outcomes[0].result == "first");
  // Without retry: the refusal is the answer (the call was not run anywhere).
  REQUIRE(outcomes[1].status == S::RemoteError);
  CHECK(outcomes[1].error.code == weft::code::kUnavailable);
  CHECK(outcomes[1].attempts == 1);
  CHECK(first_runs.of(1) == 0);
  CHECK(second_runs.of(1) == 0);
  // With retry: sent once more, on the new connection, and run there once.
  INFO(outcomes[2].error.message);
  REQUIRE(outcomes[2].status == S::Ok);
  CHECK(outcomes[2].result["server"] == 2);
  CHECK(outcomes[2].attempts == 2);  // refused once, answered once: not also retried by the backoff
  CHECK(first_runs.of(2) == 0);
  CHECK(second_runs.of(2) == 1);
  CHECK(client.connections() == 2);
}

TEST_CASE("drain: with reconnect off, a call made while draining fails at once with -32005 and the notice's data") {
  TempDir dir;
  const std::string path = dir.path + "/s.sock";
  // "hold" drains the server and is answered when the client says "release".
  auto first = std::make_unique<Running>(draining_server());
  std::vector<weft::Reply> held;
  first->server.on_peer([&](weft::Peer& p) {
    p.method("hold", [&](json, weft::Reply r, const weft::CallInfo&) {
      held.push_back(std::move(r));
      first->server.drain(reload());
    });
    p.notification("release", [&](const json&) {
      for (auto& r : held) r.ok(json("released"));
    });
  });
  REQUIRE(first->server.listen_unix(path));
  first->start();

  boost::asio::io_context io;
  auto cfg = config("unix:" + path);
  cfg.reconnect = false;
  std::optional<Outcome> during, in_flight;
  Client* cp = nullptr;
  cfg.on_drain = [&](const weft::DrainNotice&) {
    cp->call("hold", std::nullopt, {.timeout = 30000}, [&](Outcome o) { during = std::move(o); });
    REQUIRE(cp->notify("release", std::nullopt));
  };
  Client client(io, cfg);
  cp = &client;
  client.call("hold", std::nullopt, {.timeout = 30000}, [&](Outcome o) { in_flight = std::move(o); });
  run_until(io, [&] { return during && in_flight; });

  REQUIRE(during->status == S::RemoteError);
  CHECK(during->error.code == weft::code::kUnavailable);
  REQUIRE(during->error.data);
  CHECK((*during->error.data)["retry_after"] == kReconnectAfter);
  CHECK((*during->error.data)["reason"] == "reload");
  CHECK(during->attempts == 1);
  REQUIRE(in_flight->status == S::Ok);
  CHECK(in_flight->result == "released");  // the call in flight still completed
  CHECK(held.size() == 1);                 // the refused call never reached the server
}

TEST_CASE("drain: calls waiting for the reconnection are bounded by max_pending; beyond, -32003 at once") {
  TempDir dir;
  const std::string path = dir.path + "/s.sock";
  // "hold" drains the server and is answered at once: the connection closes
  // after it, and the client waits reconnect_after.
  auto first = std::make_unique<Running>(draining_server());
  first->server.on_peer([&](weft::Peer& p) {
    p.method("hold", [&](const json&) -> weft::Result<json> {
      first->server.drain(reload());
      return json("held");
    });
  });
  std::atomic<bool> first_done{false};
  REQUIRE(first->server.listen_unix(path));
  first->thread = std::thread([&] {
    first->server.run();
    first_done = true;
  });

  boost::asio::io_context io;
  auto cfg = config("unix:" + path);
  cfg.peer_limits.max_pending = 4;
  std::vector<Outcome> outcomes;
  Client* cp = nullptr;
  auto make = [&](int i) {
    cp->call("work", json::array({i}), {.timeout = 30000}, [&](Outcome o) { outcomes.push_back(std::move(o)); });
  };
  cfg.on_drain = [&](const weft::DrainNotice&) {
    for (int i = 0; i < 3; ++i) make(i);  // while the drained connection is open
  };
  Client client(io, cfg);
  cp = &client;
  std::optional<Outcome> held;
  client.call("hold", std::nullopt, {.timeout = 30000}, [&](Outcome o) { held = std::move(o); });
  int closes = 0;
  client.on_connection = [&](bool open, const std::string&) {
    if (open) return;
    ++closes;
    for (int i = 3; i < 6; ++i) make(i);  // after it closed, before the reconnection
  };
  run_until(io, [&] { return held && closes == 1 && first_done && outcomes.size() == 2; });
  first->thread.join();
  // Two of the six were over the bound of four waiting calls.
  for (auto& o : outcomes) UNSCOPED_INFO(o.error.code << " " << o.error.message);
  REQUIRE(outcomes.size() == 2);
  for (auto& o : outcomes) {
    CHECK(o.status == S::RemoteError);
    CHECK(o.error.code == weft::code::kOverloaded);
  }
  Tally second_runs;
  auto second = second_server(path, second_runs);
  run_until(io, [&] { return outcomes.size() == 6; });
  int ok = 0;
  for (auto& o : outcomes) ok += o.ok() ? 1 : 0;
  CHECK(ok == 4);
  CHECK(second_runs.size() == 4);
  for (int i = 0; i < 4; ++i) CHECK(second_runs.of(i) == 1);  // the first four made, each once
}

TEST_CASE("drain: shutdown while the draining connection is open writes the notifications made meanwhile "
          "on the next connection, then closes") {
  ShutdownDuringDrain t;
  auto cfg = config("unix:" + t.path);
  Client* cp = nullptr;
  bool shut = false;
  cfg.on_drain = [&](const weft::DrainNotice&) {
    REQUIRE(cp->notify("note", json::array({1})));
    REQUIRE(cp->notify("note", json::array({2})));
    cp->shutdown([&] { shut = true; });
  };
  Client client(t.io, cfg);
  cp = &client;
  std::vector<bool> events;
  client.on_connection = [&](bool open, const std::string&) { events.push_back(open); };
  std::optional<Outcome> go;
  client.call("go", std::nullopt, {.timeout = 30000}, [&](Outcome o) { go = std::move(o); });

  t.run([&] { return events.size() == 2 && t.first_done; });
  t.start_second();
  t.run([&] { return shut && t.notes.size() == 2; });

  CHECK(t.notes == std::vector<int>{1, 2});  // each once, in order
  CHECK(events == std::vector<bool>{true, false, true, false});
  CHECK(client.connections() == 2);
  CHECK(client.unsent_notifications() == 0);
  CHECK(client.queued_notifications() == 0);
  CHECK(client.state() == Client::State::Closed);
  REQUIRE(go);  // settled: answered by the draining server, or ended by the shutdown
  CHECK_FALSE(client.notify("note", json::array({3})));  // closed for good
}

TEST_CASE("drain: shutdown while waiting out reconnect_after writes the notifications made meanwhile "
          "on the next connection, then closes") {
  ShutdownDuringDrain t;
  auto cfg = config("unix:" + t.path);
  Client* cp = nullptr;
  bool shut = false;
  cfg.on_drain = [&](const weft::DrainNotice&) { REQUIRE(cp->notify("note", json::array({1}))); };
  Client client(t.io, cfg);
  cp = &client;
  std::vector<bool> events;
  client.on_connection = [&](bool open, const std::string&) {
    events.push_back(open);
    // The drained connection has closed (its call answered): reconnect_after runs.
    if (events.size() == 2) cp->shutdown([&] { shut = true; });
  };
  std::optional<Outcome> go;
  client.call("go", std::nullopt, {.timeout = 30000}, [&](Outcome o) { go = std::move(o); });

  t.run([&] { return events.size() == 2 && t.first_done; });
  REQUIRE(go);
  CHECK(go->status == S::Ok);  // the call in flight completed before the connection closed
  CHECK(client.queued_notifications() == 1);
  t.start_second();
  t.run([&] { return shut && t.notes.size() == 1; });

  CHECK(t.notes == std::vector<int>{1});
  CHECK(events == std::vector<bool>{true, false, true, false});
  CHECK(client.connections() == 2);
  CHECK(client.unsent_notifications() == 0);
  CHECK(client.state() == Client::State::Closed);
}
