// Completes docs/streams.md's native C++ snippet (at the SNIPPET line): a
// weft::host::Server with the `bytes` builtin runs on its own thread on a
// temporary socket (`address`); `io` is the client's io_context and `pulled`
// collects what the pull API takes. Afterwards the harness runs `io` until
// the callback stream is done and checks both streams' chunks and answers.
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/post.hpp>
#include <weft/host/host.h>

int main() {
  char dir[] = "/tmp/weft-doc-stream-XXXXXX";
  if (!mkdtemp(dir)) return std::perror("mkdtemp"), 1;
  const std::string sock = std::string(dir) + "/s.sock";
  weft::host::ServerOptions so;
  so.codec = weft::CodecKind::MessagePack;
  so.handle_signals = false;
  so.log = [](std::string_view) {};
  weft::host::Server server(so);
  server.on_peer([](weft::Peer& p) { weft::host::register_bytes(p); });
  if (auto r = server.listen_unix(sock); !r) return std::fprintf(stderr, "%s\n", r.error().message.c_str()), 1;
  std::thread serving([&] { server.run(); });
  const std::string address = "unix:" + sock;
  boost::asio::io_context io;
  std::vector<std::vector<std::uint8_t>> pulled;
  int status = 0;
  {
// SNIPPET
    while (!done && io.run_one()) {
    }
    if (!done || !done->ok() || done->result != weft::json{{"bytes", 67108864}, {"chunks", 1024}} || bytes != 67108864)
      status = std::fputs("the callback stream did not deliver 64 MiB and its answer\n", stderr), 1;
    const std::vector<std::vector<std::uint8_t>> want{{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}};
    if (pulled != want || !s.outcome().ok())
      status = std::fputs("the pull stream did not deliver its 3 chunks and its answer\n", stderr), 1;
  }
  boost::asio::post(server.context(), [&] { server.stop(); });
  serving.join();
  std::system((std::string("rm -rf ") + dir).c_str());
  return status;
}
