// Host pieces without processes: OpenRPC output, a Server and the client
// talking over a real socket inside one process.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <thread>

#include <boost/asio/post.hpp>

#include "demo.h"
#include "weft/host/host.h"

using weft::json;

TEST_CASE("openrpc document lists methods, params and notifications") {
  std::vector<weft::MethodInfo> ms;
  weft::ParamSpec spec{{{"a", weft::ParamType::Integer}, {"b", weft::ParamType::Any, false}}};
  ms.push_back({"add", false, spec, "adds"});
  ms.push_back({"note", true, std::nullopt, ""});
  json doc = weft::host::openrpc_document(ms, "t", "1.2.3");
  CHECK(doc["openrpc"] == "1.3.2");
  CHECK(doc["info"]["version"] == "1.2.3");
  REQUIRE(doc["methods"].size() == 2);
  CHECK(doc["methods"][0]["params"][0]["schema"]["type"] == "integer");
  CHECK(doc["methods"][0]["params"][1]["required"] == false);
  CHECK(doc["methods"][0].contains("result"));
  CHECK(!doc["methods"][1].contains("result"));
}

TEST_CASE("server and client over a unix socket in one process") {
  char tmpl[] = "/tmp/weft-host-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string path = std::string(tmpl) + "/s.sock";
  weft::host::ServerOptions so;
  so.handle_signals = false;
  weft::host::Server server(so);
  server.on_peer([](weft::Peer& p) { weft::register_demo_methods(p); });
  REQUIRE(server.listen_unix(path));
  // A second server must not steal the live socket.
  weft::host::Server other(so);
  CHECK(!other.listen_unix(path));

  std::thread t([&] { server.run(); });
  weft::host::ClientOptions co;
  co.endpoint.path = path;
  co.timeout = 5000;
  auto out = weft::host::call(co, "subtract", json::array({42, 23}));
  CHECK(out.exit_code() == 0);
  CHECK(out.result == 19);
  out = weft::host::call(co, "rpc.ping", std::nullopt);
  CHECK(out.result["status"] == "ok");
  out = weft::host::call(co, "nope", std::nullopt);
  CHECK(out.exit_code() == 1);
  CHECK(out.error.code == weft::code::kMethodNotFound);
  out = weft::host::notify(co, "update", json::array({1}));
  CHECK(out.exit_code() == 0);
  boost::asio::post(server.context(), [&] { server.stop(); });
  t.join();
  CHECK(access(path.c_str(), F_OK) != 0);  // removed on stop
  rmdir(tmpl);

  co.retries = 1;
  out = weft::host::call(co, "rpc.ping", std::nullopt);
  CHECK(out.exit_code() == 3);
  CHECK(out.attempts == 2);
}
