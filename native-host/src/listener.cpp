// listener.cpp — see listener.h.
#include "listener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <boost/asio/ip/address.hpp>

namespace weft::host::detail {

namespace {

Error sys_error(const std::string& what, int err) {
  return Error(code::kServerError, what + ": " + std::strerror(err));
}

enum class Probe { Live, Stale, Gone, Failed };

// connect() to a socket file: is anybody accepting on it?
Probe probe_unix(const std::string& path, int& err) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    err = errno;
    return Probe::Failed;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  } while (rc < 0 && errno == EINTR);
  err = rc < 0 ? errno : 0;
  ::close(fd);
  if (rc == 0) return Probe::Live;
  if (err == ECONNREFUSED) return Probe::Stale;
  if (err == ENOENT) return Probe::Gone;
  if (err == EAGAIN) return Probe::Live;  // backlog full: very much alive
  return Probe::Failed;
}

}  // namespace

Result<void> open_unix_listener(boost::asio::local::stream_protocol::acceptor& acceptor,
                                const std::string& path, UnixSocketFile& file,
                                const std::function<void(std::string_view)>& log) {
  if (path.empty()) return Error(code::kServerError, "empty socket path");
  if (path.size() >= sizeof(sockaddr_un{}.sun_path))
    return Error(code::kServerError, "socket path too long (max " +
                                         std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
                                         " bytes): " + path);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return Error(code::kServerError, path + " exists and is not a socket; not touching it");
    int err = 0;
    switch (probe_unix(path, err)) {
      case Probe::Live:
        return Error(code::kServerError,
                     "another server is already listening on " + path + "; not replacing it");
      case Probe::Stale:
        if (log) log("removing stale socket " + path + " (nothing listening)");
        if (::unlink(path.c_str()) != 0 && errno != ENOENT)
          return sys_error("cannot remove stale socket " + path, errno);
        break;
      case Probe::Gone:
        break;
      case Probe::Failed:
        return sys_error("cannot probe existing socket " + path, err);
    }
  } else if (errno != ENOENT) {
    return sys_error("cannot stat " + path, errno);
  }

  using proto = boost::asio::local::stream_protocol;
  boost::system::error_code ec;
  acceptor.open(proto(), ec);
  if (ec) return Error(code::kServerError, "socket: " + ec.message());
  // The file is created 0600 from the start: no window where others could connect.
  const mode_t old = ::umask(0177);
  acceptor.bind(proto::endpoint(path), ec);
  ::umask(old);
  if (ec) {
    acceptor.close();
    return Error(code::kServerError, "bind " + path + ": " + ec.message());
  }
  ::chmod(path.c_str(), 0600);
  acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor.close();
    ::unlink(path.c_str());
    return Error(code::kServerError, "listen " + path + ": " + ec.message());
  }
  if (::stat(path.c_str(), &st) == 0) {
    file.dev = st.st_dev;
    file.ino = st.st_ino;
  }
  file.path = path;
  return {};
}

void remove_socket_file(const UnixSocketFile& file) {
  if (file.path.empty()) return;
  struct stat st {};
  if (::lstat(file.path.c_str(), &st) != 0) return;
  if (S_ISSOCK(st.st_mode) && st.st_dev == file.dev && st.st_ino == file.ino)
    ::unlink(file.path.c_str());
}

Result<void> open_tcp_listener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host,
                               std::uint16_t port) {
  boost::system::error_code ec;
  std::string h = host == "localhost" ? "127.0.0.1" : host;
  auto addr = boost::asio::ip::make_address(h, ec);
  if (ec) return Error(code::kServerError, "bad TCP address '" + host + "': " + ec.message());
  boost::asio::ip::tcp::endpoint ep(addr, port);
  acceptor.open(ep.protocol(), ec);
  if (ec) return Error(code::kServerError, "socket: " + ec.message());
  acceptor.set_option(boost::asio::socket_base::reuse_address(true), ec);
  acceptor.bind(ep, ec);
  if (ec) {
    acceptor.close();
    return Error(code::kServerError, "bind " + host + ":" + std::to_string(port) + ": " + ec.message());
  }
  acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor.close();
    return Error(code::kServerError, "listen: " + ec.message());
  }
  return {};
}

}  // namespace weft::host::detail
