#!/usr/bin/env bash
# Mutation check: for each deliberately broken variant in scripts/mutants
# (a patch with a header naming what it breaks and which test packages
# must catch it), copy the tree, apply the patch there, and require those
# tests to fail. The library a user imports has no mutant switches: the
# mutants exist only as these patches.
#
#   bash scripts/mutation.sh                 # every mutant
#   bash scripts/mutation.sh half_open ...   # some
#
# Prints KILLED or SURVIVED per mutant; a patch that no longer applies or a
# mutant that does not compile is an ERROR (the check must test the
# behaviour, not a build failure). Exits non-zero unless every mutant is
# killed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for p in scripts/mutants/*.patch; do names+=("$(basename "$p" .patch)"); done
fi
# The copies live outside the repository: tell the tests where the seed
# testee beside it is (internal/seedtestee looks beside the module root).
if [ -z "${SEED_TESTEE:-}" ] && [ -x "$root/../shared/tools/seed-testee/run" ]; then
  export SEED_TESTEE="$root/../shared/tools/seed-testee/run"
fi
export RAPID_NOFAILFILE=1 RAPID_CHECKS=${RAPID_CHECKS:-300} RAPID_SHRINKTIME=${RAPID_SHRINKTIME:-2s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
for m in "${names[@]}"; do
  patch="$root/scripts/mutants/$m.patch"
  if [ ! -f "$patch" ]; then echo "ERROR    $m: no such mutant"; bad=$((bad + 1)); continue; fi
  tests=$(sed -n 's/^tests: //p' "$patch" | head -1)
  module=$(sed -n 's/^module: //p' "$patch" | head -1)   # a nested module's directory, when the tests are there
  module=${module:-.}
  copy="$work/$m"
  mkdir -p "$copy"
  tar -C "$root" --exclude=.git --exclude=node_modules --exclude='*.test' -cf - . | tar -C "$copy" -xf -
  if ! (cd "$copy" && patch -p1 -s --no-backup-if-mismatch < "$patch"); then
    echo "ERROR    $m: the patch no longer applies (regenerate it against the current code)"; bad=$((bad + 1)); continue
  fi
  if ! out=$(cd "$copy/$module" && go vet $tests 2>&1); then
    echo "ERROR    $m: the mutant does not compile:"; printf '%s\n' "$out" | head -5; bad=$((bad + 1)); continue
  fi
  start=$(date +%s)
  if out=$(cd "$copy/$module" && timeout 900 go test -count=1 -failfast $tests 2>&1); then
    echo "SURVIVED $m ($(sed -n 's/^breaks: //p' "$patch" | head -1))"
    bad=$((bad + 1))
  else
    first=$(printf '%s\n' "$out" | grep -m1 -E '^\s*--- FAIL' | sed 's/^ *//')
    echo "KILLED   $m ($(( $(date +%s) - start ))s; first failure: ${first:-none named})"
  fi
  rm -rf "$copy"
done
if [ "$bad" -gt 0 ]; then
  echo "mutation check: $bad of ${#names[@]} mutant(s) survived or could not run"
  exit 1
fi
echo "mutation check: all ${#names[@]} mutants killed"
