#!/bin/sh
# Runs examples/persistent_client.cpp against `weft serve --demo` on a socket.
set -eu
example="$1"; weft="$2"
dir=$(mktemp -d)
sock="$dir/s.sock"
"$weft" serve --unix "$sock" --demo 2>"$dir/log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
# The client's own reconnect backoff waits for the server to be listening.
out=$("$example" "unix:$sock")
[ "$out" = "5050" ] || { echo "persistent client: got '$out'"; exit 1; }
echo ok
