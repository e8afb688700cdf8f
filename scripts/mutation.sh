#!/usr/bin/env bash
# Mutation check: build the implementation with one deliberately broken
# variant at a time (see internal/mutant) and require the tests of
# impl/session, impl/surface and impl/repair (the rapid state machine
# against the model, the rule cases, the examples) to fail for every one.
# Prints KILLED or SURVIVED per mutant and exits non-zero if any survived.
#
#   bash scripts/mutation.sh              # all mutants
#   bash scripts/mutation.sh half_open    # just one
set -uo pipefail
cd "$(dirname "$0")/.."

mutants=(
  half_open               # replace shadows [start, end) instead of [start, end]
  no_coverage_check       # replace sources need not cover the shadowed nodes
  no_reversed_check       # start after end in surface order is not rejected
  stale_cache             # message/surface view not invalidated after a replace
  delta_off_by_one        # delta processing lags one event behind
  no_marker_check         # surface-eligible event without surfaceOp accepted
  no_seq_check            # seed with a seq gap accepted
  source_self_allowed     # sourceEventSeqs may name the event itself
  empty_assistant_message # assistant/message with empty content yields a message
)
[ $# -gt 0 ] && mutants=("$@")

export RAPID_NOFAILFILE=1 RAPID_CHECKS=${RAPID_CHECKS:-300} RAPID_SHRINKTIME=${RAPID_SHRINKTIME:-2s}
survived=0
for m in "${mutants[@]}"; do
  start=$(date +%s)
  if out=$(SURFACE_MUTANT="$m" timeout 600 go test -count=1 -failfast -tags surface_mutant ./impl/session/ ./impl/surface/ ./impl/repair/ 2>&1); then
    echo "SURVIVED $m"
    survived=$((survived + 1))
  else
    first=$(printf '%s\n' "$out" | grep -m1 -E '^\s*--- FAIL' | sed 's/^ *//')
    echo "KILLED   $m ($(( $(date +%s) - start ))s; first failure: ${first:-build or panic})"
  fi
done
if [ "$survived" -gt 0 ]; then
  echo "mutation check: $survived mutant(s) survived"
  exit 1
fi
echo "mutation check: all ${#mutants[@]} mutants killed"
