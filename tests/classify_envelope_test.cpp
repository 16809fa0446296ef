// classify(Envelope&&) (message.h): a decoder that found the members itself
// (the JSON parser's EnvelopeBuilder, json/parse.h) gets the Items that
// classify(Document&&) gives the same JSON object: the rules are judge()'s,
// written once.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "weft/weft.h"

using namespace weft;

namespace {

// An Item as comparable text: the message's JSON, or the Invalid's fields.
std::string item_text(const Item& item) {
  if (const auto* bad = std::get_if<Invalid>(&item))
    return "Invalid id=" + bad->id.to_string() + " code=" + std::to_string(bad->error.code) + " msg=" +
           bad->error.message + " reply=" + std::to_string(bad->reply) + " foreign=" +
           std::to_string(bad->foreign) + " call=" + std::to_string(bad->call);
  return std::visit(
      [](const auto& m) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(m)>, Invalid>) return "";
        else return to_json_text(Message(m));
      },
      item);
}

}  // namespace

TEST_CASE("classify(Envelope) gives the Items that classify() gives the same JSON object", "[classify]") {
  auto via_document = [](const std::string& text, std::optional<std::string> lexeme = std::nullopt) {
    Document d;
    d.value = json::parse(text);
    if (lexeme) d.id_lexemes.push_back({-1, *lexeme});
    Incoming in = classify(std::move(d));
    REQUIRE_FALSE(in.batch);
    REQUIRE(in.items.size() == 1);
    return item_text(in.items[0]);
  };
  auto envelope = [](const std::string& text, std::optional<std::string> lexeme = std::nullopt) {
    json v = json::parse(text);
    Envelope e;
    if (auto it = v.find("jsonrpc"); it != v.end()) e.version = *it == "2.0";
    if (auto it = v.find("method"); it != v.end()) e.method = string_member(*it);
    const std::initializer_list<std::pair<const char*, std::optional<json>*>> members = {
        {"params", &e.params}, {"id", &e.id}, {"result", &e.result}, {"error", &e.error}};
    for (auto [key, slot] : members)
      if (auto it = v.find(key); it != v.end()) *slot = *it;
    e.id_lexeme = std::move(lexeme);
    return item_text(classify(std::move(e)));
  };

  const std::string request = R"({"jsonrpc":"2.0","method":"sum","params":[1,2],"id":3})";
  CHECK(envelope(request) == via_document(request));
  CHECK(envelope(request) == R"({"jsonrpc":"2.0","method":"sum","params":[1,2],"id":3})");

  const std::string lexeme_request = R"({"jsonrpc":"2.0","method":"m","params":{"a":1},"id":1.50})";
  CHECK(envelope(lexeme_request, "1.50") == via_document(lexeme_request, "1.50"));
  CHECK(envelope(lexeme_request, "1.50") == R"({"jsonrpc":"2.0","method":"m","params":{"a":1},"id":1.50})");

  const std::string notification = R"({"jsonrpc":"2.0","method":"note","params":{"x":null}})";
  CHECK(envelope(notification) == via_document(notification));
  CHECK(envelope(notification) == notification);

  const std::string result = R"({"jsonrpc":"2.0","result":{"k":[true]},"id":"r"})";
  CHECK(envelope(result) == via_document(result));
  CHECK(envelope(result) == result);

  const std::string error = R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"nope","data":[1]},"id":5})";
  CHECK(envelope(error) == via_document(error));
  CHECK(envelope(error) == error);

  // Envelope::valid_id: an id its decoder already holds counts as that "id".
  auto with_valid_id = [](Id id, bool call) {
    Envelope e;
    e.version = true;
    if (call) {
      e.method = string_member("sum");
      e.params = json::array({1, 2});
    } else {
      e.result = json(7);
    }
    e.valid_id = std::move(id);
    return item_text(classify(std::move(e)));
  };
  CHECK(with_valid_id(Id::integer(3), true) == via_document(request));
  CHECK(with_valid_id(Id::string("s"), true) == via_document(R"({"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"s"})"));
  CHECK(with_valid_id(Id::integer(-4), false) == via_document(R"({"jsonrpc":"2.0","result":7,"id":-4})"));

  const std::string bad_version = R"({"jsonrpc":"1.0","method":"x","id":1})";
  CHECK(envelope(bad_version) == via_document(bad_version));
  CHECK(envelope(bad_version) ==
        R"(Invalid id=1 code=-32600 msg=Invalid Request: "jsonrpc" must be exactly "2.0" reply=1 foreign=1 call=1)");

  const std::string no_version_response = R"({"result":1,"id":2})";
  CHECK(envelope(no_version_response) == via_document(no_version_response));
  CHECK(envelope(no_version_response) ==
        R"(Invalid id=2 code=-32600 msg=Invalid Request: response "jsonrpc" must be exactly "2.0" reply=0 foreign=1 call=0)");
}
