// bench_pipelined — pipelined small calls on one Unix-socket connection.
//   weft serve --unix /tmp/b.sock --demo &  weft-bench-pipelined /tmp/b.sock [N] [WINDOW]
// Writes requests for add {"a":1,"b":2} (len32be, JSON) keeping WINDOW in flight,
// reads the responses, checks each, prints calls/s. Exit 0 when all matched.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const long n = argc > 2 ? std::atol(argv[2]) : 1000000;
  const long window = argc > 3 ? std::atol(argv[3]) : 4096;
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return perror("connect"), 3;
  auto frame = [](long id, std::string& out) {
    char body[128];
    int len = std::snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"add\",\"params\":{\"a\":1,\"b\":2}}", id);
    unsigned char h[4] = {static_cast<unsigned char>(len >> 24), static_cast<unsigned char>(len >> 16),
                          static_cast<unsigned char>(len >> 8), static_cast<unsigned char>(len)};
    out.append(reinterpret_cast<char*>(h), 4);
    out.append(body, len);
  };
  const auto t0 = std::chrono::steady_clock::now();
  long sent = 0, got = 0, bad = 0;
  std::string out, in;
  std::vector<char> buf(1 << 20);
  while (got < n) {
    out.clear();
    while (sent < n && sent - got < window) frame(++sent, out);
    for (std::size_t off = 0; off < out.size();) {
      ssize_t w = write(fd, out.data() + off, out.size() - off);
      if (w <= 0) return perror("write"), 3;
      off += static_cast<std::size_t>(w);
    }
    ssize_t r = read(fd, buf.data(), buf.size());
    if (r <= 0) return perror("read"), 3;
    in.append(buf.data(), static_cast<std::size_t>(r));
    std::size_t pos = 0;
    while (in.size() - pos >= 4) {
      const auto* p = reinterpret_cast<const unsigned char*>(in.data() + pos);
      std::size_t len = (std::size_t(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
      if (in.size() - pos - 4 < len) break;
      if (std::string_view(in.data() + pos + 4, len).find("\"result\":3") == std::string_view::npos) ++bad;
      ++got;
      pos += 4 + len;
    }
    in.erase(0, pos);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%ld calls in %.3f s: %.0f calls/s (window %ld), %ld bad\n", n, s, n / s, window, bad);
  return bad ? 1 : 0;
}
