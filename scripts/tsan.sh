#!/usr/bin/env bash
# The native suite under ThreadSanitizer (docs/reliability.md, "Sanitizers"):
# builds build-tsan with -DWEFT_SANITIZE=thread, runs all of ctest there and
# every host test (tests/host/*.test.mjs) against the TSan-built `weft`.
# Exits non-zero on any failing test and on any TSan report, including one
# from a `weft` child that a host test started and did not check the exit
# status of: every report is written to a file (log_path) and counted here.
#
# Not part of the test command by default (another full native build, and
# CI has a 90-minute budget): run it by hand, or as
# `WEFT_TSAN=1 bash scripts/test.sh`.
#   JOBS=N               build and ctest parallelism (default 2)
#   WEFT_TSAN_NO_ASLR=1  run the tests with address randomisation off (below)
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs
JOBS=${JOBS:-2}

# gcc 12's TSan runtime predates kernels that randomise mmap with more than
# 28 bits (vm.mmap_rnd_bits): there it aborts with "FATAL: ThreadSanitizer:
# unexpected memory mapping". Newer runtimes re-execute themselves without
# ASLR; this does the same for the whole run (setarch -R is inherited by
# ctest, node and every weft they start).
if [ "${WEFT_TSAN_REEXEC:-0}" != 1 ]; then
  rnd=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
  if [ "${WEFT_TSAN_NO_ASLR:-0}" = 1 ] || [ "$rnd" -gt 28 ]; then
    echo "tsan: vm.mmap_rnd_bits=$rnd: running without ASLR (setarch -R)"
    WEFT_TSAN_REEXEC=1 exec setarch "$(uname -m)" -R bash "$PWD/scripts/tsan.sh" "$@"
  fi
fi

bash scripts/deps.sh

echo "== ThreadSanitizer build (build-tsan)"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
  -DWEFT_SANITIZE=thread -DWEFT_INSTALL=OFF >/dev/null
cmake --build build-tsan -j"$JOBS"
# ws.test.mjs talks to weft through the JS Peer (the WebAssembly module).
[ -f dist/weft_abi.js ] || bash scripts/build-wasm.sh

reports=build-tsan/tsan-reports
rm -rf "$reports" && mkdir -p "$reports"
# halt_on_error: the first report ends the process (a test fails);
# log_path: each process's reports go to $reports/report.<pid>.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$PWD/$reports/report"
status=0

echo "== ctest under TSan"
(cd build-tsan && ctest --output-on-failure -j"$JOBS") || status=1

echo "== host tests against the TSan-built weft"
WEFT_BIN="$PWD/build-tsan/native-host/weft" WEFT_SANITIZED=1 \
  node --test --test-concurrency=1 --test-force-exit tests/host/*.test.mjs || status=1
unset TSAN_OPTIONS

found=0
for f in "$reports"/report.*; do
  [ -e "$f" ] || continue
  found=$((found + 1))
  echo "== TSan report: $f"
  cat "$f"
done
echo "tsan: $found report(s)"
[ "$found" -eq 0 ] || status=1
exit "$status"
