// weft/weft.h — everything a user of the core needs, in one include.
//
//   error.h       Error {code, message, data}, Result<T>, the error codes
//   message.h     Id, Request/Notification/Response, classify(), write_json()
//   codec.h       JSON and MessagePack codecs
//   framing.h     Lsp / Ndjson / Len32Be / Len32Le streaming framers
//   peer.h        the bidirectional endpoint (serve + call), sans-I/O, with
//                 params.h (ParamSpec) and diagnostic.h (Diagnostic)
//   connection.h  a Peer over a byte stream (framer + codec + peer)
//   compression.h zstd payload compression (docs/framing.md)
//   time.h        Millis: time as a value the host passes in
#pragma once

#include "weft/codec.h"
#include "weft/compression.h"
#include "weft/connection.h"
#include "weft/error.h"
#include "weft/framing.h"
#include "weft/message.h"
#include "weft/peer.h"

namespace weft {
// Semantic version of the core, e.g. "0.1.0".
const char* version();
}  // namespace weft
