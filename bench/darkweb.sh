#!/usr/bin/env bash
# The dark-web figures of BENCHMARKS.md in one run on SQLite, each beside its
# same-run baseline: `periscope ingest breach-csv` of a generated file under
# /usr/bin/time -v, then `periscope-bench darkweb-insert` (a plain INSERT of
# the same stored rows into a table without indexes) on the database it
# wrote; then BenchmarkDarkwebHTTP (searches, both listings, and
# baseline-1000-by-seq with each listing's ratio to it) over a database of
# the same size it loads itself. The load average is printed before and
# after each step.
#
# Usage: bench/darkweb.sh DIR [RECORDS]   (RECORDS default 10000000)
# DIR holds the generated file, the databases and the key; it is kept, so
# that a second run reuses the file and the benchmark's database (the
# ingest's database is written anew each run). About 20 GB at 10M records.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/darkweb.sh DIR [RECORDS]}
n=${2:-10000000}
mkdir -p "$dir"
go build -o "$dir/periscope" ./cmd/periscope
go build -o "$dir/periscope-bench" ./cmd/periscope-bench
go test -c -o "$dir/dw.test" ./internal/api/
cd "$dir"
step() { echo "== $1 ($(uptime | sed 's/.*load average/load average/'))"; }
if [ ! -s "full$n.csv" ]; then
	./periscope-bench gen-darkweb --kind breach-csv --count "$n" --out "full$n.csv"
fi
rm -f "ingest$n.db" "ingest$n.db-"* "ingest$n-darkweb.db" "ingest$n-darkweb.db-"*
step "ingest breach-csv, $n records"
/usr/bin/time -v ./periscope ingest breach-csv --database "ingest$n.db" --darkweb-key-file k.key --breach BenchFull "full$n.csv" 2>&1 |
	grep -E 'records|Elapsed|User time|System time|Maximum resident'
step "plain INSERT of the same rows (baseline)"
./periscope-bench darkweb-insert --database "ingest$n.db"
step "BenchmarkDarkwebHTTP, $n records"
PERISCOPE_DARKWEB_BENCH_DSN="$PWD/dw$n.db" PERISCOPE_DARKWEB_BENCH_RECORDS=$n \
	./dw.test -test.run XXX -test.bench BenchmarkDarkwebHTTP -test.benchtime 2x -test.timeout 3h
step end
