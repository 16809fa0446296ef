// The header checks every WebSocket and HTTP request passes first
// (native-host/src/net/origin.h; docs/transports.md, "Security and limits"
// and "Compression"), one case per rule.
#include <catch2/catch.hpp>

#include "net/origin.h"

using namespace weft::host::detail;

TEST_CASE("Origin: absent is allowed, present must be listed exactly or the list holds *") {
  const std::vector<std::string> allow{"http://127.0.0.1:8080"};
  CHECK(origin_allowed(allow, false, ""));
  CHECK(origin_allowed(allow, true, "http://127.0.0.1:8080"));
  CHECK_FALSE(origin_allowed(allow, true, "http://127.0.0.1:8081"));
  CHECK_FALSE(origin_allowed(allow, true, "http://127.0.0.1:8080/"));
  CHECK_FALSE(origin_allowed({}, true, "http://127.0.0.1:8080"));
  CHECK(origin_allowed({"*"}, true, "https://anything.example"));
}

TEST_CASE("Accept: the type, its major/* or */* is listed; parameters are ignored") {
  CHECK(accepts("application/json, text/event-stream", "text/event-stream"));
  CHECK(accepts("application/json;q=0.9", "application/json"));
  CHECK(accepts("text/*", "text/event-stream"));
  CHECK(accepts("*/*", "application/json"));
  CHECK_FALSE(accepts("application/json", "text/event-stream"));
  CHECK_FALSE(accepts("", "application/json"));
}

TEST_CASE("Accept: q=0 refuses, and the most specific range decides (RFC 9110 §12.4.2, §12.5.1)") {
  CHECK_FALSE(accepts("application/json;q=0, text/event-stream", "application/json"));
  CHECK(accepts("application/json;q=0, text/event-stream", "text/event-stream"));
  CHECK_FALSE(accepts("*/*, application/json; q=0.0", "application/json"));
  CHECK(accepts("application/*;q=0, application/json", "application/json"));
  CHECK_FALSE(accepts("text/*;q=0, */*", "text/event-stream"));
  CHECK(accepts("application/json;q=0.001", "application/json"));
}

TEST_CASE("Content-Type: type and subtype are case-insensitive, parameters follow OWS \";\" (RFC 9110 §8.3.1)") {
  for (const char* v : {"application/json", "Application/JSON", "application/json ; charset=utf-8",
                        "APPLICATION/JSON;charset=utf-8", " application/json\t"})
    CHECK(media_type_is(v, "application/json"));
  for (const char* v : {"", "application/jsonx", "application/json-seq", "text/json", "application/ json"})
    CHECK_FALSE(media_type_is(v, "application/json"));
}

TEST_CASE("Accept-Encoding: a coding named with a weight above 0 is allowed (RFC 9110 §12.5.3)") {
  CHECK(accepts_coding("zstd", "zstd"));
  CHECK(accepts_coding("gzip, deflate, br, zstd", "zstd"));
  CHECK(accepts_coding("ZSTD", "zstd"));  // codings are case-insensitive
  CHECK(accepts_coding("zstd;q=0.5", "zstd"));
  CHECK(accepts_coding("zstd ; q=1", "zstd"));
  CHECK(accepts_coding("zstd;q=0.001", "zstd"));
}

TEST_CASE("Accept-Encoding: q=0 refuses a coding, in every spelling of zero") {
  for (const char* h : {"zstd;q=0", "zstd;q=0.0", "zstd;q=0.00", "zstd;q=0.000", "zstd;Q=0", "gzip, zstd;q=0"})
    CHECK_FALSE(accepts_coding(h, "zstd"));
}

TEST_CASE("Accept-Encoding: * stands for codings not named; a named coding's own weight wins") {
  CHECK(accepts_coding("*", "zstd"));
  CHECK(accepts_coding("gzip, *;q=0.1", "zstd"));
  CHECK_FALSE(accepts_coding("*;q=0", "zstd"));
  CHECK_FALSE(accepts_coding("zstd;q=0, *", "zstd"));
  CHECK(accepts_coding("zstd, *;q=0", "zstd"));
}

TEST_CASE("Accept-Encoding: an empty header, or one without the coding, allows none (weft compresses only when asked)") {
  CHECK_FALSE(accepts_coding("", "zstd"));
  CHECK_FALSE(accepts_coding("gzip, br", "zstd"));
  CHECK_FALSE(accepts_coding("identity", "zstd"));
  CHECK_FALSE(accepts_coding("zstdx", "zstd"));
}
