#!/usr/bin/env bash
# Installs what building and testing weft needs on Debian 12, and nothing
# when it is all there already (so the test command stays idempotent and fast).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  cmake ninja-build g++ pkg-config
  nlohmann-json3-dev libmsgpack-cxx-dev catch2 libboost1.74-dev libzstd-dev doxygen
  emscripten
  clang-14 libclang-rt-14-dev
  emacs-nox
)
# emacs-nox: Emacs's jsonrpc.el, a peer weft did not write (tests/host/emacs-jsonrpc.test.mjs).
# Node 20 ships with these machines; Debian's nodejs (18) is only a fallback.
command -v node >/dev/null || APT_PACKAGES+=(nodejs npm)
# Browser tests (tests/browser) need chromium; installed only when they exist.
if [ -d tests/browser ]; then APT_PACKAGES+=(chromium); fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages (test peers: json-rpc-2.0, vscode-jsonrpc, ...). `npm ci` when
# the lock file is there and node_modules is missing or older than it.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ] || [ package.json -nt node_modules ]; then
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error
  else npm install --no-audit --no-fund --loglevel=error; fi
  touch node_modules
fi
