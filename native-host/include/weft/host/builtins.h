// weft/host/builtins.h — methods every weft server has, and the demo `sleep`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "weft/peer.h"

namespace weft::host {

// rpc.ping → {"status":"ok","uptime_ms":…,"version":…} (+ members of `extra()`),
// rpc.discover → openrpc_document(peer.methods()).
void register_builtins(Peer& peer, Millis started_ms, std::string title = "weft",
                       std::function<json()> extra = {});

// An OpenRPC 1.3 document describing `methods` (notifications have no result).
json openrpc_document(const std::vector<MethodInfo>& methods, const std::string& title,
                      const std::string& version);

// sleep {"ms": N} (or [N]) → N after N ms, on an Asio timer, without blocking
// other requests; $/cancelRequest answers -32800 at once.
void register_sleep(Peer& peer, boost::asio::any_io_executor executor);

// The host library's version (reported by rpc.ping).
const char* host_version();

}  // namespace weft::host
