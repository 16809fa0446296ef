// judge() (message.h): the rules of §4–§5 as a function of member kinds,
// one case per rule. The decoders that feed it (Envelope, the WebAssembly
// descriptor) are replayed against the shared vectors elsewhere; here each
// rule is checked on its own Shape, with the Invalid it makes.
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "weft/weft.h"

using namespace weft;
using K = MemberKind;
using Is = Verdict::Is;

namespace {

// Well-formed messages: a request (array params, a number id), a response
// carrying "result" (id a string) and one carrying "error".
Shape request() { return {.version = true, .method = K::String, .id = K::Number, .params = K::Array}; }
Shape result() { return {.version = true, .id = K::String, .result = K::Object}; }
Shape failure() {
  return {.version = true, .id = K::Number, .error = K::Object, .code = -32601, .message_is_string = true};
}

// The message of the Invalid a verdict makes (with id 7 when it echoes one).
std::string message_of(const Verdict& v) {
  REQUIRE(v.is == Is::Invalid);
  Invalid bad = invalid_of(v, v.echo_id ? Id::integer(7) : Id());
  CHECK(bad.error.code == code::kInvalidRequest);
  CHECK(bad.id == (v.echo_id ? Id::integer(7) : Id()));
  return bad.error.message;
}

}  // namespace

TEST_CASE("judge: a request has a method and an id, and without the id it is a notification (§4, §4.1)", "[judge]") {
  CHECK(judge(request()).is == Is::Request);
  Shape s = request();
  s.id = K::Absent;
  CHECK(judge(s).is == Is::Notification);
  s.params = K::Absent;  // §4: params "MAY be omitted"
  CHECK(judge(s).is == Is::Notification);
  for (K id : {K::String, K::Null}) {  // §4: "a String, Number, or Null value"
    s = request();
    s.id = id;
    CHECK(judge(s).is == Is::Request);
  }
}

TEST_CASE("judge: an id that is not a string, number or null is answered with id null (§4, §5)", "[judge]") {
  for (K id : {K::Boolean, K::Array, K::Object, K::NonFinite}) {
    Shape s = request();
    s.id = id;
    s.version = false;  // the id rule comes first: its answer cannot carry that id
    const Verdict v = judge(s);
    CHECK_FALSE(v.echo_id);
    CHECK(v.reply);
    CHECK(message_of(v) == std::string("Invalid Request: \"id\" must be a string, number or null, got ") + kind_name(id));
  }
}

TEST_CASE("judge: a request's \"jsonrpc\" must be exactly \"2.0\", and one without is foreign (§4)", "[judge]") {
  Shape s = request();
  s.version = false;
  const Verdict v = judge(s);
  CHECK(v.echo_id);
  CHECK(v.reply);
  CHECK(v.foreign);
  CHECK(v.call);
  CHECK(message_of(v) == "Invalid Request: \"jsonrpc\" must be exactly \"2.0\"");
}

TEST_CASE("judge: \"method\" must be a string (§4)", "[judge]") {
  Shape s = request();
  s.method = K::Number;
  const Verdict v = judge(s);
  CHECK(v.echo_id);
  CHECK(v.call);
  CHECK_FALSE(v.foreign);
  CHECK(message_of(v) == "Invalid Request: \"method\" must be a string, got a number");
}

TEST_CASE("judge: \"params\" must be an array or an object (§4.2)", "[judge]") {
  for (K p : {K::Null, K::Boolean, K::Number, K::String}) {
    Shape s = request();
    s.params = p;
    CHECK(message_of(judge(s)) == std::string("Invalid Request: \"params\" must be an array or an object, got ") +
                                      kind_name(p));
  }
  Shape s = request();
  s.params = K::Object;
  CHECK(judge(s).is == Is::Request);
}

TEST_CASE("judge: a response carries exactly one of \"result\" and \"error\" (§5)", "[judge]") {
  CHECK(judge(result()).is == Is::Result);
  CHECK(judge(failure()).is == Is::Failure);
  Shape s = result();
  s.result = K::Null;  // "result": null is a result
  CHECK(judge(s).is == Is::Result);
  s.error = K::Object;
  const Verdict v = judge(s);
  CHECK_FALSE(v.reply);  // a malformed response is reported, never answered
  CHECK(message_of(v) == "Invalid Request: response must have exactly one of \"result\" and \"error\"");
}

TEST_CASE("judge: a response's \"jsonrpc\" must be exactly \"2.0\" (§5)", "[judge]") {
  Shape s = result();
  s.version = false;
  const Verdict v = judge(s);
  CHECK_FALSE(v.reply);
  CHECK(v.foreign);
  CHECK_FALSE(v.call);
  CHECK(message_of(v) == "Invalid Request: response \"jsonrpc\" must be exactly \"2.0\"");
}

TEST_CASE("judge: a response needs a usable id (§5)", "[judge]") {
  for (K id : {K::Absent, K::Boolean, K::NonFinite}) {
    Shape s = failure();
    s.id = id;
    const Verdict v = judge(s);
    CHECK_FALSE(v.reply);
    CHECK_FALSE(v.echo_id);
    CHECK(message_of(v) == "Invalid Request: response has no usable \"id\"");
  }
}

TEST_CASE("judge: \"error\" must be an object with an integer code and a string message (§5.1)", "[judge]") {
  Shape s = failure();
  s.error = K::String;
  CHECK(message_of(judge(s)) == "Invalid Request: \"error\" must be an object");
  s = failure();
  s.code.reset();  // absent, fractional, or beyond 32 bits (error_code_from)
  CHECK(message_of(judge(s)) == "Invalid Request: error \"code\" must be an integer");
  s = failure();
  s.message_is_string = false;
  const Verdict v = judge(s);
  CHECK_FALSE(v.reply);
  CHECK(v.echo_id);
  CHECK(message_of(v) == "Invalid Request: error \"message\" must be a string");
}

TEST_CASE("judge: an object with neither \"method\" nor \"result\"/\"error\" is answered (§4)", "[judge]") {
  Shape s;
  s.version = true;
  s.id = K::Number;
  const Verdict v = judge(s);
  CHECK(v.reply);
  CHECK(v.echo_id);
  CHECK_FALSE(v.call);
  CHECK(message_of(v) == "Invalid Request: no \"method\" member");
}

TEST_CASE("kind_of names each JSON type as the rules' messages do", "[judge]") {
  CHECK(kind_of(json(nullptr)) == K::Null);
  CHECK(kind_of(json(true)) == K::Boolean);
  CHECK(kind_of(json(1)) == K::Number);
  CHECK(kind_of(json(1u)) == K::Number);
  CHECK(kind_of(json(1.5)) == K::Number);
  CHECK(kind_of(json(std::numeric_limits<double>::quiet_NaN())) == K::NonFinite);
  CHECK(kind_of(json("s")) == K::String);
  CHECK(kind_of(json::array()) == K::Array);
  CHECK(kind_of(json::object()) == K::Object);
  CHECK(kind_of(json::binary({1})) == K::Binary);
  CHECK(std::string(kind_name(K::NonFinite)) == "a number JSON cannot hold");
  CHECK(std::string(kind_name(K::Binary)) == "binary data");
}
