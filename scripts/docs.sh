#!/usr/bin/env bash
# The API reference (`npm run docs`; scripts/test.sh runs it too):
#   build/docs/cpp/html/index.html  Doxygen over the public C++ headers
#                                   (core/include/weft, native-host/include/weft/host)
#   build/docs/js/index.html        TypeDoc over js/index.d.ts (weft-rpc)
# Both fail on any warning, so an undocumented public declaration, or a doc
# comment that does not resolve, fails the build (docs/Doxyfile, typedoc.json).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v doxygen >/dev/null || { echo "docs: doxygen missing (apt-get install -y doxygen; scripts/deps.sh installs it)" >&2; exit 1; }
[ -x node_modules/.bin/typedoc ] || { echo "docs: typedoc missing (npm ci)" >&2; exit 1; }

WEFT_VERSION=$(node -p "require('./package.json').version")
export WEFT_VERSION
rm -rf build/docs/cpp build/docs/js
mkdir -p build/docs

echo "docs: Doxygen $(doxygen --version) → build/docs/cpp/html/index.html"
doxygen docs/Doxyfile

echo "docs: TypeDoc → build/docs/js/index.html"
node_modules/.bin/typedoc --logLevel Warn
