// The persistent Client (weft/host/client.h): multiplexing, reconnection,
// requests from the server, cancellation, timeouts, opt-in retry, completion
// tokens. Servers run in this process on their own thread; the client runs
// on the test's thread. (Transports, exec children and addresses:
// client_transport_test.cpp.)
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "demo.h"
#include "weft/host/host.h"

using weft::json;
using weft::host::Client;
using weft::host::ClientConfig;
using weft::host::Outcome;
using S = weft::host::Outcome::Status;

#include "client_test_support.h"

TEST_CASE("10,000 calls in flight on one connection are each answered exactly once") {
  TempDir dir;
  Running srv(quiet_server());
  srv.server.on_peer([](weft::Peer& p) { weft::register_demo_methods(p); });
  const std::string address = srv.serve_unix(dir.path + "/s.sock");

  boost::asio::io_context io;
  Client client(io, config(address));
  constexpr int kCalls = 10000;
  std::vector<int> answers(kCalls, 0);
  std::vector<json> results(kCalls);
  int settled = 0;
  for (int i = 0; i < kCalls; ++i)
    client.call("add", json::array({i, 1}), {.timeout = 60000}, [&, i](Outcome o) {
      ++answers[i];
      ++settled;
      results[i] = o.ok() ? o.result : json(o.error.message);
    });
  CHECK(client.pending() == kCalls);  // all issued before any answer
  run_until(io, [&] { return settled == kCalls; });
  for (int i = 0; i < kCalls; ++i) {
    REQUIRE(answers[i] == 1);
    REQUIRE(results[i] == i + 1);
  }
  CHECK(client.connections() == 1);
  CHECK(client.pending() == 0);
}

TEST_CASE("server restarted mid-run: every call answered once, or failed once with -32002") {
  TempDir dir;
  const std::string path = dir.path + "/s.sock";
  constexpr int kCalls = 400;
  // The first server holds every request and stops once it holds them all.
  auto first = std::make_unique<Running>(quiet_server());
  std::atomic<int> held{0};
  std::vector<weft::Reply> replies;
  first->server.on_peer([&](weft::Peer& p) {
    p.method("work", [&](json, weft::Reply r, const weft::CallInfo&) {
      replies.push_back(std::move(r));
      if (++held == kCalls) first->server.stop();
    });
  });
  REQUIRE(first->server.listen_unix(path));
  first->start();

  boost::asio::io_context io;
  Client client(io, config("unix:" + path));
  std::vector<int> answers(kCalls, 0);
  std::vector<Outcome> outcomes(kCalls);
  int settled = 0;
  for (int i = 0; i < kCalls; ++i) {
    weft::host::CallPolicy p;
    p.timeout = 30000;
    p.retry = i % 2 == 0;  // idempotent calls opt in
    client.call("work", json::array({i}), p, [&, i](Outcome o) {
      ++answers[i];
      ++settled;
      outcomes[i] = std::move(o);
    });
  }
  // Wait (on the client's loop) until the first server has failed the
  // connection, then start the second one on the same path.
  run_until(io, [&] { return settled == kCalls / 2; });
  first->thread.join();
  replies.clear();
  Running second(quiet_server());
  second.server.on_peer([](weft::Peer& p) {
    p.method("work", [](const json& params) -> weft::Result<json> { return params[0]; });
  });
  REQUIRE(second.server.listen_unix(path));
  second.start();
  run_until(io, [&] { return settled == kCalls; });

  for (int i = 0; i < kCalls; ++i) {
    REQUIRE(answers[i] == 1);
    if (i % 2 == 0) {
      REQUIRE(outcomes[i].status == S::Ok);  // sent again on the new connection
      REQUIRE(outcomes[i].result == i);
      REQUIRE(outcomes[i].attempts == 2);
    } else {
      REQUIRE(outcomes[i].status == S::ConnectFailed);
      REQUIRE(outcomes[i].error.code == weft::code::kClosed);
      REQUIRE(outcomes[i].exit_code() == 3);
    }
  }
  CHECK(client.connections() == 2);
}

TEST_CASE("requests and notifications from the server are served by the client's registrations") {
  TempDir dir;
  Running srv(quiet_server());
  std::atomic<int> notes{0};
  srv.server.on_peer([&](weft::Peer& p) {
    weft::Peer* peer = &p;
    // ask: calls the client's whoami and answers with what it said.
    p.method("ask", [peer](json, weft::Reply r, const weft::CallInfo&) {
      auto reply = std::make_shared<weft::Reply>(std::move(r));
      (void)peer->notify("progress", json::array({50}));
      (void)peer->call("whoami", json::array({"server"}),
                       [reply](weft::Result<json> res) { reply->respond(std::move(res)); }, {},
                       weft::host::now_ms());
    });
    p.notification("seen", [&](const json&) { ++notes; });
    p.method("notes", [&](const json&) -> weft::Result<json> { return json(notes.load()); });
  });
  const std::string address = srv.serve_unix(dir.path + "/s.sock");

  boost::asio::io_context io;
  Client client(io, config(address));
  std::vector<json> progress;
  client.method("whoami", [](const json& p) -> weft::Result<json> {
    return json("client, asked by " + p[0].get<std::string>());
  });
  client.notification("progress", [&](const json& p) { progress.push_back(p); });
  REQUIRE(client.notify("seen", std::nullopt));
  REQUIRE(client.notify("seen", std::nullopt));
  std::optional<Outcome> asked, counted;
  client.call("ask", std::nullopt, {.timeout = 10000}, [&](Outcome o) { asked = std::move(o); });
  client.call("notes", std::nullopt, {.timeout = 10000}, [&](Outcome o) { counted = std::move(o); });
  run_until(io, [&] { return asked && counted; });
  REQUIRE(asked->status == S::Ok);
  CHECK(asked->result == "client, asked by server");
  REQUIRE(progress.size() == 1);
  CHECK(progress[0] == json::array({50}));
  CHECK(counted->result == 2);  // notifications sent before the call arrived first
}

TEST_CASE("notify_and_close on a connection a call or a stream opened: Ok at once, delivered, closed") {
  TempDir dir;
  Running srv(quiet_server());
  std::atomic<int> notes{0};
  srv.server.on_peer([&](weft::Peer& p) {
    weft::host::register_bytes(p);
    p.method("ping", weft::SyncHandler([](const json&) -> weft::Result<json> { return json("pong"); }));
    p.notification("seen", [&](const json&) { ++notes; });
    // Read on the server's thread: notifications seen, connections open.
    p.method("state", weft::SyncHandler([&](const json&) -> weft::Result<json> {
               return json::array({notes.load(), srv.server.connections()});
             }));
  });
  const std::string address = srv.serve_unix(dir.path + "/s.sock");
  // Delivered and closed, soon after: only the probe's connection is left.
  weft::host::BlockingClient probe(config(address));
  auto settled = [&](int want) {
    json st;
    for (int i = 0; i < 200; ++i) {
      st = probe.call("state", std::nullopt, {.timeout = 5000}).result;
      if (st == json::array({want, 1})) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(st == json::array({want, 1}));
  };

  weft::host::BlockingClient c(config(address));
  SECTION("after a call") {
    REQUIRE(c.call("ping", std::nullopt, {.timeout = 5000}).ok());
  }
  SECTION("after a stream") {
    auto s = c.stream("bytes", json{{"count", 2}, {"size", 1}}, {.timeout = 5000});
    while (s.next()) {
    }
    REQUIRE(s.outcome().ok());
  }
  REQUIRE(c.client().state() == Client::State::Open);
  const auto t0 = std::chrono::steady_clock::now();
  Outcome o = c.notify_and_close("seen", json::array({1}), 5000);
  CHECK(o.status == S::Ok);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  CHECK(c.client().state() == Client::State::Closed);
  settled(1);
  // Without a timeout: nothing but the close ends the wait.
  weft::host::BlockingClient c2(config(address));
  REQUIRE(c2.call("ping", std::nullopt, {.timeout = 5000}).ok());
  CHECK(c2.notify_and_close("seen", std::nullopt).status == S::Ok);
  settled(2);
}

TEST_CASE("notify_and_close on a connection the server has closed meanwhile fails; it never reports Ok") {
  TempDir dir;
  auto srv = std::make_unique<Running>(quiet_server());
  std::atomic<int> notes{0};
  srv->server.on_peer([&](weft::Peer& p) {
    p.method("ping", weft::SyncHandler([](const json&) -> weft::Result<json> { return json("pong"); }));
    p.notification("seen", [&](const json&) { ++notes; });
  });
  const std::string address = srv->serve_unix(dir.path + "/s.sock");
  weft::host::BlockingClient c(config(address));
  REQUIRE(c.call("ping", std::nullopt, {.timeout = 5000}).ok());
  // The server drains and closes while the client's loop is not running: the
  // client still holds the connection as open, and its write fails (EPIPE).
  srv.reset();
  REQUIRE(c.client().state() == Client::State::Open);
  Outcome o = c.notify_and_close("seen", json::array({1}), 5000);
  INFO(o.error.message);
  CHECK(o.status == S::ConnectFailed);
  CHECK(o.error.code == weft::code::kClosed);
  CHECK(c.client().unsent_notifications() == 1);
  CHECK(notes == 0);
}

TEST_CASE("notify_and_close while a drained connection is still open: sent on the reconnection, Ok once written") {
  TempDir dir;
  const std::string path = dir.path + "/s.sock";
  // "hold" drains the server from inside its handler: the notice and the
  // answer leave in one write, so the call returns with the client told of
  // the drain and the drained connection not closed yet.
  auto so = quiet_server();
  so.grace_ms = 20000;
  auto first = std::make_unique<Running>(so);
  std::atomic<int> first_notes{0};
  first->server.on_peer([&](weft::Peer& p) {
    p.method("hold", weft::SyncHandler([&](const json&) -> weft::Result<json> {
               first->server.drain(weft::DrainNotice{"reload", 0, 200});
               return json("held");
             }));
    p.notification("seen", [&](const json&) { ++first_notes; });
  });
  REQUIRE(first->server.listen_unix(path));
  first->start();
  // The new server takes the socket once the drained one has ended.
  std::atomic<int> second_notes{0};
  std::promise<json> seen;
  std::unique_ptr<Running> second;
  std::atomic<bool> listening{false};
  std::thread restart([&] {
    first->thread.join();
    second = std::make_unique<Running>(quiet_server());
    second->server.on_peer([&](weft::Peer& p) {
      p.notification("seen", [&](const json& params) {
        if (++second_notes == 1) seen.set_value(params);
      });
    });
    listening = static_cast<bool>(second->server.listen_unix(path));
    if (listening) second->start();
  });

  auto cfg = config("unix:" + path);
  bool drained = false;
  cfg.on_drain = [&](const weft::DrainNotice&) { drained = true; };
  weft::host::BlockingClient c(cfg);
  REQUIRE(c.call("hold", std::nullopt, {.timeout = 5000}).result == "held");
  REQUIRE(drained);
  REQUIRE(c.client().state() == Client::State::Open);
  Outcome o = c.notify_and_close("seen", json::array({1}), 10000);
  restart.join();
  REQUIRE(listening);
  INFO(o.error.message);
  CHECK(o.status == S::Ok);
  CHECK(c.client().state() == Client::State::Closed);
  CHECK(c.client().connections() == 2);
  auto f = seen.get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(f.get() == json::array({1}));
  CHECK(second_notes == 1);
  CHECK(first_notes == 0);  // nothing new goes on a drained connection
}

TEST_CASE("notify_and_close with params neither an array nor an object fails, connected or not") {
  TempDir dir;
  Running srv(quiet_server());
  srv.server.on_peer([](weft::Peer& p) {
    p.method("ping", weft::SyncHandler([](const json&) -> weft::Result<json> { return json("pong"); }));
  });
  const std::string address = srv.serve_unix(dir.path + "/s.sock");
  weft::host::BlockingClient c(config(address));
  SECTION("not connected yet: the notification would wait for the connection") {}
  SECTION("connected") {
    REQUIRE(c.call("ping", std::nullopt, {.timeout = 5000}).ok());
  }
  Outcome o = c.notify_and_close("seen", json(5), 5000);
  CHECK(o.status == S::RemoteError);
  CHECK(o.error.code == weft::code::kInvalidParams);
}

TEST_CASE("notify_and_close with an address that cannot be parsed fails as a connection failure, not a remote error") {
  // No server exists to answer: the outcome is the one Client::call gives a
  // bad address (ConnectFailed, exit code 3), its error naming the address.
  weft::host::BlockingClient c(config("carrier-pigeon:home"));
  std::optional<json> params = json::array({1});
  SECTION("params valid") {}
  SECTION("params invalid too: the address is what fails first") { params = json(5); }
  Outcome o = c.notify_and_close("seen", params, 5000);
  CHECK(o.status == S::ConnectFailed);
  CHECK(o.exit_code() == 3);
  CHECK(o.error.code == weft::code::kInvalidParams);
  CHECK_THAT(o.error.message, Catch::Contains("bad address 'carrier-pigeon:home'"));
}

TEST_CASE("cancel settles the call with -32800 at once and sends $/cancelRequest") {
  TempDir dir;
  Running srv(quiet_server());
  std::atomic<int> cancelled{0};
  srv.server.on_peer([&](weft::Peer& p) {
    p.method("wait", [&](json, weft::Reply r, const weft::CallInfo&) {
      auto reply = std::make_shared<weft::Reply>(std::move(r));
      reply->on_cancel([&, reply] { ++cancelled; });
    });
    p.method("cancelled", [&](const json&) -> weft::Result<json> { return json(cancelled.load()); });
  });
  const std::string address = srv.serve_unix(dir.path + "/s.sock");

  boost::asio::io_context io;
  Client client(io, config(address));
  std::optional<Outcome> waited, count;
  int settled = 0;
  auto id = client.call("wait", std::nullopt, {}, [&](Outcome o) {
    ++settled;
    waited = std::move(o);
  });
  run_until(io, [&] { return client.state() == Client::State::Open; });
  REQUIRE(client.cancel(id));
  REQUIRE(waited);  // at once
  CHECK(waited->status == S::Cancelled);
  CHECK(waited->error.code == weft::code::kRequestCancelled);
  CHECK_FALSE(client.cancel(id));  // already settled
  client.call("cancelled", std::nullopt, {.timeout = 10000}, [&](Outcome o) { count = std::move(o); });
  run_until(io, [&] { return count.has_value(); });
  CHECK(count->result == 1);  // the server was told
  CHECK(settled == 1);
}

TEST_CASE("a timeout fails the call with -32001 and cancels it on the server") {
  TempDir dir;
  Running srv(quiet_server());
  std::atomic<int> cancelled{0};
  srv.server.on_peer([&](weft::Peer& p) {
    p.method("wait", [&](json, weft::Reply r, const weft::CallInfo&) {
      auto reply = std::make_shared<weft::Reply>(std::move(r));
      reply->on_cancel([&, reply] { ++cancelled; });
    });
    p.method("cancelled", [&](const json&) -> weft::Result<json> { return json(cancelled.load()); });
  });
  const std::string address = srv.serve_unix(dir.path + "/s.sock");

  boost::asio::io_context io;
  std::vector<std::string> logged;
  ClientConfig cfg = config(address);
  cfg.log = [&](std::string_view line) { logged.emplace_back(line); };
  Client client(io, cfg);
  std::optional<Outcome> waited, count;
  client.call("wait", std::nullopt, {.timeout = 150}, [&](Outcome o) { waited = std::move(o); });
  run_until(io, [&] { return waited.has_value(); });
  CHECK(waited->status == S::Timeout);
  CHECK(waited->error.code == weft::code::kTimeout);
  CHECK(waited->exit_code() == 4);
  client.call("cancelled", std::nullopt, {.timeout = 10000}, [&](Outcome o) { count = std::move(o); });
  run_until(io, [&] { return count.has_value(); });
  CHECK(count->result == 1);
  // The server's -32800 answer to the cancel came before that answer: it
  // found no pending call, as expected, and is not logged.
  CHECK(logged.empty());
}

TEST_CASE("a timeout covers waiting for a server that is not there") {
  TempDir dir;
  boost::asio::io_context io;
  ClientConfig c = config("unix:" + dir.path + "/none.sock");
  c.connect_attempts = 30;
  Client client(io, c);
  std::optional<Outcome> o;
  client.call("x", std::nullopt, {.timeout = 250}, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->status == S::Timeout);
}

TEST_CASE("retry is opt-in: a retryable answer (-32003, -32004 with retry_after) is sent again only when allowed") {
  TempDir dir;
  Running srv(quiet_server());
  std::atomic<int> calls{0};
  srv.server.on_peer([&](weft::Peer& p) {
    // Overloaded, then rate-limited with retry_after, then answers; a plain
    // error is never retried.
    p.method("flaky", [&](const json&) -> weft::Result<json> {
      const int n = ++calls;
      if (n % 3 == 1) return weft::Error(weft::code::kOverloaded, "busy", json{{"limit", 1000}});
      if (n % 3 == 2)
        return weft::Error(weft::code::kRateLimited, "come back later",
                           json{{"limit", 1}, {"window", 1000}, {"retry_after", 300}});
      return json("done");
    });
  });
  const std::string address = srv.serve_unix(dir.path + "/s.sock");

  boost::asio::io_context io;
  Client client(io, config(address));
  std::optional<Outcome> o;
  weft::host::CallPolicy retry;
  retry.retry = true;
  retry.timeout = 10000;
  const auto t0 = weft::host::now_ms();
  client.call("flaky", std::nullopt, retry, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  REQUIRE(o->status == S::Ok);
  CHECK(o->result == "done");
  CHECK(o->attempts == 3);
  CHECK(weft::host::now_ms() - t0 >= 300);  // retry_after honoured

  o.reset();
  client.call("flaky", std::nullopt, {.timeout = 10000}, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->status == S::RemoteError);  // not allowed: the first answer is the answer
  CHECK(o->error.code == weft::code::kOverloaded);
  CHECK(o->attempts == 1);

  o.reset();
  retry.max_attempts = 2;
  calls = 0;
  client.call("flaky", std::nullopt, retry, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->error.code == weft::code::kRateLimited);  // two sends, both refused
  CHECK(o->attempts == 2);

  o.reset();
  client.call("no_such_method", std::nullopt, retry, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->error.code == weft::code::kMethodNotFound);  // not retryable: one send
  CHECK(o->attempts == 1);
}

TEST_CASE("close() fails a retry call waiting out its delay, -32002, and it is never sent again") {
  for (const bool for_good : {true, false}) {
    TempDir dir;
    Running srv(quiet_server());
    std::atomic<int> sends{0};
    srv.server.on_peer([&](weft::Peer& p) {
      p.method("busy", [&](const json&) -> weft::Result<json> {
        ++sends;
        return weft::Error(weft::code::kOverloaded, "busy", json{{"retry_after", 5000}});
      });
    });
    const std::string address = srv.serve_unix(dir.path + "/s.sock");

    boost::asio::io_context io;
    Client client(io, config(address));
    std::optional<Outcome> o;
    weft::host::CallPolicy retry;
    retry.retry = true;
    client.call("busy", std::nullopt, retry, [&](Outcome r) { o = std::move(r); });
    run_until(io, [&] { return sends.load() == 1; });  // answered -32003: waiting 5 s to send again
    client.close(for_good);
    run_until(io, [&] { return o.has_value(); });
    INFO("close(" << for_good << ")");
    CHECK(o->status == S::ConnectFailed);
    CHECK(o->error.code == weft::code::kClosed);
    CHECK(client.pending() == 0);
    CHECK(sends.load() == 1);
  }
}

TEST_CASE("connecting backs off 100 ms, 200 + rand(50), 400 + rand(100), then fails with -32002") {
  TempDir dir;
  boost::asio::io_context io;
  ClientConfig c = config("unix:" + dir.path + "/none.sock");
  c.connect_attempts = 4;
  c.verbose = true;
  std::vector<long> delays;
  c.log = [&](std::string_view line) {
    auto at = line.find("retrying in ");
    if (at != std::string_view::npos) delays.push_back(std::stol(std::string(line.substr(at + 12))));
  };
  Client client(io, c);
  std::optional<Outcome> o;
  client.call("x", std::nullopt, {}, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->status == S::ConnectFailed);
  CHECK(o->error.code == weft::code::kClosed);
  CHECK_THAT(o->error.message, Catch::Contains("cannot connect to unix:") && Catch::Contains("(4 attempts)"));
  REQUIRE(delays.size() == 3);
  CHECK(delays[0] == 100);
  CHECK((delays[1] >= 200 && delays[1] <= 250));
  CHECK((delays[2] >= 400 && delays[2] <= 500));
  // The next call starts connecting again.
  o.reset();
  client.call("x", std::nullopt, {.timeout = 50}, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->status == S::Timeout);
}

TEST_CASE("after the server restarts the client reconnects by itself and serves its notifications again") {
  TempDir dir;
  const std::string path = dir.path + "/s.sock";
  auto first = std::make_unique<Running>(quiet_server());
  REQUIRE(first->server.listen_unix(path));
  first->start();
  boost::asio::io_context io;
  Client client(io, config("unix:" + path));
  std::vector<bool> events;
  client.on_connection = [&](bool open, const std::string&) { events.push_back(open); };
  client.connect();
  run_until(io, [&] { return client.state() == Client::State::Open; });
  first.reset();  // stops: the connection drops
  run_until(io, [&] { return events.size() == 2; });
  Running second(quiet_server());
  second.server.on_peer([&](weft::Peer& p) { (void)p.notify("hello", json::array({"again"})); });
  REQUIRE(second.server.listen_unix(path));
  second.start();
  std::vector<json> hellos;
  client.notification("hello", [&](const json& p) { hellos.push_back(p); });
  run_until(io, [&] { return !hellos.empty() && events.size() == 3; });
  CHECK(events == std::vector<bool>{true, false, true});
  CHECK(client.connections() == 2);
  CHECK(hellos[0] == json::array({"again"}));
}

TEST_CASE("async_call takes any Asio completion token (here: a C++20 coroutine)") {
  TempDir dir;
  Running srv(quiet_server());
  srv.server.on_peer([](weft::Peer& p) { weft::register_demo_methods(p); });
  const std::string address = srv.serve_unix(dir.path + "/s.sock");
  boost::asio::io_context io;
  Client client(io, config(address));
  std::optional<json> sum;
  // (Built outside the coroutine: GCC 12 cannot keep an initializer_list in a coroutine frame.)
  const json numbers = json::array({1, 2, 3});
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        weft::host::CallPolicy policy;
        policy.timeout = 5000;
        Outcome o = co_await weft::host::async_call(client, "sum", numbers, policy,
                                                    boost::asio::use_awaitable);
        sum = o.result;
      },
      boost::asio::detached);
  run_until(io, [&] { return sum.has_value(); });
  CHECK(*sum == 6);
}
