#!/usr/bin/env bash
# The host-index round of BENCHMARKS.md ("Ten million hosts"): on one engine,
# ingest a generated internet into an empty database, measure its bytes on
# disk (and each table's), serve it with `periscope serve --rate-limit 0` and run
# `periscope-bench search`'s mix through HTTP, time an NDJSON export, then
# ingest a second generated million on top. Every step prints the load
# average beside it.
#
# Usage: bench/hosts-round.sh DATABASE HOSTS.ndjson COUNT [SECOND.ndjson]
#   DATABASE      a SQLite file (must not exist) or a postgres:// URL of an
#                 empty database
#   HOSTS.ndjson  `periscope-bench gen-hosts --count COUNT --seed 1 --now 1795000000`
#   SECOND.ndjson `periscope-bench gen-hosts --count 1000000 --seed 2 --now 1795000000`
# Env:  ROUNDS    times each query of the mix is sent (default 20)
#       PORT      the server's port (default 18080)
#       BIN       a folder holding periscope and periscope-bench (default: built here)
#       STEPS     the steps to run, of ingest, serve, second (default all three):
#                 e.g. STEPS=serve,second on a database an earlier run ingested
#
# The JSONB baseline is `periscope-bench baseline` on the same hosts
# (BENCHMARKS.md gives its command); run it on the same machine and say when.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 3 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
db=$1 hosts=$2 count=$3 second=${4:-}
rounds=${ROUNDS:-20} port=${PORT:-18080}
work=$(mktemp -d /tmp/periscope-hosts-round.XXXXXX)
if [ -z "${BIN:-}" ]; then
	BIN=$work
	go build -o "$BIN/periscope" ./cmd/periscope
	go build -o "$BIN/periscope-bench" ./cmd/periscope-bench
fi
srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }
step() { echo "[$(date -u +%T)] $1 (load $(load))"; }
case $db in postgres*) engine=postgres ;; *) engine=sqlite ;; esac
steps=,${STEPS:-ingest,serve,second},
has() { case $steps in *,$1,*) return 0 ;; *) return 1 ;; esac; }
if has ingest && [ $engine = sqlite ] && ls "$db" "${db%.db}-darkweb.db" >/dev/null 2>&1; then
	echo "hosts-round.sh: $db (or its -darkweb.db) exists; the round ingests into an empty database" >&2
	exit 2
fi
size() {
	if [ $engine = sqlite ]; then
		{ du -cb "$db"* "${db%.db}"-darkweb.db* 2>/dev/null || true; } | tail -n 1 | cut -f1
	else
		psql -qtA "$db" -c 'SELECT pg_database_size(current_database())'
	fi
}
# tables: the bytes a host of each table and index over 1 MiB (SQLite's
# through dbstat, which reads every page: a minute or two at 10M).
tables() {
	if [ $engine = sqlite ]; then
		command -v sqlite3 >/dev/null || { echo "(no sqlite3 for the bytes of each table)"; return; }
		sqlite3 -separator ' ' "$db" "SELECT name, SUM(pgsize), SUM(pgsize) / $count FROM dbstat
			GROUP BY name HAVING SUM(pgsize) > 1048576 ORDER BY 2 DESC"
	else
		psql -qtA -F ' ' "$db" -c "SELECT relname, pg_relation_size(oid), pg_relation_size(oid) / $count FROM pg_class
			WHERE relnamespace = 'public'::regnamespace AND pg_relation_size(oid) > 1048576 ORDER BY 2 DESC"
	fi | sed 's/^/  /; s/$/ bytes a host/'
}
# ingest FILE: the ingest's own summary line, its wall time and peak RSS.
ingest() {
	/usr/bin/time -f 'wall %e s, user %U s, sys %S s, peak RSS %M KiB' \
		"$BIN/periscope" ingest hosts --database "$db" "$1" 2>&1 | grep -E 'stored|wall|indexed the terms|built in'
}

if has ingest; then
step "ingest $count hosts into an empty $engine database"
ingest "$hosts"
bytes=$(size)
echo "on disk: $bytes bytes, $((bytes / count)) bytes a host; table or index, bytes, bytes a host:"
tables
fi

if has serve; then
step "serve and the search mix ($rounds rounds)"
"$BIN/periscope" account create --database "$db" --company "Round $$" --email "round$$@bench.local" \
	--oem --credits 1000000000 --oem-credits 1000000000 --max-results 100000 >/dev/null 2>&1
"$BIN/periscope" account create --database "$db" --company "Round $$ pages" --email "pages$$@bench.local" \
	--oem --credits 1000000000 --oem-credits 1000000000 --max-results 100 >/dev/null 2>&1
key=$("$BIN/periscope" key create --database "$db" --account "Round $$" --name round 2>/dev/null | head -n 1)
pkey=$("$BIN/periscope" key create --database "$db" --account "Round $$ pages" --name round 2>/dev/null | head -n 1)
"$BIN/periscope" serve --database "$db" --addr 127.0.0.1:$port --rate-limit 0 --log-level error >"$work/serve.log" 2>&1 &
srv=$!
for _ in $(seq 1 600); do
	curl -fs -o /dev/null http://127.0.0.1:$port/readyz && break
	sleep 1
done
"$BIN/periscope-bench" search --url http://127.0.0.1:$port --key "$key" --page-key "$pkey" \
	--count "$count" --seed 1 --rounds "$rounds"
grep -E 'VmHWM|VmRSS' /proc/$srv/status
curl -fs http://127.0.0.1:$port/metrics | grep -E '^periscope_host_posting_cache' || true

step "NDJSON export of port:22"
start=$(date +%s.%N)
n=$(curl -fs -H "X-API-KEY: $key" "http://127.0.0.1:$port/api/v1/hosts/export?query=port:22&format=ndjson" | wc -l)
end=$(date +%s.%N)
echo "exported $n hosts in $(echo "$end - $start" | bc) s: $(echo "$n / ($end - $start)" | bc) hosts/s"
grep -E 'VmHWM|VmRSS' /proc/$srv/status
kill "$srv"
wait "$srv" 2>/dev/null || true
srv=
fi

if has second && [ -n "$second" ]; then
	step "ingest a second million on top"
	ingest "$second"
	bytes=$(size)
	echo "on disk: $bytes bytes"
fi
step "done"
