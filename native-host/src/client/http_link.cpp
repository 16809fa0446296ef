// http_link.cpp — placeholder, replaced below.
#include <boost/asio/post.hpp>
#include "client/link.h"
namespace weft::host::detail {
std::shared_ptr<Link> open_http_link(boost::asio::io_context&, const Address&, const ClientConfig&, LinkHooks) {
  return nullptr;
}
}  // namespace weft::host::detail
