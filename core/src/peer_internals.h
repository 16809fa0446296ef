// Private: what the core's own Connection may do with a Peer that the public
// API does not offer.
#pragma once

#include "json_parse.h"
#include "weft/peer.h"

namespace weft::detail {

struct PeerInternals {
  // Peer::receive for a FlatDocument (json_parse.h): the JSON hot path.
  static void receive(Peer& peer, FlatDocument&& doc);
};

}  // namespace weft::detail
