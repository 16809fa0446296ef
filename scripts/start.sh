#!/usr/bin/env bash
# `npm start`: builds what is missing, then serves web-demo/ on 127.0.0.1.
#   PORT=9000 npm start     (default 8080; free ports are used if it is busy)
# The page is on PORT, its iframe on PORT+1 and the hostile frame on PORT+2:
# three origins, so the origin checks are real. The native `weft serve --ws`
# runs next to them on a free port, allowing only the page's origin.
set -euo pipefail
cd "$(dirname "$0")/.."

# dist/ (the WebAssembly core) is rebuilt only when missing or older than its sources.
stale=0
if [ ! -f dist/weft.wasm ] || [ ! -f dist/weft_module.js ]; then
  stale=1
elif [ -n "$(find core wasm CMakeLists.txt -newer dist/weft.wasm \( -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name 'CMakeLists.txt' -o -name '*.cmake' \) -print -quit 2>/dev/null)" ]; then
  stale=1
fi
if [ "$stale" = 1 ]; then
  if ! command -v em++ >/dev/null; then
    echo "start: dist/weft.wasm needs building but em++ is missing; run: bash scripts/deps.sh" >&2
    exit 1
  fi
  echo "start: building the WebAssembly core (scripts/build-wasm.sh)"
  bash scripts/build-wasm.sh
fi

# The native server the fourth card calls (weft serve --ws, started by
# web-demo/server.mjs): built when missing.
if [ ! -x build/native-host/weft ]; then
  echo "start: building the native host (cmake, build/)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build --target weft_cli
fi

if [ ! -d node_modules ]; then
  echo "start: npm install"
  npm install --no-audit --no-fund --loglevel=error
fi

export PORT="${PORT:-8080}"
exec node web-demo/server.mjs
