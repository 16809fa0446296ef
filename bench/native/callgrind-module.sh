#!/usr/bin/env bash
# Instructions the WebAssembly module's glue and core execute per message,
# counted natively by callgrind (build/native-host/weft-bench-module-paths:
# wasm/records.cpp, wasm/payloads.cpp and the core as the module runs them,
# without JavaScript). Two runs (10,000 and N + 10,000) so that start-up
# cancels out: per call = (second - first) / N.
#   bash bench/native/callgrind-module.sh [BUILD_DIR=build] [N=100000]
# Prints the server path (a request described, served, its answer recorded)
# and the client path (a call recorded, its answer described and settled).
set -euo pipefail
build=${1:-build}
n=${2:-100000}
bin="$build/native-host/weft-bench-module-paths"
count() {  # count PATH CALLS -> total instructions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 >/dev/null |
    sed -n 's/.*Collected : //p'
}
for path in server client; do
  a=$(count "$path" 10000)
  b=$(count "$path" $((n + 10000)))
  echo "$path: $(((b - a) / n)) instructions per call ($n calls)"
done
