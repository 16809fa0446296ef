// client.cpp — the Client's public face (weft/host/client.h); its state and
// rules are in impl.h, calls.cpp and connection.cpp.
#include <boost/asio/post.hpp>

#include "client/impl.h"
#include "util.h"

namespace weft::host {

// ---- Client --------------------------------------------------------------

Client::Client(boost::asio::io_context& io, ClientConfig config)
    : impl_(std::make_shared<Impl>(io, std::move(config))) {
  impl_->owner = this;
  detail::ignore_sigpipe();
}

Client::~Client() {
  impl_->owner = nullptr;
  impl_->close(true, Error(code::kClosed, "the client was destroyed"));
  // Calls still waiting (to be sent again) fail too: nothing is left hanging.
  std::vector<CallId> rest;
  for (auto& [id, c] : impl_->calls) rest.push_back(id);
  for (CallId id : rest)
    impl_->settle(id, Outcome::Status::ConnectFailed, {}, Error(code::kClosed, "the client was destroyed"));
}

void Client::method(std::string name, MethodHandler h, std::optional<ParamSpec> spec) {
  impl_->registrations.push_back([name, h, spec](Peer& p) { p.method(name, h, spec); });
}
void Client::method(std::string name, SyncHandler h, std::optional<ParamSpec> spec) {
  impl_->registrations.push_back([name, h, spec](Peer& p) { p.method(name, h, spec); });
}
void Client::notification(std::string name, NotificationHandler h) {
  impl_->registrations.push_back([name, h](Peer& p) { p.notification(name, h); });
}

void Client::connect() { impl_->ensure_connecting(); }

CallId Client::call(std::string method, std::optional<json> params, CallPolicy policy, Completion done) {
  return impl_->call(std::move(method), std::move(params), policy, std::move(done));
}

Result<void> Client::notify(std::string method, std::optional<json> params) {
  return impl_->notify(std::move(method), std::move(params));
}

bool Client::cancel(CallId id) { return impl_->cancel(id); }

void Client::shutdown(std::function<void()> done) {
  Impl& s = *impl_;
  s.for_good = true;
  // Still connecting, or waiting out a drain's reconnect_after with calls or
  // notifications made meanwhile: what is queued goes out once the next
  // connection opens, which then closes (opened()). A draining connection
  // closes now; closed() then reconnects for what waits (drain.cpp).
  if (s.link || s.flush_after_drain()) {
    if (done) s.on_shutdown.push_back(std::move(done));
    if (s.link_open) s.link->shutdown();
    return;
  }
  s.reconnect_timer.cancel();
  s.close(true, Error(code::kClosed, "the client is closed"));
  if (done) boost::asio::post(s.io, std::move(done));
}

void Client::close(bool for_good) { impl_->close(for_good, Error(code::kClosed, "closed by the client")); }

Client::State Client::state() const { return impl_->state; }
std::size_t Client::pending() const { return impl_->calls.size(); }
std::uint64_t Client::connections() const { return impl_->connections; }
const std::optional<Error>& Client::last_error() const { return impl_->last_error; }
std::size_t Client::unsent_notifications() const { return impl_->unsent_notes; }
std::size_t Client::queued_notifications() const { return impl_->notes.size(); }
boost::asio::io_context& Client::context() { return impl_->io; }

}  // namespace weft::host
