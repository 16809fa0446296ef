// Embedding weft: register your own methods and serve them on a Unix socket.
//   weft-embed-example /tmp/app.sock &
//   weft call --unix /tmp/app.sock add '[2,3]'      → 5
#include <cstdio>

#include <weft/host/host.h>

int main(int argc, char** argv) {
  weft::host::Server server;  // rpc.ping and rpc.discover come built in
  server.method(
      "add",
      [](const weft::json& p) -> weft::Result<weft::json> {
        return weft::json(p["a"].get<double>() + p["b"].get<double>());
      },
      weft::ParamSpec{{{"a", weft::ParamType::Number}, {"b", weft::ParamType::Number}}});
  server.method("greet", [](const weft::json& p) -> weft::Result<weft::json> {
    if (!p.is_array() || p.empty() || !p[0].is_string())
      return weft::Error(weft::code::kInvalidParams, "expected [name]");
    return weft::json("hello, " + p[0].get<std::string>());
  });
  const char* path = argc > 1 ? argv[1] : "/tmp/weft-example.sock";
  if (auto r = server.listen_unix(path); !r) {
    std::fprintf(stderr, "%s\n", r.error().message.c_str());
    return 1;
  }
  return server.run();  // SIGINT/SIGTERM/SIGHUP: drain, socket file removed
}
