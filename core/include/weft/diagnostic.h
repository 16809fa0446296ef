// weft/diagnostic.h — what a Peer reports and does not answer on the wire:
// dropped responses, failed notifications, refused frames, failed sends.
#pragma once

#include <optional>
#include <string>

#include "weft/error.h"
#include "weft/message.h"

namespace weft {

// Something the peer dropped or could not do, reported to
// PeerOptions::diagnostic (never answered on the wire unless stated).
struct Diagnostic {
  // What happened.
  enum class Kind {
    // (Names and order are part of the WebAssembly ABI: wasm/abi.h lists them.)
    UnknownResponse,     // response id matches no pending call (or a finished one)
    InvalidResponse,     // malformed response object; never answered
    UnhandledNotification,
    NotificationFailed,  // a notification handler returned/threw an error
    ErrorWithoutId,      // the other side sent an error response with id null
    LateReply,           // a Reply answered after its request was cancelled/closed
    BadFrame,            // (Connection) a frame or its payload was rejected; answered
                         // with an id-null error when the framing rule says so
    IgnoredMessage,      // dropped by PeerOptions::role / ignore_foreign, unanswered
    SendFailed,          // the transport could not deliver a message (undelivered())
  };
  // What happened, and a message saying what and why.
  Kind kind;
  std::string message;
  // The error involved, when there is one: the remote error (ErrorWithoutId),
  // the error answered (BadFrame), the handler's (NotificationFailed), the
  // transport's (SendFailed).
  std::optional<Error> error;
  // UnknownResponse: the response's id (a host that cancelled a call knows
  // that its late answer is expected).
  std::optional<Id> id = std::nullopt;
};

}  // namespace weft
