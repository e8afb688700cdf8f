#!/usr/bin/env bash
# Runs the conformance suite against every testee shipped in the repo:
# the real ones (built-in implementation, model, the Go testee over the
# protocol, the TypeScript testee) must pass, and every mutant testee (the
# Go implementation built from a copy with one deliberately broken rule,
# each patch of scripts/mutants marked "testee: yes") must fail. Prints, for
# each mutant, the vector that caught it. Exits non-zero if a real testee
# fails or a mutant passes.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/conformance" ./cmd/conformance || exit 2
mutants=()
for p in scripts/mutants/*.patch; do
  grep -q '^testee: yes' "$p" || continue
  m=$(basename "$p" .patch)
  copy="$bin/src-$m"
  mkdir -p "$copy"
  tar --exclude=.git --exclude=node_modules -cf - . | tar -C "$copy" -xf -
  (cd "$copy" && patch -p1 -s --no-backup-if-mismatch < "$root/$p") || { echo "ERROR mutant $m: the patch no longer applies"; exit 2; }
  (cd "$copy" && go build -o "$bin/mutant-$m" ./cmd/conformance) || { echo "ERROR mutant $m: does not compile"; exit 2; }
  rm -rf "$copy"
  mutants+=("$m")
done
(cd conformance/testees/ts && npm ci --no-audit --no-fund --silent && npx tsc -p .) || exit 2

status=0
real() {
  local name=$1; shift
  if out=$("$bin/conformance" run "$@" 2>&1); then
    echo "PASS  $name: $(printf '%s\n' "$out" | grep -E '^[0-9]+ vectors:')"
  else
    echo "FAIL  $name (a real testee must pass)"; printf '%s\n' "$out" | tail -30; status=1
  fi
}
real "built-in implementation" 
real "model" --model
real "Go testee over the protocol" --exec "$bin/conformance testee"
real "TypeScript testee" --exec "node conformance/testees/ts/dist/testee.js"

for m in "${mutants[@]}"; do
  report=$("$bin/conformance" run --exec "$bin/mutant-$m testee" --format json 2>/dev/null)
  code=$?
  # The report lists outcomes in order; an outcome's "id" comes first.
  first=$(printf '%s' "$report" | grep -E '"(id|status)":' | grep -B1 -m1 '"status": "fail"' | grep -o '"id": "[^"]*"' | cut -d'"' -f4)
  fails=$(printf '%s' "$report" | grep -c '"status": "fail"')
  if [ "$code" -eq 1 ] && [ "$fails" -gt 0 ]; then
    echo "CAUGHT mutant $m: $fails vectors fail, first $first"
  else
    echo "MISSED mutant $m (exit $code)"; status=1
  fi
done
exit $status
