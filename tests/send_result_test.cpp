// PeerOptions::send_result: a plain result of a single request goes to it
// instead of `send`, and nothing else does. What reaches the wire must not
// depend on which one a host sets: each case checks the exact answer.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "peer_loop.h"
#include "weft/weft.h"

using namespace weft;

namespace {

// A Peer whose two send hooks each write JSON text to their own list:
// `sent` (the Loop's) through send, `results` through send_result.
struct Split : test::Loop {
  std::vector<std::string> results;
  bool fail_results = false;  // send_result's transport "throws"
  std::optional<Reply> held;

  explicit Split(bool with_result = true, const std::function<void(PeerOptions&)>& set = {})
      : Loop([this, with_result, &set](PeerOptions& o) {
          if (with_result)
            o.send_result = [this](const Id& id, json&& v) {
              Outgoing m;
              m.messages.emplace_back(Response{id, std::move(v)});
              if (fail_results) return peer->undelivered(m, Error(code::kClosed, "port closed"));
              std::string s;
              write_json(m, s);
              results.push_back(std::move(s));
            };
          if (set) set(o);
        }) {
    peer->method("sum", SyncHandler([](const json& p) -> Result<json> { return json(p[0].get<int>() + p[1].get<int>()); }));
    peer->method("fail", SyncHandler([](const json&) -> Result<json> { return Error(7, "seven", json::array({7})); }));
    peer->method("later", [this](json, Reply r, const CallInfo&) { held = std::move(r); });
    peer->method("now_or_later",
                 DeferrableHandler([](json& p, Deferral&, const CallInfo&) -> std::optional<Result<json>> {
                   return Result<json>(std::move(p));
                 }));
  }
};

}  // namespace

TEST_CASE("send_result: a request answered at once by a SyncHandler", "[send_result]") {
  Split s;
  s.in(R"({"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"a"})");
  CHECK(s.sent.empty());
  CHECK(s.results == std::vector<std::string>{R"({"jsonrpc":"2.0","result":3,"id":"a"})"});
}

TEST_CASE("send_result: a DeferrableHandler's value returned at once", "[send_result]") {
  Split s;
  s.in(R"({"jsonrpc":"2.0","method":"now_or_later","params":{"x":[1]},"id":4})");
  CHECK(s.sent.empty());
  CHECK(s.results == std::vector<std::string>{R"({"jsonrpc":"2.0","result":{"x":[1]},"id":4})"});
}

TEST_CASE("send_result: a result given later through the Reply", "[send_result]") {
  Split s;
  s.in(R"({"jsonrpc":"2.0","method":"later","id":9})");
  REQUIRE(s.held);
  CHECK(s.results.empty());
  s.held->ok("done");
  CHECK(s.sent.empty());
  CHECK(s.results == std::vector<std::string>{R"({"jsonrpc":"2.0","result":"done","id":9})"});
}

TEST_CASE("send_result: error answers go to send (§5.1)", "[send_result]") {
  Split s;
  s.in(R"({"jsonrpc":"2.0","method":"fail","id":1})");
  s.in(R"({"jsonrpc":"2.0","method":"nope","id":2})");
  CHECK(s.results.empty());
  CHECK(s.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","error":{"code":7,"message":"seven","data":[7]},"id":1})",
                      R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found: nope"},"id":2})"});
}

TEST_CASE("send_result: a batch's results leave together through send (§6)", "[send_result]") {
  Split s;
  s.in(R"([{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1},)"
       R"({"jsonrpc":"2.0","method":"now_or_later","params":[5],"id":2}])");
  CHECK(s.results.empty());
  CHECK(s.sent == std::vector<std::string>{
                      R"([{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","result":[5],"id":2}])"});
}

TEST_CASE("send_result: the same traffic gives the same answers with it or without it", "[send_result]") {
  const std::vector<std::string> traffic = {
      R"({"jsonrpc":"2.0","method":"sum","params":[2,3],"id":1})",
      R"({"jsonrpc":"2.0","method":"fail","id":2})",
      R"({"jsonrpc":"2.0","method":"now_or_later","params":[null],"id":"x"})",
      R"([{"jsonrpc":"2.0","method":"sum","params":[1,1],"id":3},{"jsonrpc":"2.0","method":"fail","id":4}])",
      R"({"jsonrpc":"2.0","method":"sum","params":[1,2]})",
      R"({"jsonrpc":"2.0","method":"later","id":5})",
  };
  Split with, without(false);
  for (const auto& t : traffic) {
    with.in(t);
    without.in(t);
  }
  with.held->ok(json::object());
  without.held->ok(json::object());
  CHECK(without.results.empty());
  // In order, each answer through one hook or the other.
  CHECK(with.results.size() + with.sent.size() == without.sent.size());
  std::vector<std::string> all = with.results;
  all.insert(all.end(), with.sent.begin(), with.sent.end());
  std::sort(all.begin(), all.end());
  std::vector<std::string> expected = without.sent;
  std::sort(expected.begin(), expected.end());
  CHECK(all == expected);
}

TEST_CASE("send_result: a result its transport could not send is answered -32603 through send",
          "[send_result]") {
  Split s;
  s.fail_results = true;
  s.in(R"({"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"a"})");
  CHECK(s.results.empty());
  CHECK(s.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: the result could not be sent: port closed"},"id":"a"})"});
  CHECK(std::count(s.diags.begin(), s.diags.end(), Diagnostic::Kind::SendFailed) == 1);
}

TEST_CASE("send_result: measured answers go to send, with their metrics", "[send_result]") {
  std::int64_t us = 100;
  Split s(true, [&us](PeerOptions& o) {
    o.clock_us = [&us] { return us; };
    o.handshake = Handshake{};
    o.handshake->capabilities = {"metrics"};
  });
  s.in(R"({"jsonrpc":"2.0","method":"rpc.handshake","params":{"version":"1.0","capabilities":["metrics"]},"id":0})");
  s.sent.clear();
  s.results.clear();
  s.in(R"({"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1})");
  CHECK(s.results.empty());
  REQUIRE(s.sent.size() == 1);
  CHECK(s.sent[0].find(R"("metrics":{"processing_time_us":0)") != std::string::npos);
}
