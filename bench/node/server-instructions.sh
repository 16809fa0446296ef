#!/usr/bin/env bash
# Instructions a server executes per small request: server-cost.mjs's
# requests (json-rpc-2.0-shaped, handed to the port listener) counted by
# cachegrind instead of timed, so that machine load does not move the
# figure. V8 compiles the module with TurboFan up front and runs on one
# thread, so that the count does not depend on when tiering happens: a weft
# server's count repeats to the instruction; a server in plain JavaScript
# (json-rpc-2.0) still moves by a few per cent with its JIT's timing. Two
# runs (N = 20,000 and 120,000, each with the tool's warm-up) so that
# start-up cancels out: per request = difference ÷ (1.75 × 100,000).
#   bash bench/node/server-instructions.sh [weft,json-rpc-2.0,...] [--shape batch|notification|tuple]
# A --shape is passed on to server-cost.mjs; with batch (4 requests per
# message) the figure is still per request.
# Needs valgrind, and dist/weft.wasm for weft.
set -euo pipefail
cd "$(dirname "$0")/../.."
libs=${1:-weft,json-rpc-2.0}
shift $(($# > 0 ? 1 : 0))
extra=("$@")
per=1
[[ " ${extra[*]} " == *" --shape batch "* ]] && per=4
flags=(--no-liftoff --no-wasm-dynamic-tiering --single-threaded --predictable-gc-schedule --hash-seed=1 --random-seed=1)
count() {  # count LIB N -> total instructions
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    node "${flags[@]}" bench/node/server-cost.mjs "$1" --runs 1 --n "$2" ${extra[@]+"${extra[@]}"} 2>&1 >/dev/null |
    awk '/I *refs/ {gsub(",", "", $4); print $4}'
}
IFS=, read -ra names <<< "$libs"
for lib in "${names[@]}"; do
  a=$(count "$lib" 20000)
  b=$(count "$lib" 120000)
  echo "$lib: $(((b - a) / (175000 * per))) instructions per request${extra[*]+ (${extra[*]})}"
done
