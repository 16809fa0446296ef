// The 'wasm floor' server's module (wasm-floor.mjs): the least a JSON-RPC
// core behind JavaScript marshalling can do for one request. JavaScript
// writes the envelope's members into fixed typed slots; this checks them as
// the spec asks (§4: "jsonrpc" exactly "2.0", "method" a string, "id" a
// string, number or null, "params" absent or structured), finds the method,
// calls its handler through one import and writes one answer record that
// JavaScript turns into the response object. No limits, no correlation, no
// batches, no error texts: a lower bound for a core of this shape, not a
// peer (bench/README.md, "The floor of a core behind marshalling").
// Built by wasm-floor.mjs with clang's wasm32 target, no libc.

// Value kinds in the slots: 0 absent, 1 null, 2 false, 3 true, 4 number,
// 5 string, 6 array, 7 object.
enum { ABSENT, NUL, FALSE, TRUE, NUMBER, STRING, ARRAY, OBJECT };

// The handler of method `fn` on the params behind payload handle `params`;
// returns the result's payload handle.
__attribute__((import_module("env"), import_name("call"))) double js_call(int fn, double params);
// Posts the answer record.
__attribute__((import_module("env"), import_name("send"))) void js_send(void);

// In: 0 shape; 1 "jsonrpc" kind, 2 its length (its bytes at 0); 3 "method"
// kind, 4 its offset, 5 its length; 6 "id" kind, 7 its number; 8 "params"
// kind, 9 its payload handle.
static double slots[16];
static unsigned char bytes[1024];
// Out: 0 kind (1 result, 2 error), 1 id kind, 2 id number, 3 result
// handle, 4 error code.
static double record[8];

enum { MAX_METHODS = 16, MAX_NAME = 32 };
static unsigned char names[MAX_METHODS][MAX_NAME];
static int lengths[MAX_METHODS];
static int methods;

__attribute__((export_name("slots"))) double* slots_at(void) { return slots; }
__attribute__((export_name("bytes"))) unsigned char* bytes_at(void) { return bytes; }
__attribute__((export_name("record"))) double* record_at(void) { return record; }

// Registers the method named by the first `n` bytes; returns its number, or -1.
__attribute__((export_name("register"))) int register_method(int n) {
  if (methods == MAX_METHODS || n > MAX_NAME) return -1;
  for (int i = 0; i < n; i++) names[methods][i] = bytes[i];
  lengths[methods] = n;
  return methods++;
}

__attribute__((noinline, cold)) static void refuse(double code) {
  record[0] = 2;
  record[4] = code;
  js_send();
}

// Handles the request described in the slots.
__attribute__((export_name("receive"))) void receive(void) {
  record[1] = slots[6];
  record[2] = slots[7];
  if (slots[0] != OBJECT) {
    record[1] = NUL;
    refuse(-32600);
    return;
  }
  if (slots[1] != STRING || slots[2] != 3 || bytes[0] != '2' || bytes[1] != '.' || bytes[2] != '0' ||
      slots[3] != STRING) {
    refuse(-32600);
    return;
  }
  double id = slots[6], params = slots[8];
  if (!(id == NUL || id == NUMBER || id == STRING) || !(params == ABSENT || params == ARRAY || params == OBJECT)) {
    refuse(-32600);
    return;
  }
  int at = (int)slots[4], n = (int)slots[5], fn = -1;
  for (int i = 0; i < methods && fn < 0; i++) {
    if (lengths[i] != n) continue;
    int j = 0;
    while (j < n && names[i][j] == bytes[at + j]) j++;
    if (j == n) fn = i;
  }
  if (fn < 0) {
    refuse(-32601);
    return;
  }
  record[3] = js_call(fn, slots[9]);
  record[0] = 1;
  js_send();
}
