#!/usr/bin/env bash
# The conformance suite against the seed system itself: the TypeScript of
# toninfo/deepseek-harness at b736889ac7, unmodified, and its released npm
# packages 0.1.0-rc.8, both run by ../shared/tools/seed-testee (never copied
# here). Each run must fail exactly as conformance/seed/SYSTEM.json predicts:
# an unexpected failure, a failure of another kind, or an unexpected pass
# fails this script.
#
#   scripts/seed-testees.sh            check both (CI)
#   scripts/seed-testees.sh --record   run each twice and write conformance/seed/*.json anew
#                                      (refused when a failure has no row); then go generate
set -euo pipefail
cd "$(dirname "$0")/.."
run=${SEED_TESTEE:-../shared/tools/seed-testee/run}
[ -x "$run" ] || { echo "no seed testee at $run (set SEED_TESTEE)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/conformance" ./cmd/conformance
for seed in b736 npm-rc8; do SEED=$seed "$run" --install; done

if [ "${1:-}" = "--record" ]; then
  for seed in b736 npm-rc8; do
    for n in 1 2; do
      SEED=$seed "$tmp/conformance" run --exec "$run" --format json --out "$tmp/$seed-$n.json" || true
      sleep 1 # another wall-clock millisecond for the second run's stamps
    done
    "$tmp/conformance" known-failures --seed "$seed" --explain "$tmp/$seed-1.json" --explain "$tmp/$seed-2.json" --out "conformance/seed/$seed.json"
    echo "conformance/seed/$seed.json: $(grep -c '": "D' "conformance/seed/$seed.json") failures, each with its row"
  done
  echo "now: go generate ./conformance (the vectors' differences tags come from these files)"
  exit 0
fi

status=0
for seed in b736 npm-rc8; do
  start=$(date +%s)
  echo "--- seed system $seed"
  if ! SEED=$seed "$tmp/conformance" run --exec "$run" --known-failures "conformance/seed/$seed.json" > "$tmp/$seed.txt"; then
    grep -E '^(STALE|FAIL|ERROR)' "$tmp/$seed.txt" | grep -v 'known failure)' | head -40 || true
    status=1
  fi
  tail -4 "$tmp/$seed.txt"
  echo "($(( $(date +%s) - start )) s; $(grep -c '": "D' "conformance/seed/$seed.json") known failures)"
done
exit $status
