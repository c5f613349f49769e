#!/usr/bin/env bash
# Measures GET /api/v1/auth/status through Periscope's full stack beside a bare
# net/http handler returning the same bytes, with wrk (Debian package) at 64
# connections on loopback, in AUTH_PAIRS (default 3) alternating pairs of runs.
# With two or more cores the server is pinned to core 0 and wrk to core 1
# (taskset), so the client does not steal the server's core and the ratio is
# steadier than with both floating; AUTH_PIN=0 turns pinning off.
# Usage: bench/auth-wrk.sh [duration]   Prints each pair and the median ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-15s}
pairs=${AUTH_PAIRS:-3}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
srvpin="" clipin=""
if [ "${AUTH_PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	srvpin="taskset -c 0" clipin="taskset -c 1"
fi
go build -o /tmp/periscope-bench ./cmd/periscope-bench
out=$(mktemp)
$srvpin /tmp/periscope-bench auth --listen >"$out" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$out"' EXIT
for i in $(seq 1 50); do [ "$(wc -l <"$out")" -ge 3 ] && break; sleep 0.2; done
bare=$(sed -n 1p "$out"); api=$(sed -n 2p "$out"); key=$(sed -n 3p "$out" | cut -d' ' -f2)
echo "bare net/http: $bare; periscope: $api; ${srvpin:-not pinned}${srvpin:+ (server), $clipin (wrk)}; $pairs pairs of $dur"
run() { $clipin wrk -t1 -c64 -d"$dur" --latency "$@" | awk '/Requests\/sec/ { r = $2 } / 99%/ { p = $2 } /Non-2xx|Socket errors/ { e = e " " $0 } END { print r, p, e }'; }
$clipin wrk -t1 -c64 -d2s -H "X-API-KEY: $key" "$api" >/dev/null # warm-up: key cache, connections
ratios=""
for p in $(seq 1 "$pairs"); do
	read -r br bp be < <(run "$bare")
	read -r ar ap ae < <(run -H "X-API-KEY: $key" "$api")
	ratio=$(awk -v a="$ar" -v b="$br" 'BEGIN { printf "%.3f", a / b }')
	ratios="$ratios $ratio"
	echo "pair $p: bare $br req/s (p99 $bp)${be:+ $be}, periscope $ar req/s (p99 $ap)${ae:+ $ae}, ratio $ratio"
done
echo "$ratios" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "median ratio %.3f over %d pairs (min %.3f, max %.3f)\n", m, NR, v[1], v[NR] }'
