#!/usr/bin/env bash
# The CMake package check (scripts/test.sh runs it after the native build):
#   1. cmake --install BUILD into a fresh prefix; the installed package must not
#      name the source tree, the build tree or /usr/include;
#   2. this folder's project built with find_package(weft) against that prefix;
#   3. the same project with add_subdirectory(<this checkout>);
#   4. weft.pc: pkg-config names the include dir and the libraries, and links.
# Each consumer starts a server on a Unix socket and calls its `subtract`.
# Usage: tests/consumer/run.sh [BUILD (default build)] [WORK (default build-consumer)]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${1:-build}
work=${2:-build-consumer}
mkdir -p "$work"
work=$(cd "$work" && pwd)
log="$work/log"
: >"$log"
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)

fail() { echo "consumer test FAILED: $*" >&2; tail -n 40 "$log" >&2; echo "(full log: $log)" >&2; exit 1; }
step() { local what=$1; shift; echo "\$ $*" >>"$log"; "$@" >>"$log" 2>&1 || fail "$what"; }
# run WHAT BINARY: runs one consumer, prints its line; on failure shows its output.
run() {
  local out rc=0
  out=$("$2" 2>&1) || rc=$?
  [ "$rc" = 0 ] || { echo "consumer test FAILED: $1 consumer exited $rc:" >&2; echo "$out" >&2; exit 1; }
  echo "$out"
}

prefix="$work/prefix"
rm -rf "$prefix"
step "cmake --install $build" cmake --install "$build" --prefix "$prefix"
config=$(find "$prefix" -name weftConfig.cmake -print -quit)
[ -n "$config" ] || fail "no weftConfig.cmake under $prefix"
pcfile=$(find "$prefix" -name weft.pc -print -quit)
[ -n "$pcfile" ] || fail "no weft.pc under $prefix"
[ -x "$prefix/bin/weft" ] || fail "no bin/weft under $prefix"
if grep -n -F -e "$root" -e /usr/include "$(dirname "$config")"/*.cmake "$pcfile" >>"$log"; then
  fail "the installed package names a build/source path or /usr/include (above)"
fi

# find_package(weft) against the install tree only.
step "configure (find_package)" cmake -S tests/consumer -B "$work/find" "${GEN[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
grep -q "^weft_DIR:PATH=$(dirname "$config")\$" "$work/find/CMakeCache.txt" \
  || fail "find_package(weft) did not use $(dirname "$config")"
step "build (find_package)" cmake --build "$work/find" -j"${JOBS:-2}"
run find_package "$work/find/weft_consumer"

# add_subdirectory(weft): libraries only, no weft tests/tools (checked in CMakeLists.txt).
step "configure (add_subdirectory)" cmake -S tests/consumer -B "$work/subdir" "${GEN[@]}" \
  -DWEFT_CONSUMER_SUBDIR="$root"
step "build (add_subdirectory)" cmake --build "$work/subdir" -j"${JOBS:-2}"
run add_subdirectory "$work/subdir/weft_consumer"

# pkg-config: names the include dir and both libraries; the consumer's object links with --libs.
export PKG_CONFIG_PATH="$(dirname "$pcfile")"
flags=$(pkg-config --cflags --libs weft 2>>"$log") || fail "pkg-config --cflags --libs weft"
echo "pkg-config: $flags" >>"$log"
incdir=$(pkg-config --variable=includedir weft)
[ "$(cd "$incdir" && pwd -P)" = "$(cd "$prefix/include" && pwd -P)" ] || fail "weft.pc includedir is $incdir"
for want in "-I$incdir" -lweft_host -lweft_core; do
  case " $flags " in *" $want "*) ;; *) fail "pkg-config output lacks $want: $flags" ;; esac
done
# shellcheck disable=SC2046
step "link with pkg-config --libs" c++ "$work/find/CMakeFiles/weft_consumer.dir/main.cpp.o" \
  -o "$work/pc_consumer" $(pkg-config --libs weft)
run pkg-config "$work/pc_consumer" >/dev/null
echo "pkg-config: $flags"
