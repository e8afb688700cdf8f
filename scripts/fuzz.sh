#!/usr/bin/env bash
# Fuzzes every target of ./fuzz for the given time each (default 30s):
#   bash scripts/fuzz.sh 1h
# New failing inputs are written by go test under fuzz/testdata/fuzz/; commit
# them with the fix so that plain `go test ./fuzz` replays them forever.
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-30s}
targets=$(grep -ho '^func Fuzz[A-Za-z]*' fuzz/*_test.go | sed 's/^func //')
for t in $targets; do
  echo "=== $t ($time)"
  go test ./fuzz -run '^$' -fuzz "^$t\$" -fuzztime "$time" 2>&1 | grep -vE '^(fuzz: elapsed.*new interesting: 0|ok )' | tail -3
done
