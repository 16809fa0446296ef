// wasm/payloads.h — payloads the core carries without owning them.
//
// params, result and error.data are JavaScript values; the protocol only
// checks their JSON type. So they stay in JS and the core holds a *marker*
// in their place: a json value of the right type that names a handle.
//
// Handles (abi.h, PAY_*):
//  * outbound (a value JS hands to the core: call params, a handler's result
//    or error data) = generation << INDEX_BITS | index into js/payloads.js's
//    table. JS gives up the value when it hands the handle over; the handle
//    comes back exactly once, in an outgoing record — sent (js_send,
//    js_result: one result without metrics, PeerOptions::send_result) or
//    dropped (js_discard: PeerOptions::discard, or a call that failed) —
//    and js/payloads.js frees it there and nowhere else. A single call's
//    params get no handle: they stay with the caller, who posts the request
//    (abi.h PAY_CALLER, STATUS_POST_REQUEST). A handle whose
//    generation does not match is refused, never resolved to another value.
//  * inbound (a value in a message being received) = INBOUND_BASE + its
//    index in that message's list; valid while weft_receive (or a short
//    way in, weft_request or weft_notification: js/short.js) runs
//    (handlers and call completions see it synchronously), released when
//    it returns.
//
// Marker shapes, chosen so that no value the core or a JSON parse produces
// can be mistaken for one:
//  * any type (result, error.data): binary, no bytes, subtype = handle (no
//    JSON text decodes to binary);
//  * a member of params checked against a ParamSpec (PeerOptions::
//    inspect_members): an object or array marker, or binary whose one byte
//    is the weft::ParamType the value has (placeholder_type reads it);
//  * object params: {"\xFF": handle} ("\xFF" is not UTF-8: no parsed or
//    JS-encoded key is "\xFF");
//  * array params: [<discarded>, handle] (a parse never yields discarded).
// Markers are pooled: building and destroying them showed in the small-call
// profile, so those the glue gets back are refilled instead.
#pragma once

#include <optional>

#include "weft/weft.h"

namespace weft::wasm {

json value_marker(double handle);
json object_marker(double handle);
json array_marker(double handle);
// The same, made in `slot` (a json moved into an optional is one more to
// destroy).
void value_marker_in(std::optional<json>& slot, double handle);
void object_marker_in(std::optional<json>& slot, double handle);
void array_marker_in(std::optional<json>& slot, double handle);
// The handle `v` is a marker for, or abi::kPAY_TEXT when `v` is a real value.
double marker_of(const json& v);
// The same, and `v` given back to its pool when it is a marker (read
// nothing from `v` after); a real value is left alone.
double take_marker(json& v);
// A marker for handle `n` whose value has JSON type `t` (never Any): an
// object or array marker, else a typed binary one.
json typed_marker(double n, ParamType t);
// PeerOptions::placeholder_type: the type a typed binary marker stands for.
std::optional<ParamType> placeholder_type(const json& v);

}  // namespace weft::wasm
