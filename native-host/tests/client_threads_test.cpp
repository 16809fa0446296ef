// The client's threads (docs/reliability.md, "Sanitizers"): the server runs
// one thread, but a client connecting to a host name resolves it on Asio's
// resolver thread, and `weft call --session` reads stdin on a thread of its
// own; both hand their results to the client's loop. These cases run those
// hand-overs in one process, so that the ThreadSanitizer build
// (scripts/tsan.sh) checks them under ctest, not only through the CLI.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include "cli/session_mode.h"
#include "weft/host/host.h"

using weft::json;
using weft::host::BlockingClient;
using weft::host::Client;
using weft::host::Outcome;
using S = weft::host::Outcome::Status;

#include "client_test_support.h"

TEST_CASE("a client given a host name resolves it on the resolver thread and is answered on its own loop") {
  LoopbackServer s;
  for (const std::string& address : {s.tcp(), s.ws(), s.http()}) {
    INFO(address);
    // Each BlockingClient owns an io_context: a resolver thread started and
    // joined per client, and a new resolution per connection.
    for (int round = 0; round < 3; ++round) {
      BlockingClient c(config(address));
      for (int i = 0; i < 5; ++i) {
        Outcome o = c.call("add", json{{"a", i}, {"b", round}}, {.timeout = 10000});
        REQUIRE(o.status == S::Ok);
        CHECK(o.result == i + round);
      }
      // A reconnect resolves the name again.
      c.client().close(false);
      Outcome o = c.call("add", json{{"a", 1}, {"b", 1}}, {.timeout = 10000});
      REQUIRE(o.status == S::Ok);
      CHECK(o.result == 2);
      CHECK(c.client().connections() == 2);
    }
  }
}

TEST_CASE("a client destroyed while its host name is being resolved fails its call once, and nothing runs after") {
  LoopbackServer s;
  for (const std::string& address : {s.tcp(), s.ws(), s.http()}) {
    INFO(address);
    int settled = 0;
    Outcome out;
    {
      boost::asio::io_context io;
      {
        Client client(io, config(address));
        // The resolution starts on the resolver thread; the loop has not run,
        // so its answer cannot have been taken yet.
        client.call("add", json{{"a", 1}, {"b", 2}}, {.timeout = 10000}, [&](Outcome o) {
          ++settled;
          out = std::move(o);
        });
      }
      CHECK(settled == 1);
      // The resolver's answer reaches a link whose client is gone.
      io.restart();
      io.run();
    }  // the io_context joins its resolver thread
    CHECK(settled == 1);
    CHECK(out.status == S::ConnectFailed);
    CHECK(out.error.code == weft::code::kClosed);
  }
}

TEST_CASE("session mode: lines read on the stdin thread while earlier ones are answered keep their order") {
  LoopbackServer s;
  int to_session[2], from_session[2];
  REQUIRE(::pipe(to_session) == 0);
  REQUIRE(::pipe(from_session) == 0);
  std::FILE* in = ::fdopen(to_session[0], "r");
  std::FILE* out = ::fdopen(from_session[1], "w");
  std::FILE* answers = ::fdopen(from_session[0], "r");
  REQUIRE(in != nullptr);
  REQUIRE(out != nullptr);
  REQUIRE(answers != nullptr);
  constexpr int kLines = 200, kWindow = 8;
  // The feeder keeps kWindow lines ahead of the answers it has read: the
  // stdin thread reads and posts lines while the loop sends, receives and
  // prints earlier ones, and neither side can finish all of its part first.
  // (Catch2's assertions are not thread-safe: the feeder only records.)
  std::vector<std::string> got;
  bool write_failed = false;
  std::thread feeder([&] {
    auto feed = [&](int i) {
      std::string line = "add {\"a\":" + std::to_string(i) + ",\"b\":1}\n";
      if (::write(to_session[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) write_failed = true;
    };
    int fed = 0;
    while (fed < kWindow) feed(fed++);
    char* buf = nullptr;
    std::size_t cap = 0;
    while (got.size() < static_cast<std::size_t>(kLines) && ::getline(&buf, &cap, answers) >= 0) {
      got.emplace_back(buf);
      if (fed < kLines) feed(fed++);
      if (fed == kLines) {
        ::close(to_session[1]);  // end of input
        ++fed;
      }
    }
    std::free(buf);
  });
  auto cfg = config(s.tcp());
  cfg.default_timeout = 10000;
  const int code = weft::cli::run_session(cfg, in, out);
  std::fclose(out);  // the feeder reads to the end even if answers are missing
  feeder.join();
  std::fclose(in);
  std::fclose(answers);
  CHECK(code == 0);
  CHECK_FALSE(write_failed);

  REQUIRE(got.size() == static_cast<std::size_t>(kLines));
  for (int n = 0; n < kLines; ++n) {
    json answer = json::parse(got[n]);
    INFO(answer.dump());
    REQUIRE(answer["id"] == n + 1);  // the line number
    REQUIRE(answer["result"] == n + 1);
  }
}
