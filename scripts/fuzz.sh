#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.cpp) with clang 14 under
# ASan + UBSan and runs each, one after the other, single process:
#
#   scripts/fuzz.sh SECONDS [TARGET...]   each target for SECONDS (default 60)
#   FUZZ_RUNS=N scripts/fuzz.sh 0 ...     each target for N executions instead
#                                          (with SECONDS > 0: whichever comes first);
#                                          FUZZ_RUNS=0 runs each input of the corpus
#                                          once and stops (a replay)
#   FUZZ_SANITIZERS=LIST                   besides libFuzzer's instrumentation
#                                          (default address,undefined; "undefined"
#                                          alone runs several times faster, for long
#                                          runs whose corpus is then replayed under
#                                          the default: docs/reliability.md, "Fuzzing")
#   FUZZ_MAX_LEN=N                         longest input (default 65536; fuzz_peer 128:
#                                          its inputs are operation lists, up to 63
#                                          operations each, and its cost per input
#                                          grows with their number, as does libFuzzer's
#                                          own per-input bookkeeping (docs/reliability.md))
#
# Seeds come from tests/fuzz/corpus/<target>/ (committed; read only); what the
# run discovers goes to build-fuzz/corpus/<target>/, whichever the sanitizers
# (so that one build's corpus replays under another). A crash leaves its input
# in build-fuzz/ (crash-*) and fails the script with the log's tail. The
# executions and speed of each run are printed (docs/reliability.md records
# the long run made with FUZZ_RUNS=10000000).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
shift || true
SANITIZERS=${FUZZ_SANITIZERS-address,undefined}
build=build-fuzz
[ "$SANITIZERS" = address,undefined ] || build=build-fuzz-${SANITIZERS:-none}
build=${build//,/-}
FLAGS="-fsanitize=fuzzer-no-link${SANITIZERS:+,$SANITIZERS}"
case ",$SANITIZERS," in *,undefined,*) FLAGS+=" -fno-sanitize-recover=undefined" ;; esac
CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWEFT_FUZZ=ON -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_HOST=OFF -DWEFT_INSTALL=OFF \
  -DWEFT_FUZZ_SANITIZERS="$SANITIZERS" -DCMAKE_CXX_FLAGS="$FLAGS" >/dev/null
cmake --build "$build" -j"${JOBS:-2}"
mkdir -p build-fuzz
# The commit fuzzed, for the record (docs/reliability.md); "+" marks local changes.
if commit=$(git rev-parse --short HEAD 2>/dev/null); then
  git diff --quiet HEAD -- core tests/fuzz || commit+="+"
else commit=unknown; fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for bin in "$build"/tests/fuzz/fuzz_*; do [ -x "$bin" ] && targets+=("$(basename "$bin")"); done
fi
for name in "${targets[@]}"; do
  bin=$build/tests/fuzz/$name
  log=$build/$name.log
  seeds=tests/fuzz/corpus/$name
  work=build-fuzz/corpus/$name
  mkdir -p "$work"
  [ -d "$seeds" ] || { echo "fuzz: no seed corpus $seeds" >&2; exit 1; }
  if [ -n "${FUZZ_RUNS:-}" ]; then limit=(-runs="$FUZZ_RUNS"); what="$FUZZ_RUNS runs"
    # Both given: whichever comes first.
    if [ "$SECONDS_PER_TARGET" != 0 ]; then limit+=(-max_total_time="$SECONDS_PER_TARGET"); what+=" or ${SECONDS_PER_TARGET}s"; fi
  else limit=(-max_total_time="$SECONDS_PER_TARGET"); what="${SECONDS_PER_TARGET}s"; fi
  max_len=${FUZZ_MAX_LEN:-$([ "$name" = fuzz_peer ] && echo 128 || echo 65536)}
  echo "fuzz: $name for $what, fuzzer${SANITIZERS:+,$SANITIZERS}"
  start=$(date +%s)
  # quarantine_size_mb=16 (ASan's default is 256): freed blocks are still held
  # back, so a use after free within an input (a fuzz_peer input frees well
  # under 1 MB) is still caught, but each LeakSanitizer pass (libFuzzer runs one
  # after any input that allocates more than it frees) scans a smaller heap, and
  # RSS stays far from -rss_limit_mb (docs/reliability.md, "Speed").
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:quarantine_size_mb=16 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$bin" "${limit[@]}" -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix=build-fuzz/ "$work" "$seeds" 2>"$log" \
    || { tail -40 "$log"; exit 1; }
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  secs=$(( $(date +%s) - start ))
  echo "fuzz: $name ${execs:-?} executions in ${secs}s ($(( ${execs:-0} / (secs > 0 ? secs : 1) ))/s)," \
       "${cov:-no coverage line}, corpus $(ls "$work" | wc -l) + $(ls "$seeds" | wc -l) seeds, at $commit"
done
