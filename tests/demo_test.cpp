// The demo methods (demo.h), one case per rule. The same rules are replayed on
// both builds by tests/vectors/peer/demo_fail.txt and demo_sinks.txt.
#include <catch2/catch.hpp>

#include "demo.h"
#include "peer_loop.h"
#include "weft/weft.h"

using namespace weft;

using weft::test::Loop;

TEST_CASE("fail answers with any code that fits 32 bits, positive ones too", "[demo]") {
  Loop l;
  register_demo_methods(*l.peer);
  // A JSON parser reads 4242 as an unsigned integer; it is still an integer code.
  l.in(R"({"jsonrpc":"2.0","method":"fail","params":{"code":4242,"message":"x"},"id":1})");
  l.in(R"({"jsonrpc":"2.0","method":"fail","params":{"code":0,"message":"zero"},"id":2})");
  l.in(R"({"jsonrpc":"2.0","method":"fail","params":{"code":2147483647,"message":"max"},"id":3})");
  l.in(R"({"jsonrpc":"2.0","method":"fail","params":{"code":-2147483648,"message":"min","data":[1]},"id":4})");
  l.in(R"({"jsonrpc":"2.0","method":"fail","params":[-32010,"no luck"],"id":5})");
  CHECK(l.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","error":{"code":4242,"message":"x"},"id":1})",
                      R"({"jsonrpc":"2.0","error":{"code":0,"message":"zero"},"id":2})",
                      R"({"jsonrpc":"2.0","error":{"code":2147483647,"message":"max"},"id":3})",
                      R"({"jsonrpc":"2.0","error":{"code":-2147483648,"message":"min","data":[1]},"id":4})",
                      R"({"jsonrpc":"2.0","error":{"code":-32010,"message":"no luck"},"id":5})",
                  });
}

TEST_CASE("fail refuses a code outside the 32-bit range with -32602 naming the range", "[demo]") {
  Loop l;
  register_demo_methods(*l.peer);
  l.in(R"({"jsonrpc":"2.0","method":"fail","params":{"code":2147483648,"message":"x"},"id":1})");
  l.in(R"({"jsonrpc":"2.0","method":"fail","params":{"code":-2147483649,"message":"x"},"id":2})");
  l.in(R"({"jsonrpc":"2.0","method":"fail","params":{"code":18446744073709551615,"message":"x"},"id":3})");
  const std::string refused =
      R"("error":{"code":-32602,"message":"Invalid params: \"code\" must be an integer from -2147483648 to 2147483647"})";
  REQUIRE(l.sent.size() == 3);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0",)" + refused + R"(,"id":1})");
  CHECK(l.sent[1] == R"({"jsonrpc":"2.0",)" + refused + R"(,"id":2})");
  CHECK(l.sent[2] == R"({"jsonrpc":"2.0",)" + refused + R"(,"id":3})");
}

TEST_CASE("a request to a notification sink is answered with result null", "[demo]") {
  // The sinks exist, so a request to one is never -32601 (§5.1 "Method not found").
  Loop l;
  register_demo_methods(*l.peer);
  l.in(R"({"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5],"id":1})");
  l.in(R"({"jsonrpc":"2.0","method":"notify_hello","params":[7],"id":"h"})");
  l.in(R"({"jsonrpc":"2.0","method":"notify_sum","id":3})");
  CHECK(l.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","result":null,"id":1})",
                      R"({"jsonrpc":"2.0","result":null,"id":"h"})",
                      R"({"jsonrpc":"2.0","result":null,"id":3})",
                  });
}

TEST_CASE("a notification to a notification sink is not answered", "[demo]") {
  // §4.1: "The Server MUST NOT reply to a Notification".
  Loop l;
  register_demo_methods(*l.peer);
  l.in(R"({"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]})");
  l.in(R"({"jsonrpc":"2.0","method":"notify_hello","params":[7]})");
  l.in(R"({"jsonrpc":"2.0","method":"notify_sum","params":{"any":"params"}})");
  CHECK(l.sent.empty());
  CHECK(l.diags.empty());
}
