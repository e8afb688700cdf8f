#!/usr/bin/env bash
# Mutation check: for each deliberately broken variant in scripts/mutants
# (a patch with a header naming what it breaks and which test packages
# must catch it), copy the tree, apply the patch there, and require those
# tests to fail. The library a user imports has no mutant switches: the
# mutants exist only as these patches.
#
#   bash scripts/mutation.sh                 # every mutant
#   bash scripts/mutation.sh half_open ...   # some
#   bash scripts/mutation.sh --budget 600    # CI: as many as fit in 600 s
#
# With a budget, every patch is still checked to apply (a stale patch is an
# ERROR whatever the budget), and the mutants run in this order until the
# budget is spent: first those whose patched files or test packages changed
# in the last MUTATION_RECENT commits (default 3), then the rest; each group in a
# rotation that starts at a place drawn from HEAD's hash, so successive
# commits run different mutants and every one runs within a few commits.
# The ones left out are listed; run without --budget to run them all.
#
# Prints KILLED or SURVIVED per mutant; a patch that no longer applies or a
# mutant that does not compile is an ERROR (the check must test the
# behaviour, not a build failure). Exits non-zero unless every mutant is
# killed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
budget=0
if [ "${1:-}" = "--budget" ]; then budget=$2; shift 2; fi
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for p in scripts/mutants/*.patch; do names+=("$(basename "$p" .patch)"); done
fi
if [ "$budget" -gt 0 ]; then
  # Every patch must still apply, whether or not it runs this time.
  stale=0
  for m in "${names[@]}"; do
    patch="$root/scripts/mutants/$m.patch"
    if ! patch -p1 -s --dry-run -d "$root" < "$patch" >/dev/null 2>&1; then
      echo "ERROR    $m: the patch no longer applies (regenerate it against the current code)"; stale=$((stale + 1))
    fi
  done
  [ "$stale" -eq 0 ] || { echo "mutation check: $stale patch(es) no longer apply"; exit 1; }
  changed=$(git -C "$root" log -n "${MUTATION_RECENT:-3}" --format= --name-only 2>/dev/null | sort -u)
  touches() {  # does mutant $1 patch a changed file or have its tests in a changed package?
    local patch="$root/scripts/mutants/$1.patch" f module tests pkg
    module=$(sed -n 's/^module: //p' "$patch" | head -1)
    for f in $(sed -n 's,^+++ b/,,p' "$patch"); do   # paths from the repository's root
      grep -qxF "$f" <<<"$changed" && return 0
    done
    tests=$(sed -n 's/^tests: //p' "$patch" | head -1)
    for pkg in $tests; do
      pkg=${pkg#./}; pkg=${pkg%/...}
      [ -n "$module" ] && pkg="$module/$pkg"
      grep -q "^$pkg/[^/]*_test\.go$" <<<"$changed" && return 0
    done
    return 1
  }
  first=() rest=()
  for m in "${names[@]}"; do
    if touches "$m"; then first+=("$m"); else rest+=("$m"); fi
  done
  head=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo 000000)
  if [ ${#first[@]} -gt 0 ]; then
    at=$(( 0x${head:0:6} % ${#first[@]} ))
    first=("${first[@]:$at}" "${first[@]:0:$at}")
  fi
  if [ ${#rest[@]} -gt 0 ]; then
    at=$(( 0x${head:0:6} % ${#rest[@]} ))
    rest=("${rest[@]:$at}" "${rest[@]:0:$at}")
  fi
  names=("${first[@]}" "${rest[@]}")
  echo "mutation check: budget ${budget}s; ${#first[@]} mutant(s) touch the last ${MUTATION_RECENT:-3} commits and run first"
fi
began=$(date +%s)
skipped=()
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
  if [ "$budget" -gt 0 ] && [ $(( $(date +%s) - began )) -ge "$budget" ]; then skipped+=("$m"); continue; fi
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
ran=$(( ${#names[@]} - ${#skipped[@]} ))
if [ ${#skipped[@]} -gt 0 ]; then
  echo "mutation check: the budget ran out; not run this time (${#skipped[@]}): ${skipped[*]}"
fi
if [ "$bad" -gt 0 ]; then
  echo "mutation check: $bad of $ran mutant(s) run survived or could not run"
  exit 1
fi
echo "mutation check: all $ran mutants run were killed (of ${#names[@]})"
