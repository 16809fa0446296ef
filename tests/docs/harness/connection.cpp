// Completes README's "A server and a client over any byte stream" snippet
// (tests/docs/runners.mjs puts its #include lines first and the rest at the
// SNIPPET line): the names it leaves to the reader are given here, and what
// it should have done is checked after it.
#include <algorithm>
#include <cstdio>
#include <string>

int main() {
  weft::Millis now_ms = 0;
  // What "the socket" delivered: the answer to the snippet's call (id 1), LSP-framed.
  const std::string body = R"({"jsonrpc":"2.0","id":1,"result":"ok"})";
  const std::string bytes_read = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  {
// SNIPPET
    const auto methods = conn.peer().methods();
    const bool add = std::any_of(methods.begin(), methods.end(),
                                 [](const weft::MethodInfo& m) { return m.name == "add" && m.spec; });
    if (!add) return std::fputs("`add` is not registered with its ParamSpec\n", stderr), 1;
    if (conn.peer().pending() != 0) return std::fputs("the call was not settled by its answer\n", stderr), 1;
  }
  return 0;
}
