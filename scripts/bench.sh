#!/usr/bin/env bash
# Runs the session benchmarks (impl beside model, 1e3 to 1e6 events) and
# the persistence benchmarks, and writes a table and a plot:
#   bash scripts/bench.sh [outdir]     (default: bench-results)
# Takes several minutes; the model at 1e6 events needs seconds per operation.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-results}
mkdir -p "$out"
go test ./impl/session -run '^$' -bench . -benchmem -timeout 60m | tee "$out/session.txt"
go run ./cmd/benchreport -svg "$out/session.svg" -before impl/session/testdata/bench/session-before.txt < "$out/session.txt" | tee "$out/session.md"
go test ./impl/persist -run '^$' -bench . -benchmem -benchtime 3x -timeout 60m | tee "$out/persist.txt"
