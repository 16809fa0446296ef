#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what it needs, builds the
# native core, host and tests, compiles the core (and the module) with em++,
# then runs Catch2 (ctest), the Node tests and a bounded fuzz run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's emscripten runs its JS optimizer with the system node, which finds
# Debian's acorn module only through this path.
export NODE_PATH=/usr/share/nodejs
JOBS=${JOBS:-2}

bash scripts/deps.sh

echo "== native build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$JOBS"

echo "== CMake package: install, find_package(weft), add_subdirectory(weft), pkg-config"
bash tests/consumer/run.sh build build-consumer

echo "== WebAssembly build (the same core sources, em++)"
if [ -f scripts/build-wasm.sh ]; then
  bash scripts/build-wasm.sh
else
  emcmake cmake -S . -B build-wasm -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-wasm -j"$JOBS"
fi

echo "== Catch2 tests (ctest)"
(cd build && ctest --output-on-failure -j"$JOBS")

echo "== API reference (Doxygen, TypeDoc; any warning fails)"
bash scripts/docs.sh

# --test-force-exit: a test file that fails with a port or socket still open
# would otherwise keep its process, and so the whole run, alive until CI's
# time runs out; the failure must be reported, not turned into a hang.
node_dirs=()
for d in tests/js tests/host; do
  if compgen -G "$d/*.test.mjs" >/dev/null; then node_dirs+=("$d"/*.test.mjs); fi
done
if [ ${#node_dirs[@]} -gt 0 ]; then
  echo "== Node tests (node --test)"
  WEFT_BIN="$PWD/build/native-host/weft" node --test --test-concurrency=1 --test-force-exit "${node_dirs[@]}"
fi

if compgen -G "tests/browser/*.test.mjs" >/dev/null; then
  echo "== browser tests (Debian's Chromium via playwright-core)"
  node --test --test-concurrency=1 --test-force-exit tests/browser/
fi

# The bench harness end to end on the Node rows, briefly (bench/run.mjs
# --smoke: quick, one repetition, results in the temp folder): every
# contender must answer right. Its figures, from a shared machine, judge no
# target; full runs do (bench/README.md).
echo "== bench smoke (node bench/run.mjs --smoke --only node; no target judged)"
node bench/run.mjs --smoke --only node

# The native suite again under AddressSanitizer + UndefinedBehaviorSanitizer
# (leaks included): every ctest case and the host tests against the
# sanitized CLI. WEFT_SKIP_SANITIZE=1 skips the step. ThreadSanitizer (the
# client's resolver and stdin threads, docs/reliability.md) is another full
# build, so it runs only on request: WEFT_TSAN=1 (scripts/tsan.sh).
if [ "${WEFT_SKIP_SANITIZE:-0}" != 1 ]; then
  echo "== sanitizers: ASan + UBSan build (build-asan), ctest and the host tests"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DWEFT_SANITIZE=address,undefined -DWEFT_INSTALL=OFF >/dev/null
  cmake --build build-asan -j"$JOBS"
  # A small quarantine: tests that bound memory by RSS (1 GiB through a slow
  # consumer, the host's flood and fault tests) would otherwise see ASan's
  # 256 MB of held-back frees.
  export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:quarantine_size_mb=16
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  (cd build-asan && ctest --output-on-failure -j"$JOBS")
  WEFT_BIN="$PWD/build-asan/native-host/weft" WEFT_SANITIZED=1 \
    node --test --test-concurrency=1 --test-force-exit tests/host/*.test.mjs
  unset ASAN_OPTIONS UBSAN_OPTIONS
fi

if [ "${WEFT_TSAN:-0}" = 1 ]; then
  echo "== sanitizers: ThreadSanitizer (scripts/tsan.sh)"
  JOBS="$JOBS" bash scripts/tsan.sh
fi

echo "== fuzzing (bounded)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
