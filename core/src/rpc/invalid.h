// Private: the Invalid Request (-32600) of a broken §4–§6 rule, made by the
// judge's verdicts (validate.cpp) and by classification (envelope.cpp).
#pragma once

#include <string_view>

#include "weft/message.h"
#include "cold.h"

namespace weft::detail {

// Out of line and cold: see cold.h. `got`: the kind of the value whose type
// is wrong, appended to `what` ("…, got a string"); Absent: none.
WEFT_COLD Invalid invalid(Id id, std::string_view what, bool reply = true, MemberKind got = MemberKind::Absent);

// The rule `bad` broke, as invalid() wrote it after its "Invalid Request: "
// prefix: for a malformed answer, which is not a request, to be reported
// under a name of its own ("Invalid response: …").
std::string_view rule_of(const Invalid& bad);

}  // namespace weft::detail
