// listener.h — opening listening sockets: Unix (with stale-socket takeover) and TCP.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "weft/error.h"

namespace weft::host::detail {

struct UnixSocketFile {
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
};

// Binds and listens on `path` with mode 0600. An existing socket file is probed
// with connect(): refused → stale (left by a dead process) → unlinked and
// replaced; accepted → a live server owns it → error, the file is untouched.
// A path that exists but is not a socket is never removed.
Result<void> open_unix_listener(boost::asio::local::stream_protocol::acceptor& acceptor,
                                const std::string& path, UnixSocketFile& file,
                                const std::function<void(std::string_view)>& log);

// Removes the socket file only if it is still the one we bound (same inode).
void remove_socket_file(const UnixSocketFile& file);

Result<void> open_tcp_listener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host,
                               std::uint16_t port);

}  // namespace weft::host::detail
