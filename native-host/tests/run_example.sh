#!/bin/sh
# Builds are done by CMake; this runs the embedding example and calls it with the CLI.
set -eu
example="$1"; weft="$2"
dir=$(mktemp -d)
sock="$dir/app.sock"
"$example" "$sock" 2>"$dir/log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
out=$("$weft" call --unix "$sock" --retries 6 --timeout 5000 add '{"a":2,"b":3}')
[ "$out" = "5.0" ] || [ "$out" = "5" ] || { echo "add: got '$out'"; exit 1; }
out=$("$weft" call --unix "$sock" --timeout 5000 greet '["weft"]')
[ "$out" = '"hello, weft"' ] || { echo "greet: got '$out'"; exit 1; }
"$weft" call --unix "$sock" --timeout 5000 rpc.ping | grep -q '"status":"ok"' || { echo "ping failed"; exit 1; }
rc=0; "$weft" call --unix "$sock" --timeout 5000 add '{"a":"x","b":1}' 2>/dev/null || rc=$?
[ "$rc" = 1 ] || { echo "bad params: exit $rc"; exit 1; }
kill -TERM $pid
wait $pid
[ ! -e "$sock" ] || { echo "socket not removed"; exit 1; }
echo ok
