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

node_dirs=()
for d in tests/js tests/host; do
  if compgen -G "$d/*.test.mjs" >/dev/null; then node_dirs+=("$d"/*.test.mjs); fi
done
if [ ${#node_dirs[@]} -gt 0 ]; then
  echo "== Node tests (node --test)"
  WEFT_BIN="$PWD/build/native-host/weft" node --test --test-concurrency=1 "${node_dirs[@]}"
fi

if compgen -G "tests/browser/*.test.mjs" >/dev/null; then
  echo "== browser tests (Debian's Chromium via playwright-core)"
  node --test --test-concurrency=1 tests/browser/
fi

echo "== fuzzing (bounded)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
