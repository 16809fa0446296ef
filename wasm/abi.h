// wasm/abi.h — the one declaration of everything that crosses the boundary
// between weft.wasm and its JavaScript glue (js/).
//
// Every layout, enum value, error code and name below is listed once, in an
// X-macro table. The glue compiles against the tables; the module exports
// them as JSON (weft_abi(), abi.cpp), and the build writes them out as
// dist/weft_abi.js, the only place js/ takes these numbers from. The loader
// refuses a weft_abi.js whose hash differs from the module's, and
// tests/js/abi.test.mjs compares the two member by member.
//
// Conventions
//  * Numbers cross as doubles (one Float64 slot each) in two arrays that the
//    module owns: the *descriptor* array (JS → core: one incoming message per
//    record) and the *record* array (core → JS: one outgoing message per
//    record). Strings cross as UTF-8 in one byte buffer (the input buffer
//    going in; pointers into the module's memory coming out).
//  * Payloads — params, result and error.data, values the protocol only
//    type-checks — stay JavaScript values and cross as *handles* (payloads.h).
#pragma once

#include <cstddef>

// -- JSON value kinds, as JS describes a member (ValueKind) ------------------
// Absent: no such member (or undefined). Payload: the value is a handle.
// NonFinite: a number JSON cannot express (NaN, ±Infinity, a BigInt). Array/Object in a
// member that is not a payload (jsonrpc, method, id, error.code/message) are
// described by kind only: the core then only names their type. Version: in
// the jsonrpc slot only, "2.0" by construction — a tuple's (docs/protocol.md,
// "Tuples"), which has no version member to spell.
#define WEFT_ABI_VALUE_KINDS(X) \
  X(VALUE_ABSENT, 0)                  \
  X(VALUE_NULL, 1)                    \
  X(VALUE_FALSE, 2)                   \
  X(VALUE_TRUE, 3)                    \
  X(VALUE_NUMBER, 4)                  \
  X(VALUE_STRING, 5)                  \
  X(VALUE_ARRAY, 6)                   \
  X(VALUE_OBJECT, 7)                  \
  X(VALUE_NON_FINITE, 8)              \
  X(VALUE_PAYLOAD, 9)                 \
  X(VALUE_VERSION, 10)

// -- The incoming descriptor: one record of DESC_SIZE doubles per message -----
// D_SHAPE: VALUE_OBJECT for a message object, else the kind of the non-object
// value. For a scalar member (kind + A [+ B]): NUMBER → A the value; STRING →
// A byte offset in the input buffer, B byte length. ID: as a scalar, and for a
// NUMBER that is not a safe integer, ID_C > 0 is the byte length of its
// JavaScript text at offset ID_B (the lexeme a JSON codec would keep).
// PARAMS: OBJECT or ARRAY with A the payload handle, or a scalar kind (which
// the core rejects, §4.2). RESULT, DATA: PAYLOAD with A the handle. ERROR:
// OBJECT with CODE_*, MESSAGE_*, DATA_* filled, or another kind (rejected).
// METRICS_KIND: the kind of a response's "metrics" member (docs/protocol.md
// "Metrics"); for an OBJECT, METRICS_TIME / METRICS_SIZE its members
// processing_time_us / response_size when they are numbers, else NaN (the
// core ignores metrics that are not two non-negative integers).
#define WEFT_ABI_DESC(X) \
  X(D_SHAPE, 0)            \
  X(D_JSONRPC_KIND, 1)     \
  X(D_JSONRPC_A, 2)        \
  X(D_JSONRPC_B, 3)        \
  X(D_METHOD_KIND, 4)      \
  X(D_METHOD_A, 5)         \
  X(D_METHOD_B, 6)         \
  X(D_ID_KIND, 7)          \
  X(D_ID_A, 8)             \
  X(D_ID_B, 9)             \
  X(D_ID_C, 10)            \
  X(D_PARAMS_KIND, 11)     \
  X(D_PARAMS_A, 12)        \
  X(D_RESULT_KIND, 13)     \
  X(D_RESULT_A, 14)        \
  X(D_ERROR_KIND, 15)      \
  X(D_CODE_KIND, 16)       \
  X(D_CODE_A, 17)          \
  X(D_MESSAGE_KIND, 18)    \
  X(D_MESSAGE_A, 19)       \
  X(D_MESSAGE_B, 20)       \
  X(D_DATA_KIND, 21)       \
  X(D_DATA_A, 22)          \
  X(D_METRICS_KIND, 23)    \
  X(D_METRICS_TIME, 24)    \
  X(D_METRICS_SIZE, 25)    \
  X(D_SIZE, 26)

// -- The outgoing record: one record of REC_SIZE doubles per message ----------
// KIND: a MSG_* value. ID_KIND: an ID_* value; ID_INT → ID_A the integer;
// ID_BIG, an integer beyond 2^53 → ID_A its
// magnitude's high 32 bits with its sign, ID_B the low 32;
// ID_STRING / ID_LEXEME → ID_A pointer, ID_B byte length. STR_P/STR_N: the
// method (requests, notifications) or the error message. CODE: the error
// code. PAY: PAY_NONE, a payload handle, or PAY_TEXT with the value as JSON
// text at TEXT_P (offset from the text pointer js_send/js_result pass), TEXT_N bytes:
// values the core made itself (e.g. $/cancelRequest's params). VALUE: for
// params the core made around a payload ($/weft/chunk, $/progress), that
// payload's handle, to be set as params.value (the text leaves it out);
// else PAY_NONE. METRICS: for a response that carries metrics, its
// processing_time_us; else METRICS_NONE. (Its response_size is the JSON
// text's, which only JS can measure: js/wire.js, as an encoder does.)
#define WEFT_ABI_REC(X) \
  X(R_KIND, 0)            \
  X(R_ID_KIND, 1)         \
  X(R_ID_A, 2)            \
  X(R_ID_B, 3)            \
  X(R_STR_P, 4)           \
  X(R_STR_N, 5)           \
  X(R_CODE, 6)            \
  X(R_PAY, 7)             \
  X(R_TEXT_P, 8)          \
  X(R_TEXT_N, 9)          \
  X(R_VALUE, 10)          \
  X(R_METRICS, 11)        \
  X(R_SIZE, 12)

// -- One entry of an outgoing batch (weft_batch): B_SIZE doubles ------------
// METHOD_AT/LEN: the method in the input buffer; PARAMS_KIND/A: as a call's
// params (OBJECT/ARRAY + payload handle, ABSENT, or a scalar kind); TOKEN: the
// call's token, -1 for a notification.
#define WEFT_ABI_BATCH(X) \
  X(B_METHOD_AT, 0)       \
  X(B_METHOD_LEN, 1)      \
  X(B_PARAMS_KIND, 2)     \
  X(B_PARAMS_A, 3)        \
  X(B_TOKEN, 4)           \
  X(B_SIZE, 5)

#define WEFT_ABI_MSG_KINDS(X) \
  X(MSG_REQUEST, 0)               \
  X(MSG_NOTIFICATION, 1)          \
  X(MSG_RESULT, 2)                \
  X(MSG_ERROR, 3)

#define WEFT_ABI_ID_KINDS(X) \
  X(ID_NULL, 0)                 \
  X(ID_INT, 1)                  \
  X(ID_STRING, 2)               \
  X(ID_LEXEME, 3)               \
  X(ID_BIG, 4)

// Payload slot values that are not handles, and the handle space
// (payloads.h): outbound handles are below INBOUND_BASE, inbound ones are
// INBOUND_BASE + their index in the message being received. PAY_CALLER:
// weft_call's params, which the caller keeps and posts itself
// (STATUS_POST_REQUEST); the core only reads their kind.
#define WEFT_ABI_PAY(X)        \
  X(PAY_NONE, -1)                  \
  X(PAY_TEXT, -2)                  \
  X(PAY_FAILED, -3)                \
  X(PAY_CALLER, -4)                \
  X(PAY_INDEX_BITS, 24)            \
  X(PAY_INBOUND_BASE, 4503599627370496) /* 2^52 */

// What a JS method handler returns to js_dispatch, and the tokens it gets:
// a notification's; TOKEN_HELD, a queued handler's whose answer the core
// holds (Deferral::hold: weft_reply* answer it, weft_defer_held makes it a
// token); or a request's lazy token TOKEN_LAZY - depth (depth: of the
// dispatch among those running), which weft_defer turns into the request's
// token when the answer cannot be given at once. RECEIVED_*: what
// weft_request returns: not received (JS describes the message), received,
// or received with the queued handler's request let go (Peer::release_held:
// a result it gives goes out from JS, as the core's send_result would send
// it; anything else is answered through weft_defer_held or weft_reply_error
// with the request's id, which holds it again, Peer::rehold).
#define WEFT_ABI_DISPATCH(X) \
  X(DISPATCH_LATER, -1)  /* answered later through weft_reply* */ \
  X(DISPATCH_DONE, -2)   /* answered already (an error), or a notification */ \
  X(TOKEN_NOTIFICATION, -1) \
  X(TOKEN_HELD, -2) \
  X(TOKEN_LAZY, -3) \
  X(RECEIVED_NOT, 0) \
  X(RECEIVED, 1) \
  X(RECEIVED_RELEASED, 2)

// Per-call timeout argument of weft_call / weft_batch.
#define WEFT_ABI_TIMEOUT(X) \
  X(TIMEOUT_DEFAULT, -1)            \
  X(TIMEOUT_NONE, -2)

// Streams and progress (docs/streams.md): what weft_reply_write returns, the
// progress argument of weft_call, the bits of weft_reply_state, and "no
// total" for a chunk.
#define WEFT_ABI_STREAM(X) \
  X(WRITE_REFUSED, -1)  /* not written: the error at weft_error() */ \
  X(WRITE_WAIT, 0)      /* wait for js_writable before writing again */ \
  X(WRITE_MORE, 1)      /* the caller has room for more now */ \
  X(PROGRESS_NONE, 0)                \
  X(PROGRESS_ASK, 1)                 \
  X(PROGRESS_RESETS, 2) /* asked for, and each value restarts the timeout */ \
  X(REPLY_STREAMING, 1)              \
  X(REPLY_PROGRESS, 2)               \
  X(TOTAL_NONE, -1)

// Per-response metrics (docs/protocol.md "Metrics"): R_METRICS of a
// response without them, and the `metrics` argument of weft_call /
// weft_batch (METRICS_ASK: the caller wants them through js_metrics).
#define WEFT_ABI_METRICS(X) \
  X(METRICS_NONE, -1)        \
  X(METRICS_SKIP, 0)         \
  X(METRICS_ASK, 1)

// The status array (weft_status()): what an export reports besides its
// return value. DEADLINE: the core's next deadline (ms) or -1, after every
// export that may move it. ERROR_LENGTH: the length of weft_error()'s text.
// POST_REQUEST: after weft_call, 1 when the call's request is the caller's
// to post (PeerOptions::send_request ran: the core sends it now, as the
// caller gave it), 0 when nothing is to be posted. QUEUED_*: after
// weft_request, weft_notification, weft_receive and weft_resume, the
// handler the core dispatched for a message (or a batch's member), which JS
// runs now that the export has returned (wasm/queued.cpp): FN the handler (-1: none), TOKEN
// TOKEN_HELD (a method's) or TOKEN_NOTIFICATION (a notification's), SLOT, TEXT_P
// and TEXT_N its params as js_dispatch gives them (the text is kept until
// the next such export). PAUSED: after weft_receive of a batch, 1 when the
// batch paused after the member whose handler is queued (Peer::pause): JS
// runs it, then calls weft_resume (which returns the same for the next);
// else 0.
#define WEFT_ABI_STATUS(X) \
  X(STATUS_DEADLINE, 0)     \
  X(STATUS_ERROR_LENGTH, 1) \
  X(STATUS_POST_REQUEST, 2) \
  X(STATUS_QUEUED_FN, 3)    \
  X(STATUS_QUEUED_TOKEN, 4) \
  X(STATUS_QUEUED_SLOT, 5)  \
  X(STATUS_QUEUED_TEXT_P, 6) \
  X(STATUS_QUEUED_TEXT_N, 7) \
  X(STATUS_PAUSED, 8)       \
  X(STATUS_SIZE, 9)

// weft::Role (peer.h), by value.
#define WEFT_ABI_ROLES(X) \
  X(ROLE_PEER, 0)              \
  X(ROLE_CLIENT, 1)            \
  X(ROLE_SERVER, 2)

// weft::code (error.h): the codes JS reports or compares with.
#define WEFT_ABI_CODES(X)          \
  X(ParseError, -32700)            \
  X(InvalidRequest, -32600)        \
  X(MethodNotFound, -32601)        \
  X(InvalidParams, -32602)         \
  X(InternalError, -32603)         \
  X(ServerError, -32000)           \
  X(Timeout, -32001)               \
  X(Closed, -32002)                \
  X(Overloaded, -32003)            \
  X(RateLimited, -32004)           \
  X(Unavailable, -32005)           \
  X(VersionMismatch, -32006)       \
  X(RequestCancelled, -32800)

// weft::Diagnostic::Kind (weft/diagnostic.h), in declaration order: the number JS gets
// is the index here. abi.cpp static_asserts each against the enum.
#define WEFT_ABI_DIAGNOSTICS(X) \
  X(UnknownResponse)            \
  X(InvalidResponse)            \
  X(UnhandledNotification)      \
  X(NotificationFailed)         \
  X(ErrorWithoutId)             \
  X(LateReply)                  \
  X(BadFrame)                   \
  X(IgnoredMessage)             \
  X(SendFailed)

// weft::ParamType (weft/params.h), in declaration order, as ParamSpec JSON names them.
#define WEFT_ABI_PARAM_TYPES(X) \
  X(Any, "any")                 \
  X(Null, "null")               \
  X(Boolean, "boolean")         \
  X(Integer, "integer")         \
  X(Number, "number")           \
  X(String, "string")           \
  X(Array, "array")             \
  X(Object, "object")

namespace weft::abi {

#define WEFT_ABI_ENUM(name, value) name = value,
enum ValueKind : int { WEFT_ABI_VALUE_KINDS(WEFT_ABI_ENUM) };
enum Desc : int { WEFT_ABI_DESC(WEFT_ABI_ENUM) };
enum Rec : int { WEFT_ABI_REC(WEFT_ABI_ENUM) };
enum BatchEntry : int { WEFT_ABI_BATCH(WEFT_ABI_ENUM) };
enum MsgKind : int { WEFT_ABI_MSG_KINDS(WEFT_ABI_ENUM) };
enum IdKind : int { WEFT_ABI_ID_KINDS(WEFT_ABI_ENUM) };
enum Dispatch : int { WEFT_ABI_DISPATCH(WEFT_ABI_ENUM) };
enum Timeout : int { WEFT_ABI_TIMEOUT(WEFT_ABI_ENUM) };
enum RoleValue : int { WEFT_ABI_ROLES(WEFT_ABI_ENUM) };
enum Status : int { WEFT_ABI_STATUS(WEFT_ABI_ENUM) };
#undef WEFT_ABI_ENUM
#define WEFT_ABI_CONST(name, value) inline constexpr int name = value;
WEFT_ABI_STREAM(WEFT_ABI_CONST)
WEFT_ABI_METRICS(WEFT_ABI_CONST)
#undef WEFT_ABI_CONST
#define WEFT_ABI_ENUM(name, value) name = value,
#undef WEFT_ABI_ENUM

#define WEFT_ABI_CONST(name, value) inline constexpr double k##name = value;
WEFT_ABI_PAY(WEFT_ABI_CONST)
#undef WEFT_ABI_CONST

// Every member of a record is one double: the sizes are the last entries.
static_assert(D_SIZE == D_METRICS_SIZE + 1, "descriptor members are dense");
static_assert(R_SIZE == R_METRICS + 1, "record members are dense");
static_assert(kPAY_INBOUND_BASE == 4503599627370496.0, "2^52: above every outbound handle");
static_assert(kPAY_INDEX_BITS < 52, "handles stay exact doubles");

}  // namespace weft::abi
