#!/usr/bin/env bash
# Measures the figures of the README's performance section and rewrites
# that section from them (cmd/benchreport -readme), so the README always
# shows one run, at the commit it names:
#   bash scripts/bench-readme.sh            (about 17 minutes on 2 cores)
# The raw output is kept in impl/session/testdata/bench/readme.txt; a test
# (cmd/benchreport) checks that the README's section is what that file
# gives. Run it on a committed tree: the commit it names is HEAD.
set -euo pipefail
cd "$(dirname "$0")/.."
out=impl/session/testdata/bench/readme.txt
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  echo "commit: $(git rev-parse HEAD)$( [ -z "$(git status --porcelain --untracked-files=no)" ] || echo ' (with uncommitted changes)')"
  echo "date: $(date -u +%F)"
  bench() { # PKG REGEXP BENCHTIME
    go test "./$1" -run '^$' -bench "$2" -benchtime "$3" -benchmem -timeout 60m
  }
  bench impl/message '^BenchmarkMeter$' 3000x
  bench impl/session '^(BenchmarkStrictAppend|BenchmarkTokens)$' 300x
  bench impl/session '^BenchmarkFirstAppend$/^afterSeed$/^impl$/^(1000|1000000)$' 1x
  bench impl/session '^(BenchmarkAppendDerive|BenchmarkReplace)$/^impl$/^(1000|1000000)$' 2000x
  bench impl/compaction '^BenchmarkCompactPerNode$' 200x
  bench impl/persist '^BenchmarkResumeVsFloor$' 7x
  bench impl/persist '^BenchmarkResumeCheckpoint$/^(100000|1000000)/' 3x
  bench impl/persist '^BenchmarkGroupCommit$' 5x
  bench cmd/conformance '^BenchmarkValidate$/^(100000|1000000)/interleaved$' 3x
} | tee "$tmp"
mv "$tmp" "$out"
trap - EXIT
go run ./cmd/benchreport -readme README.md < "$out"
echo "README.md's performance section rewritten from $out"
