// Private: checking params against a ParamSpec (§4.2, -32602 per §5.1).
#pragma once

#include <optional>
#include <string>

#include "weft/error.h"
#include "weft/params.h"

namespace weft::detail {

// Returns params normalised to an object keyed by parameter name, or a -32602
// Error whose message names the offending parameter. Absent params count as
// an empty list.
// Consumes `params` (moved into the result when valid); the caller discards it.
// `placeholder_type` (PeerOptions::placeholder_type), when set, gives the type
// of a member that is a host's placeholder.
using PlaceholderType = std::optional<ParamType> (*)(const json&);
Result<json> check_params(const ParamSpec& spec, std::optional<json>& params,
                          PlaceholderType placeholder_type = nullptr);

}  // namespace weft::detail
