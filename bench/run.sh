#!/usr/bin/env bash
# bench/run.sh — the full benchmark run behind `make bench`: checks that the four
# implementations agree, runs the runtime benchmarks (BENCH_COUNT interleaved rounds of
# -benchmem; BenchmarkChart among them, a statechart against a flat machine of the same
# size, which the report holds to the 2x target), summarises them with benchstat, measures
# generation scaling, and writes BENCHMARKS.md at the repository root with bench/cmd/report.
# Raw outputs stay in bench/results/. Takes about 15-20 minutes on a 2-CPU machine.
#
# Knobs (environment): BENCH_COUNT (10), BENCH_TIME (1s), BENCH_FILTER (.),
# SCALING_SIZES (100,1000,5000,20000), SCALING_REPEAT (3), SCALING=0 to skip scaling.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="/usr/local/go/bin:$PATH"
export PATH="$PATH:$(go env GOPATH)/bin"

COUNT=${BENCH_COUNT:-10}
BENCHTIME=${BENCH_TIME:-1s}
FILTER=${BENCH_FILTER:-.}
SIZES=${SCALING_SIZES:-100,1000,5000,20000}
REPEAT=${SCALING_REPEAT:-3}
OUT=results
mkdir -p "$OUT"
rm -f "$OUT"/bench.txt "$OUT"/benchstat.csv "$OUT"/benchstat.txt "$OUT"/env.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "bench: vet and agreement tests"
go vet ./...
go test -count=1 ./...

{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "go=$(go version | sed 's/^go version //')"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "nproc=$(nproc)"
	echo "gomaxprocs=${GOMAXPROCS:-$(nproc)}"
	echo "kernel=$(uname -r)"
	echo "commit=$(git -C .. rev-parse --short HEAD 2>/dev/null || echo unknown)"
	if ! git -C .. diff --quiet HEAD -- cmd internal spec generated schema templates go.mod 2>/dev/null; then
		echo "dirty=, with uncommitted changes to the generator or generated code"
	fi
	echo "looplab=$(go list -m -f '{{.Version}}' github.com/looplab/fsm)"
	echo "stateless=$(go list -m -f '{{.Version}}' github.com/qmuntal/stateless)"
	echo "benchstat=golang.org/x/perf $(go list -m -f '{{.Version}}' golang.org/x/perf)"
	echo "count=$COUNT"
	echo "benchtime=$BENCHTIME"
	echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/env.txt"

echo "bench: runtime benchmarks, $COUNT rounds"
go test -c -o "$tmp/bench.test" .
for i in $(seq "$COUNT"); do
	echo "bench: round $i/$COUNT"
	"$tmp/bench.test" -test.run '^$' -test.bench "$FILTER" -test.benchmem \
		-test.benchtime "$BENCHTIME" -test.count 1 >> "$OUT/bench.txt"
done
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/env.txt"

go tool benchstat -format csv "$OUT/bench.txt" > "$OUT/benchstat.csv" 2>/dev/null
go tool benchstat -col /impl "$OUT/bench.txt" > "$OUT/benchstat.txt"

if [ "${SCALING:-1}" != 0 ]; then
	echo "bench: generation scaling ($SIZES states)"
	go run ./scaling -sizes "$SIZES" -repeat "$REPEAT" -profile -json "$OUT/scaling.json"
fi

go run ./cmd/report -dir "$OUT" -notes notes.md -o ../BENCHMARKS.md
echo "bench: wrote BENCHMARKS.md"
