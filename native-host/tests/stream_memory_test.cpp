// The proof for native streams (docs/streams.md, "Native host"): two
// processes over a Unix socket — `weft serve --codec msgpack --demo` (its
// `bytes` builtin) and a weft::host::Client in this process — move 1 GiB in
// 64 KiB MessagePack `bin` chunks to a deliberately slow consumer, and the
// resident memory of both stays bounded, read from /proc while it runs; then
// a second 1 GiB stream is cancelled mid-way and the server's request slot and
// memory are given back.
//
// The consumer is slow for the first kSlowChunks chunks: it takes one chunk
// per 1 ms timer tick (≤ 64 MB/s, far below what the server could send), so
// for that phase the server is held back by credit alone; then it takes
// chunks as they come. All 1 GiB is sent and checked either way.
#include <catch2/catch.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <string>

#include <boost/asio/steady_timer.hpp>

#include "weft/host/host.h"

#include "client_test_support.h"

extern char** environ;

using weft::Chunk;
using weft::json;
using weft::host::Client;
using weft::host::Outcome;
using weft::host::StreamPolicy;

namespace {

constexpr std::uint64_t kChunk = 64 * 1024;
constexpr std::uint64_t kChunks = (1ull << 30) / kChunk;  // 1 GiB
constexpr std::uint64_t kSlowChunks = 512;                // 32 MiB at ≤ 1 chunk/ms
constexpr std::uint32_t kCredit = 16;
// Growth allowed over the RSS measured once the stream is running: 1 GiB
// buffered anywhere would be 32 times this.
constexpr long kBoundKiB = 32 * 1024;

long rss_kib(const std::string& status_path) {
  std::ifstream f(status_path);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// `weft serve` as a child process; killed (SIGTERM, then waited for) at the end.
struct Child {
  pid_t pid = -1;
  explicit Child(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
  }
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      int st = 0;
      ::waitpid(pid, &st, 0);
    }
  }
};

// One streamed `bytes` call consumed slowly at first, then at full speed;
// RSS of both processes sampled every 256 chunks after the first 256.
struct Consumer {
  boost::asio::io_context& io;
  Client& client;
  std::string server_status;
  weft::host::CallId id = 0;
  std::uint64_t got = 0, bytes = 0, bad = 0;
  std::uint64_t slow_until = 0, cancel_at = 0;
  std::deque<Chunk> waiting;  // slow phase: received, not yet taken (≤ credit)
  std::size_t most_waiting = 0;
  boost::asio::steady_timer tick{io};
  bool ticking = false;
  long base_self = 0, base_server = 0, max_self = 0, max_server = 0;
  std::optional<Outcome> done;

  void take(const Chunk& c) {
    const auto& b = c.value.get_binary();
    if (c.seq != got || b.size() != kChunk || b.front() != (got & 0xff) || b.back() != (got & 0xff)) ++bad;
    ++got;
    bytes += b.size();
    if (got % 256 == 0) sample();
    if (cancel_at && got == cancel_at) client.cancel(id);
  }
  void sample() {
    const long self = rss_kib("/proc/self/status"), server = rss_kib(server_status);
    if (got == 256) base_self = self, base_server = server;
    max_self = std::max(max_self, self);
    max_server = std::max(max_server, server);
  }
  void on_chunk(Chunk&& c) {
    if (waiting.empty() && got >= slow_until) {
      take(c);
      if (!done) client.grant(id, 1);
      return;
    }
    waiting.push_back(std::move(c));
    most_waiting = std::max(most_waiting, waiting.size());
    if (!ticking) arm();
  }
  // The slow phase: one chunk taken, and one granted back, per tick.
  void arm() {
    ticking = true;
    tick.expires_after(std::chrono::milliseconds(1));
    tick.async_wait([this](const boost::system::error_code& ec) {
      ticking = false;
      if (ec || waiting.empty() || done) return;
      // One per tick while slow; past the slow phase, the rest at once.
      do {
        take(waiting.front());
        waiting.pop_front();
        if (!done) client.grant(id, 1);
      } while (!waiting.empty() && got >= slow_until && !done);
      if (!waiting.empty()) arm();
    });
  }
  void start(std::uint64_t count) {
    StreamPolicy p;
    p.credit = kCredit;
    p.auto_grant = false;  // grants follow what the consumer takes (above)
    p.timeout = 60000;
    id = client.stream("bytes", json{{"count", count}, {"size", kChunk}}, p,
                       [this](Chunk&& c) { on_chunk(std::move(c)); },
                       [this](Outcome o) { done = std::move(o); });
  }
};

}  // namespace

TEST_CASE("1 GiB in 64 KiB bin chunks to a slow consumer: both processes' RSS stays bounded; cancel frees everything") {
  TempDir dir;
  const std::string sock = dir.path + "/s.sock";
  // --max-in-flight 1: while a stream is served, any other request is
  // refused (-32003), so a ping that succeeds proves its slot is free again.
  Child server({WEFT_CLI_PATH, "serve", "--unix", sock, "--codec", "msgpack", "--demo", "--max-in-flight", "1"});
  const std::string status = "/proc/" + std::to_string(server.pid) + "/status";

  boost::asio::io_context io;
  ClientConfig cfg = config("unix:" + sock);
  cfg.codec = weft::CodecKind::MessagePack;
  cfg.connect_attempts = 12;  // the socket appears once the child listens (backoff up to ~200 s in all)
  Client client(io, cfg);

  const auto t0 = std::chrono::steady_clock::now();
  Consumer a{io, client, status};
  a.slow_until = kSlowChunks;
  a.start(kChunks);
  run_until(io, [&] { return a.done.has_value(); });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(a.done->ok());
  CHECK(a.done->result == json{{"chunks", kChunks}, {"bytes", kChunks * kChunk}});
  CHECK(a.got == kChunks);
  CHECK(a.bytes == (1ull << 30));
  CHECK(a.bad == 0);
  CHECK(a.most_waiting <= kCredit);  // the slow phase held at most the credit
  std::printf("1 GiB stream: %.2f s (first %llu chunks at <= 1 per ms); RSS client %ld -> max %ld KiB, server %ld -> max %ld KiB\n",
              secs, static_cast<unsigned long long>(kSlowChunks), a.base_self, a.max_self, a.base_server, a.max_server);
  CHECK(a.base_server > 0);
  CHECK(a.max_self - a.base_self < kBoundKiB);
  CHECK(a.max_server - a.base_server < kBoundKiB);

  // Cancel mid-stream (at 128 MiB of 1 GiB): -32800 at once, the server
  // frees the request (the next call is admitted under --max-in-flight 1)
  // and its memory.
  Consumer b{io, client, status};
  b.cancel_at = 2048;
  b.start(kChunks);
  run_until(io, [&] { return b.done.has_value(); });
  CHECK(b.done->status == Outcome::Status::Cancelled);
  CHECK(b.got == 2048);
  std::optional<Outcome> ping;
  client.call("rpc.ping", std::nullopt, {.timeout = 10000}, [&](Outcome o) { ping = std::move(o); });
  run_until(io, [&] { return ping.has_value(); });
  REQUIRE(ping->ok());
  CHECK(client.pending() == 0);
  const long after = rss_kib(status);
  std::printf("cancelled at 128 MiB: server RSS %ld KiB (max while streaming %ld)\n", after, b.max_server);
  CHECK(after - a.base_server < kBoundKiB);
}
