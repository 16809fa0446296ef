#!/usr/bin/env bash
# Builds the WebAssembly module into build-wasm/ and copies it into dist/:
#   dist/weft_module.js   the Emscripten ES-module factory
#   dist/weft.wasm        the module (js/loader.js finds it next to itself)
#   dist/weft_abi.js      the boundary's constants, generated from wasm/abi.h
#   dist-test/            the same package with the test-only module (tests)
# Usage: scripts/build-wasm.sh [-O2|-O3|-Os|-Oz]   (default -O2)
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # Debian emscripten's optimizer needs acorn (toolchain.md)
OPT="${1:-${WEFT_WASM_OPT:--O2}}"
BUILD="${WEFT_WASM_BUILD:-build-wasm}"
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
emcmake cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DWEFT_WASM_OPT="$OPT" >/dev/null
cmake --build "$BUILD" --target weft_wasm weft_wasm_test -j2
# pkg DIR FACTORY: a package tree's dist/ (the factory names its wasm after
# itself; we ship it as weft.wasm, so say so: bundlers follow
# `new URL("weft.wasm", import.meta.url)`), and its ABI constants.
pkg() {
  mkdir -p "$1"
  sed "s/$2\\.wasm/weft.wasm/g" "$BUILD/wasm/$2.js" > "$1/weft_module.js"
  cp "$BUILD/wasm/$2.wasm" "$1/weft.wasm"
  node scripts/gen-abi.mjs "$1/weft_module.js" "$1/weft.wasm" "$1/weft_abi.js"
}
pkg dist weft_module
ls -l dist/weft_module.js dist/weft.wasm dist/weft_abi.js
# The test-only module (demo methods, wasm/test_host.cpp) in a package tree
# of its own, dist-test/, never shipped: dist-test/js is a copy of js/.
rm -rf dist-test && mkdir -p dist-test
cp -r js dist-test/js
pkg dist-test/dist weft_test_module
