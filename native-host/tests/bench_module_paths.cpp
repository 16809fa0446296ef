// bench_module_paths — the WebAssembly module's two message paths, compiled
// natively so that callgrind can count their instructions (a figure machine
// load does not move): bench/native/callgrind-module.sh.
//   weft-bench-module-paths server N   N requests {"jsonrpc","method":"add",
//       "params":{...},"id"} as js/wire.js describes them, read
//       (read_descriptor), served by a handler that answers at once as the
//       module's does (wasm/exports.cpp weft_method), and written out as
//       records (write_records);
//   weft-bench-module-paths client N   N calls made as weft_call makes them,
//       each answered by the tuple [2n, id, 3] read back and settled as
//       settle_to does.
// The same core and glue (wasm/records.cpp, wasm/payloads.cpp) as the
// module; what it leaves out is JavaScript and the crossings into it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "abi.h"
#include "payloads.h"
#include "records.h"

using namespace weft;
using namespace weft::wasm;

namespace {

// The module's strings arrive in its input buffer: "2.0" then "add".
constexpr char kInput[] = "2.0add";

// As weft_receive hands one message to the Peer (its item vector reused).
void receive(Peer& peer, Incoming& in, const double* d) {
  append_described(in.items, d, kInput);
  peer.receive(std::move(in));
  in.items.clear();
}

void describe_common(double* d) {
  d[abi::D_SHAPE] = abi::VALUE_OBJECT;
  d[abi::D_ID_C] = d[abi::D_RESULT_KIND] = d[abi::D_DATA_KIND] = d[abi::D_METRICS_KIND] = 0;
  d[abi::D_JSONRPC_KIND] = abi::VALUE_STRING;
  d[abi::D_JSONRPC_A] = 0;
  d[abi::D_JSONRPC_B] = 3;
  d[abi::D_ERROR_KIND] = abi::VALUE_ABSENT;
}

long serve(long n) {
  std::vector<double> recs;
  std::string text;
  long answered = 0;
  PeerOptions o;
  o.role = Role::Server;
  o.send = [&](Outgoing&& m) {
    write_records(m, recs, text);
    answered += static_cast<int>(recs[abi::R_KIND]) == abi::MSG_RESULT;
  };
  Peer peer(std::move(o));
  peer.method("add", DeferrableHandler([](json& params, Deferral&, const CallInfo&) -> std::optional<Result<json>> {
    const double slot = params.is_null() ? abi::kPAY_NONE : take_marker(params);
    return std::optional<Result<json>>(std::in_place, value_marker(slot + 1));
  }));
  double d[abi::D_SIZE];
  Incoming in;
  in.items.reserve(4);
  for (long i = 0; i < n; ++i) {
    describe_common(d);
    d[abi::D_METHOD_KIND] = abi::VALUE_STRING;
    d[abi::D_METHOD_A] = 3;
    d[abi::D_METHOD_B] = 3;
    d[abi::D_ID_KIND] = abi::VALUE_NUMBER;
    d[abi::D_ID_A] = static_cast<double>(i + 1);
    d[abi::D_PARAMS_KIND] = abi::VALUE_OBJECT;
    d[abi::D_PARAMS_A] = 5;
    receive(peer, in, d);
  }
  return answered;
}

long call(long n) {
  std::vector<double> recs;
  std::string text;
  double sent_id = 0;
  long settled = 0;
  PeerOptions o;
  o.role = Role::Client;
  o.send = [&](Outgoing&& m) {
    write_records(m, recs, text);
    sent_id = recs[abi::R_ID_A];
  };
  Peer peer(std::move(o));
  double d[abi::D_SIZE];
  Incoming in;
  in.items.reserve(4);
  for (long i = 0; i < n; ++i) {
    CallOptions opts;
    opts.timeout = Millis(10000);
    auto id = peer.call(std::string(kInput + 3, 3), object_marker(7),
                        [&settled](Result<json> r) { settled += r.ok() && take_marker(r.value()) >= 0; },
                        std::move(opts), Millis(i));
    if (!id.ok()) return -1;
    describe_common(d);
    d[abi::D_METHOD_KIND] = d[abi::D_PARAMS_KIND] = abi::VALUE_ABSENT;
    d[abi::D_ID_KIND] = abi::VALUE_NUMBER;
    d[abi::D_ID_A] = sent_id;
    d[abi::D_RESULT_KIND] = abi::VALUE_PAYLOAD;
    d[abi::D_RESULT_A] = 9;
    receive(peer, in, d);
  }
  return settled;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "";
  const long n = argc > 2 ? std::atol(argv[2]) : 100000;
  if (path != "server" && path != "client") {
    std::fprintf(stderr, "usage: weft-bench-module-paths server|client [N]\n");
    return 2;
  }
  const long done = path == "server" ? serve(n) : call(n);
  std::printf("%s: %ld of %ld completed\n", path.c_str(), done, n);
  return done == n ? 0 : 1;
}
