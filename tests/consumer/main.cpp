// Starts a weft server on a Unix socket in this process, registers its own
// `subtract`, calls it once with the native client and checks the answer.
// Exit 0 only if subtract(42, 23) came back as 19.
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include <boost/asio/post.hpp>
#include <weft/host/host.h>
#include <weft/weft.h>

int main() {
  char dir[] = "/tmp/weft-consumer-XXXXXX";
  if (!mkdtemp(dir)) return std::perror("mkdtemp"), 2;
  const std::string path = std::string(dir) + "/s.sock";

  weft::host::ServerOptions so;
  so.handle_signals = false;
  so.log = [](std::string_view) {};
  weft::host::Server server(so);
  server.method(
      "subtract",
      [](const weft::json& p) -> weft::Result<weft::json> {
        return weft::json(p["minuend"].get<long>() - p["subtrahend"].get<long>());
      },
      weft::ParamSpec{{{"minuend", weft::ParamType::Integer},
                       {"subtrahend", weft::ParamType::Integer}}});
  if (auto r = server.listen_unix(path); !r) {
    std::fprintf(stderr, "listen: %s\n", r.error().message.c_str());
    return 2;
  }
  std::thread t([&] { server.run(); });

  weft::host::ClientOptions co;
  co.endpoint.path = path;
  co.timeout = 5000;
  auto out = weft::host::call(co, "subtract", weft::json::array({42, 23}));  // by position

  boost::asio::post(server.context(), [&] { server.stop(); });
  t.join();
  rmdir(dir);

  if (out.status != weft::host::Outcome::Status::Ok) {
    std::fprintf(stderr, "weft consumer (%s): call failed: %d %s\n", WEFT_CONSUMER_MODE,
                 out.error.code, out.error.message.c_str());
    return 1;
  }
  std::printf("weft %s via %s: subtract(42, 23) = %s\n", weft::version(), WEFT_CONSUMER_MODE,
              out.result.dump().c_str());
  return out.result == 19 ? 0 : 1;
}
