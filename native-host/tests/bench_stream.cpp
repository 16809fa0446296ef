// bench_stream — streaming throughput over a Unix socket, and its raw floor
// (bench/native/rows.mjs, "streaming"; not run by ctest).
//
//   weft serve --unix S --codec msgpack --demo &
//   weft-bench-stream weft S BYTES [CREDIT] [CHUNK]   # Client::stream("bytes"): 64 KiB bin chunks
//   weft-bench-stream floor DIR BYTES [CHUNK]         # a forked writer, write() of CHUNK bytes
//                                                     # at a time, read() into a CHUNK buffer
//
// Prints one JSON line {"bytes":…,"secs":…,"rate":…} (rate in bytes/s). The
// weft mode connects (rpc.ping) before the clock starts, checks every chunk's
// size and fill byte, and exits 1 if anything is missing or wrong.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "weft/host/host.h"

namespace {

using Clock = std::chrono::steady_clock;

void print(std::uint64_t bytes, double secs) {
  std::printf("{\"bytes\":%llu,\"secs\":%.6f,\"rate\":%.0f}\n", static_cast<unsigned long long>(bytes), secs,
              static_cast<double>(bytes) / secs);
}

int floor_run(const std::string& dir, std::uint64_t bytes, std::size_t chunk) {
  const std::string path = dir + "/floor.sock";
  ::unlink(path.c_str());
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  const int ls = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (ls < 0 || ::bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(ls, 1) != 0)
    return std::perror("floor: listen"), 3;
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) _exit(3);
    std::vector<char> buf(chunk, 'x');
    for (std::uint64_t sent = 0; sent < bytes;) {
      const ssize_t n = ::write(fd, buf.data(), std::min<std::uint64_t>(chunk, bytes - sent));
      if (n <= 0) _exit(4);
      sent += static_cast<std::uint64_t>(n);
    }
    _exit(0);
  }
  const int fd = ::accept(ls, nullptr, nullptr);
  const auto t0 = Clock::now();
  std::vector<char> buf(chunk);
  std::uint64_t got = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    got += static_cast<std::uint64_t>(n);
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  int st = 0;
  ::waitpid(child, &st, 0);
  ::close(fd);
  ::close(ls);
  ::unlink(path.c_str());
  if (got != bytes) return std::fprintf(stderr, "floor: %llu of %llu bytes\n", (unsigned long long)got, (unsigned long long)bytes), 1;
  print(got, secs);
  return 0;
}

int weft_run(const std::string& sock, std::uint64_t bytes, std::uint32_t credit, std::uint64_t chunk) {
  boost::asio::io_context io;
  weft::host::ClientConfig cfg;
  cfg.address = "unix:" + sock;
  cfg.codec = weft::CodecKind::MessagePack;
  weft::host::Client client(io, cfg);
  bool up = false;
  client.call("rpc.ping", std::nullopt, {.timeout = 10000}, [&](weft::host::Outcome o) {
    if (!o.ok()) std::fprintf(stderr, "ping: %s\n", o.error.message.c_str()), std::exit(3);
    up = true;
  });
  while (!up && io.run_one()) {
  }
  const std::uint64_t count = bytes / chunk;
  std::uint64_t got = 0, seq = 0, bad = 0;
  std::optional<weft::host::Outcome> done;
  weft::host::StreamPolicy p;
  p.credit = credit;
  p.timeout = 60000;
  const auto t0 = Clock::now();
  client.stream(
      "bytes", weft::json{{"count", count}, {"size", chunk}}, p,
      [&](weft::Chunk&& c) {
        const auto& b = c.value.get_binary();
        if (c.seq != seq || b.size() != chunk || (chunk && b[0] != (seq & 0xff))) ++bad;
        got += b.size();
        ++seq;
      },
      [&](weft::host::Outcome o) { done = std::move(o); });
  while (!done && io.run_one()) {
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!done || !done->ok() || bad || got != count * chunk) {
    std::fprintf(stderr, "weft stream: %llu bytes, %llu bad chunks, %s\n", (unsigned long long)got,
                 (unsigned long long)bad, done && !done->ok() ? done->error.message.c_str() : "");
    return 1;
  }
  print(got, secs);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fputs("usage: weft-bench-stream weft SOCK BYTES [CREDIT] [CHUNK] | floor DIR BYTES [CHUNK]\n", stderr);
    return 2;
  }
  const std::string mode = argv[1];
  const std::uint64_t bytes = std::strtoull(argv[3], nullptr, 10);
  if (mode == "floor") return floor_run(argv[2], bytes, argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 65536);
  if (mode == "weft")
    return weft_run(argv[2], bytes, argc > 4 ? static_cast<std::uint32_t>(std::atoi(argv[4])) : 16,
                    argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 65536);
  return 2;
}
