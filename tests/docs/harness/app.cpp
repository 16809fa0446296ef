// The `app` of README's find_package(weft) fragment: uses weft::host (and so
// weft::core), so it links only if the package's targets carry their
// include paths and dependencies.
#include <weft/host/host.h>
#include <weft/weft.h>

#include <cstdio>
#include <cstring>

int main() {
  weft::host::Server server;  // the host library, with its Asio context
  std::printf("weft %s\n", weft::version());
  return std::strlen(weft::version()) > 0 && server.connections() == 0 ? 0 : 1;
}
