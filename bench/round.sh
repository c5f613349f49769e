#!/usr/bin/env bash
# Measures every target of issue 18's table in one run, on both engines, with
# the benchmarks BENCHMARKS.md names for each, and prints one table: p95 (or
# the figure the target names), dataset, engine, target, and the load average
# at the start and the end of the run and of each step.
#
# Usage: bench/round.sh            (from anywhere in the repository)
# Env:   PERISCOPE_ROUND_POSTGRES  server URL without a database
#                                  (default postgres://postgres@127.0.0.1:5432)
#        ROUND_KEEP_LOGS=1         keep the raw outputs (printed path)
#        ROUND_SMOKE=1             tiny datasets and 1 s windows, to check the
#                                  script itself (its figures mean nothing)
#
# It needs go and psql; wrk (Debian package, installed with apt-get when
# missing and possible) for the auth figure, else it falls back to
# periscope-bench auth's in-process client and says so. It
# creates one PostgreSQL database (round_<pid>) and temporary SQLite files,
# and removes them, the binary and (unless kept) the logs when it ends.
# 9 min 21 s on the shared 2-core machine at load 7-9 (BENCHMARKS.md), most
# of it loading 300,000 CVEs into PostgreSQL; less on an idle one.
set -euo pipefail
cd "$(dirname "$0")/.."

pgbase=${PERISCOPE_ROUND_POSTGRES:-postgres://postgres@127.0.0.1:5432}
db=round_$$
pg="$pgbase/$db?sslmode=disable"
work=$(mktemp -d /tmp/periscope-round.XXXXXX)
bin=$work/periscope-bench
created=
cleanup() {
	[ -n "$created" ] && psql -q "$pgbase/postgres?sslmode=disable" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
	if [ "${ROUND_KEEP_LOGS:-}" = 1 ]; then
		rm -f "$bin"
		echo "raw outputs kept in $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

nvulns=300000 nadv=100000 nfind=100000
vulnsz=(--vulns $nvulns --advisories $nadv --exploits 20000 --duration 5s)
brandsz=(--findings $nfind --requests 100)
authdur=10s
benchtime=20x
if [ "${ROUND_SMOKE:-}" = 1 ]; then
	nvulns=3000 nadv=1000 nfind=2000
	vulnsz=(--vulns $nvulns --advisories $nadv --exploits 200 --duration 1s)
	brandsz=(--findings $nfind --requests 10)
	authdur=1s
	benchtime=1x
fi

# psql without the notices of DROP ... CASCADE.
export PGOPTIONS='-c client_min_messages=warning'

load() { cut -d' ' -f1-3 /proc/loadavg; }
step() { echo "[$(date -u +%T)] $1 (load $(load))" >&2; }

command -v psql >/dev/null || { echo "round.sh: psql is needed" >&2; exit 1; }
# The auth target is defined with wrk; install it first, as auth-wrk.sh would
# (outside the measured run), and fall back to the in-process client without.
if ! command -v wrk >/dev/null && command -v apt-get >/dev/null; then
	echo "installing wrk" >&2
	{ apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null 2>&1 || echo "could not install wrk" >&2
fi
start=$(date -u +%s)
load0=$(load)
step "build"
go build -o "$bin" ./cmd/periscope-bench
psql -q "$pgbase/postgres?sslmode=disable" -c "CREATE DATABASE $db" >/dev/null
created=1

# Vulnerability intelligence at the issue's size: 300,000 CVEs, 100,000
# advisories, 20,000 exploits, 3,000 KEV entries, loaded through the ingest
# path (the kev line is the KEV target), then the searches through HTTP.
step "vuln, SQLite (300k CVEs: load and searches)"
"$bin" vuln "${vulnsz[@]}" --connections 1 --only "search: " >"$work/vuln-sqlite.txt" 2>&1
step "vuln, PostgreSQL (300k CVEs: load and searches)"
"$bin" vuln "${vulnsz[@]}" --connections 1 --only "search: " --database "$pg" >"$work/vuln-pg.txt" 2>&1
psql -q "$pg" -c "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null

# Enterprise listings: 100,000 findings (50,000 of each kind), 100 requests
# per listing.
step "brand listings, SQLite"
"$bin" brand "${brandsz[@]}" --ct-entries 200 >"$work/brand-sqlite.txt" 2>&1
step "brand listings, PostgreSQL"
"$bin" brand "${brandsz[@]}" --ct-entries 200 --database "$pg" >"$work/brand-pg.txt" 2>&1
psql -q "$pg" -c "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null

# Subdomains of a 50,000-host domain: the store call behind the route (one
# aggregate walk), both engines; a mean per call (go test's ns/op).
step "subdomains of a 50,000-host domain (hoststore benchmark)"
PERISCOPE_TEST_POSTGRES="$pg" go test -run '^$' -bench 'BenchmarkSubdomainListing/.*/after' -benchtime "$benchtime" ./internal/hoststore >"$work/subdomains.txt" 2>&1

# GET /auth/status against a bare handler writing the same bytes.
step "auth/status vs bare handler"
if command -v wrk >/dev/null; then
	authhow="wrk, 64 connections, 3 pairs of 10 s runs, server and wrk pinned to one core each (bench/auth-wrk.sh)"
	bench/auth-wrk.sh "$authdur" >"$work/auth.txt" 2>&1
else
	authhow="wrk missing: periscope-bench auth (in-process client, 64 connections, 10 s each)"
	"$bin" auth --connections 64 --duration "$authdur" >"$work/auth.txt" 2>&1
fi
load1=$(load)
end=$(date -u +%s)

# ---- the table ----
# vuln prints "name requests req/s p50 p95 p99 errors"; p95 is $(NF-2).
vq() { awk -v n="$2" 'index($0, n) == 1 { print $(NF-2) }' "$work/$1"; }
kev() { awk '$1 == "kev" { print $5 " records/s" }' "$work/$1"; }
dataset() { sed -n 's/^dataset: //p' "$work/$1"; }
# brand prints "  GET <path>: n requests, p50 a, p95 b, p99 c, n-byte responses".
bq() { awk -v p="GET $2:" 'index($0, p) { for (i = 1; i <= NF; i++) if ($i == "p95") { v = $(i+1); sub(/,$/, "", v); print v } }' "$work/$1"; }
bqmax() { # the worst p95 of the other listings (both typosquatting pages and the page of 100)
	for p in /api/v1/enterprise/darkweb/typosquatting "/api/v1/enterprise/darkweb/typosquatting?page=200" "/api/v1/enterprise/darkweb/potential-phishing?per_page=100"; do
		echo "$(bq "$1" "$p") $p"
	done | awk '{ v = $1; ms = v; if (v ~ /µs$/) { sub(/µs$/, "", ms); ms /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", ms) } else if (v ~ /s$/) { sub(/s$/, "", ms); ms *= 1000 }
		if (ms + 0 >= best) { best = ms + 0; out = v } } END { print out " (worst of 3)" }'
}
subd() { awk -v e="$1" '$1 ~ "BenchmarkSubdomainListing/" e "/after" { printf "%.2fms (mean of %d)\n", $3 / 1e6, $2 }' "$work/subdomains.txt"; }
if command -v wrk >/dev/null; then
	# "pair N: bare R req/s (p99 P), periscope R req/s (p99 P), ratio X", then the median.
	auth=$(awk 'function ms(v) { if (v ~ /us$/) return substr(v, 1, length(v) - 2) / 1000; if (v ~ /ms$/) return substr(v, 1, length(v) - 2) + 0; if (v ~ /s$/) return substr(v, 1, length(v) - 1) * 1000; return v + 0 }
		/^pair / { for (i = 1; i <= NF; i++) if ($i == "periscope") { p = $(i + 4); sub(/\),?$/, "", p); if (ms(p) > worst) worst = ms(p) } }
		/^median ratio/ { lo = $8; hi = $10; sub(/,$/, "", lo); sub(/\)$/, "", hi); m = sprintf("%sx, median of %s pairs (%s–%s)", $3, $5, lo, hi) }
		END { printf "%s, periscope p99 ≤ %.2f ms", m, worst }' "$work/auth.txt")
else
	auth=$(awk '$1 == "periscope" && NF == 6 { p99 = $5 } $1 == "bare" { bare = $3 } /throughput:/ { x = $NF } END { printf "%sx, p99 %s", x, p99 }' "$work/auth.txt")
fi
cves="$nvulns CVEs" advs="$nadv advisories" finds="$((nfind / 2)) findings a kind"

row() { printf '| %s | %s | %s | %s | %s |\n' "$@"; }
echo
echo "Issue 18 targets, one run: $(date -u -d @"$start" '+%F %T') to $(date -u -d @"$end" +%T) UTC ($(( (end - start) / 60 )) min), $(nproc) CPUs"
echo "load average (1, 5, 15 min): start $load0, end $load1"
echo "vuln dataset, SQLite: $(dataset vuln-sqlite.txt)"
echo "vuln dataset, PostgreSQL: $(dataset vuln-pg.txt)"
echo
row "Measure" "Engine" "Dataset" "Result (p95 unless said)" "Target"
row "---" "---" "---" "---:" "---"
row "Vulnerability text search" "SQLite" "$cves" "$(vq vuln-sqlite.txt 'search: vulnerabilities text')" "≤ 50 ms"
row "Vulnerability text search" "PostgreSQL" "$cves" "$(vq vuln-pg.txt 'search: vulnerabilities text')" "≤ 50 ms"
row "Advisories text + ecosystem" "SQLite" "$advs" "$(vq vuln-sqlite.txt 'search: advisories text+eco')" "≤ 50 ms"
row "Advisories text + ecosystem" "PostgreSQL" "$advs" "$(vq vuln-pg.txt 'search: advisories text+eco')" "(not a target)"
row "Typosquatting listing, substring q" "SQLite" "$finds" "$(bq brand-sqlite.txt '/api/v1/enterprise/darkweb/typosquatting?q=brand8-&from=01/01/2026')" "≤ 20 ms"
row "Typosquatting listing, substring q" "PostgreSQL" "$finds" "$(bq brand-pg.txt '/api/v1/enterprise/darkweb/typosquatting?q=brand8-&from=01/01/2026')" "≤ 20 ms"
row "Potential-phishing page of 1,000" "SQLite" "$finds" "$(bq brand-sqlite.txt /api/v1/enterprise/darkweb/potential-phishing)" "≤ 20 ms"
row "Potential-phishing page of 1,000" "PostgreSQL" "$finds" "$(bq brand-pg.txt /api/v1/enterprise/darkweb/potential-phishing)" "≤ 20 ms"
row "Other enterprise listings" "PostgreSQL" "$finds" "$(bqmax brand-pg.txt)" "≤ 10 ms"
row "Other enterprise listings" "SQLite" "$finds" "$(bqmax brand-sqlite.txt)" "(not a target)"
row "KEV ingest" "SQLite" "$(sed -n 's/^kev *\([0-9]*\).*/\1/p' "$work/vuln-sqlite.txt") entries onto $cves" "$(kev vuln-sqlite.txt)" "≥ 5,000 records/s"
row "KEV ingest" "PostgreSQL" "$(sed -n 's/^kev *\([0-9]*\).*/\1/p' "$work/vuln-pg.txt") entries onto $cves" "$(kev vuln-pg.txt)" "(not a target)"
row "Subdomains of a 50,000-host domain (store)" "SQLite" "50k hosts, 100 listed" "$(subd sqlite)" "≤ 40 ms"
row "Subdomains of a 50,000-host domain (store)" "PostgreSQL" "50k hosts, 100 listed" "$(subd postgres)" "≤ 40 ms"
row "GET /auth/status vs bare handler" "SQLite" "one key" "$auth" "≥ 0.7x, p99 < 10 ms"
echo
echo "auth: $authhow"
