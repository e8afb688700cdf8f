#!/usr/bin/env bash
# Fuzzes every target of ./fuzz, and the in-package targets listed below,
# for the given time each (default 30s):
#   bash scripts/fuzz.sh 1h
# A real finding writes its input under fuzz/testdata/fuzz/<Target>/ ("Failing
# input written to ..."): commit it with the fix, and plain `go test ./fuzz`
# replays it forever. The Go fuzzing engine sometimes ends a run with a bare
# "context deadline exceeded" when -fuzztime expires mid-execution and writes
# nothing (golang/go#75804); such a run is retried once and, if it happens
# again, reported as a flake, not a failure. Any other failure fails.
set -uo pipefail
cd "$(dirname "$0")/.."

# is_flake reads a failed run's output on stdin and succeeds when it is the
# engine's deadline flake: "context deadline exceeded" and no sign of a real
# finding (a failing input written, a panic, or a test's file:line report).
is_flake() {
  local out
  out=$(cat)
  printf '%s\n' "$out" | grep -q 'context deadline exceeded' &&
    ! printf '%s\n' "$out" | grep -qE 'Failing input written|panic:|^[[:space:]]+[A-Za-z0-9_]+\.go:[0-9]+: '
}
if [ "${1:-}" = "--is-flake" ]; then # for the script's own test
  is_flake
  exit
fi

time=${1:-30s}
# Targets are ./fuzz's, and those that test a package's unexported code
# beside it (PKG:TARGET).
targets="$(grep -ho '^func Fuzz[A-Za-z]*' fuzz/*_test.go | sed 's/^func /.\/fuzz:/')
./impl/message:FuzzMeter
./impl/event:FuzzCompactWalkers"
status=0
for pt in $targets; do
  pkg=${pt%%:*} t=${pt#*:}
  for try in 1 2; do
    out=$(go test "$pkg" -run '^$' -fuzz "^$t\$" -fuzztime "$time" 2>&1)
    code=$?
    if [ $code -eq 0 ]; then
      echo "ok    $t ($time): $(printf '%s\n' "$out" | grep -o 'execs: [0-9]*' | tail -1)"
      break
    fi
    if printf '%s\n' "$out" | is_flake; then
      if [ $try -eq 1 ]; then continue; fi
      echo "flake $t ($time): deadline exceeded twice with no failing input (golang/go#75804)"
      break
    fi
    echo "FAIL  $t ($time):"; printf '%s\n' "$out" | grep -v '^fuzz: elapsed' | head -80
    status=1
    break
  done
done
exit $status
