// wasm/calls.h — what the exports share: argument conversions (abi.h
// encodings), the status and error slots, and the completion hooks of
// outgoing calls (settle_to in host.h; chunks and progress here).
#pragma once

#include <optional>
#include <string>

#include "abi.h"
#include "host.h"
#include "weft/weft.h"

namespace weft::wasm {

// The status array JS reads at weft_status() (abi.h WEFT_ABI_STATUS).
extern double g_status[weft::abi::STATUS_SIZE];

Millis to_ms(double now);
// Whether a JS number id is the integer a JSON codec would read from its
// text: a safe integer, and not -0 (wire.js describes any other number id
// by its lexeme). The short ways in that take an id (weft_request,
// weft_result, weft_failure) take only these and decline the rest to
// weft_receive.
bool exact_int_id(double id);
// Stores the Peer's next deadline in the status array (-1: none) and returns it.
double note_deadline(Host* x);
// A per-call timeout argument (ms, TIMEOUT_DEFAULT, TIMEOUT_NONE).
CallOptions call_options(double timeout);
std::string in_string(double at, double n);
// Call or notification params from (kind, handle-or-number).
std::optional<json> params_of(double kind, double a);
// Hands an outbound handle the core will not use back to JS (js_discard).
void give_back(int h, std::optional<json>& params);
// The error JS reads at weft_error().
void set_error(const Error& e);

// A method's ParamSpec from its JSON (spec.cpp): an error (-32602) naming
// what cannot be read.
Result<ParamSpec> read_spec(const json& j);

// Chunks and progress values of outgoing call `token`, to JS (streams.cpp).
ChunkHandler chunks_to(int h, int token);
ProgressHandler progress_to(int h, int token);

}  // namespace weft::wasm
