#!/usr/bin/env bash
# Builds the libFuzzer targets with clang 14 (ASan + UBSan) and runs each for
# a bounded time: fuzz.sh [SECONDS per target, default 60].
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWEFT_FUZZ=ON -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_HOST=OFF -DCMAKE_CXX_FLAGS="$FLAGS" >/dev/null
cmake --build build-fuzz -j"${JOBS:-2}"
mkdir -p build-fuzz/corpus
for bin in build-fuzz/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  mkdir -p "build-fuzz/corpus/$name"
  echo "fuzz: $name for ${SECONDS_PER_TARGET}s"
  UBSAN_OPTIONS=halt_on_error=1 "$bin" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
    -max_len=65536 "build-fuzz/corpus/$name" 2>"build-fuzz/$name.log" \
    || { tail -40 "build-fuzz/$name.log"; exit 1; }
  grep -E "^(#[0-9]+.*DONE|Done)" "build-fuzz/$name.log" | tail -1 || true
done
