#!/usr/bin/env bash
# Instructions `weft serve --unix --demo` executes per small call (add {"a":1,"b":2}),
# 256 in flight on one connection, counted by callgrind: a figure that machine load
# does not move, unlike calls/s. Two runs (1,000 calls, then N + 1,000) so that
# start-up and shutdown cancel out: per call = (second - first) / N.
#   bash bench/native/callgrind-calls.sh [BUILD_DIR=build] [N=200000]
# Prints the per-call figure; the callgrind files stay in $TMPDIR for callgrind_annotate.
set -euo pipefail
build=${1:-build}
n=${2:-200000}
dir=$(mktemp -d)
run() {  # run CALLS -> total instructions of the server
  local sock="$dir/s.sock" out="$dir/callgrind.$1.out"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$build/native-host/weft" serve --unix "$sock" --demo \
    2>"$dir/valgrind.$1.log" &
  local pid=$!
  for _ in $(seq 300); do [ -S "$sock" ] && break; sleep 0.1; done
  "$build/native-host/weft-bench-pipelined" "$sock" "$1" 256 >&2
  kill -TERM "$pid"
  wait "$pid" || true
  rm -f "$sock"
  sed -n 's/^summary: //p' "$out"
}
base=$(run 1000)
total=$(run $((n + 1000)))
echo "$(((total - base) / n)) instructions per call ($n calls; files in $dir)"
