// link.cpp — what every Link does the same way: offering the handshake (link.h).
#include "client/link.h"

#include <boost/asio/post.hpp>

namespace weft::host::detail {

std::optional<Error> send_handshake(boost::asio::io_context& io,
                                    const std::function<Result<Id>(HandshakeDone)>& send,
                                    std::function<void(std::optional<Error>)> answered) {
  auto r = send([&io, answered = std::move(answered)](Result<Handshake> h) {
    boost::asio::post(io, [answered, h = std::move(h)] {
      if (!h && h.error().code != code::kMethodNotFound)
        return answered(Error(code::kClosed, "rpc.handshake failed: " + h.error().message));
      answered(std::nullopt);
    });
  });
  if (!r) return Error(code::kClosed, "rpc.handshake failed: " + r.error().message);
  return std::nullopt;
}

void offer_handshake_on(boost::asio::io_context& io, const std::shared_ptr<Link>& link,
                        const std::function<Result<Id>(HandshakeDone)>& send, std::function<void()> opened) {
  auto failed = send_handshake(io, send, [w = std::weak_ptr<Link>(link), opened = std::move(opened)](std::optional<Error> e) {
    auto self = w.lock();
    if (!self || self->closed()) return;
    if (e) return self->close(*e);
    if (opened) opened();
    self->flush();
  });
  if (failed) return link->close(*failed);
  link->flush();
}

}  // namespace weft::host::detail
