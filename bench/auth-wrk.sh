#!/usr/bin/env bash
# Measures GET /api/v1/auth/status through Periscope's full stack beside a bare
# net/http handler returning the same bytes, with wrk (Debian package) at 64
# connections on loopback. Usage: bench/auth-wrk.sh [duration]
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-15s}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
go build -o /tmp/periscope-bench ./cmd/periscope-bench
out=$(mktemp)
/tmp/periscope-bench auth --listen >"$out" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$out"' EXIT
for i in $(seq 1 50); do [ "$(wc -l <"$out")" -ge 3 ] && break; sleep 0.2; done
bare=$(sed -n 1p "$out"); api=$(sed -n 2p "$out"); key=$(sed -n 3p "$out" | cut -d' ' -f2)
echo "== bare net/http: $bare"
wrk -t${WRK_THREADS:-1} -c64 -d"$dur" --latency "$bare" | grep -E "Requests/sec|50%|90%|99%|Non-2xx|Socket errors"
echo "== periscope: $api"
wrk -t${WRK_THREADS:-1} -c64 -d"$dur" --latency -H "X-API-KEY: $key" "$api" | grep -E "Requests/sec|50%|90%|99%|Non-2xx|Socket errors"
