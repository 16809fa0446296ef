#!/usr/bin/env bash
# Builds the WebAssembly module into build-wasm/ and copies it into dist/:
#   dist/weft_module.js   the Emscripten ES-module factory
#   dist/weft.wasm        the module (js/loader.js finds it next to itself)
# Usage: scripts/build-wasm.sh [-O2|-O3|-Os|-Oz]   (default -O2)
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # Debian emscripten's optimizer needs acorn (toolchain.md)
OPT="${1:-${WEFT_WASM_OPT:--O2}}"
BUILD="${WEFT_WASM_BUILD:-build-wasm}"
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
emcmake cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DWEFT_WASM_OPT="$OPT" >/dev/null
cmake --build "$BUILD" --target weft_wasm -j2
mkdir -p dist
# The factory names its wasm after itself; we ship it as weft.wasm, so say so
# (bundlers follow `new URL("weft.wasm", import.meta.url)`).
sed 's/weft_module\.wasm/weft.wasm/g' "$BUILD/wasm/weft_module.js" > dist/weft_module.js
cp "$BUILD/wasm/weft_module.wasm" dist/weft.wasm
ls -l dist/weft_module.js dist/weft.wasm
