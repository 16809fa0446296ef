// persistent_client.cpp — a hundred calls in flight on one connection,
// answered as they come. Usage: weft-client-example [ADDRESS]
#include <cstdio>
#include <weft/host/host.h>

int main(int argc, char** argv) {
  boost::asio::io_context io;
  weft::host::Client client(io, {.address = argc > 1 ? argv[1] : "unix:/tmp/weft.sock"});
  int left = 100, failed = 0;
  double total = 0;
  for (int i = 1; i <= 100; ++i)
    client.call("add", weft::json{{"a", i}, {"b", 0}}, {.timeout = 5000, .retry = true},
                [&](weft::host::Outcome o) {
                  if (o.ok()) total += o.result.get<double>();
                  else ++failed, std::fprintf(stderr, "%s\n", o.error.message.c_str());
                  if (--left == 0) client.shutdown();  // the loop ends when it has closed
                });
  io.run();
  std::printf("%g\n", total);  // 5050
  return failed == 0 ? 0 : 1;
}
