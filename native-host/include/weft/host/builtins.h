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

// bytes {"count": N, "size": S} (or [N, S]) → streams N chunks of S bytes
// each, as binary values (MessagePack `bin`; the JSON codec writes binary as
// {"bytes":[…],"subtype":null}), chunk k filled with the byte k % 256, with
// total N; then answers {"chunks": N, "bytes": N·S}. It writes as fast as
// the caller's credit allows (Reply::on_writable) and stops at
// $/cancelRequest. A caller that opened no stream gets -32600; S over
// PeerLimits::max_stream_chunk gets -32602 before anything is allocated.
void register_bytes(Peer& peer);

// The host library's version (reported by rpc.ping).
const char* host_version();

}  // namespace weft::host
