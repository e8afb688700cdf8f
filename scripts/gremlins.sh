#!/usr/bin/env bash
# Mutation testing by a tool over the whole code of a package, beside the
# hand-written patches of scripts/mutation.sh: go-gremlins
# (github.com/go-gremlins/gremlins) mutates every covered conditional,
# boundary, arithmetic operator, increment and sign of a package and runs
# its tests against each mutant.
#
#   bash scripts/gremlins.sh ./impl/message ./impl/repair   # packages of the core module
#   bash scripts/gremlins.sh impl/providers:./convo         # MODULE_DIR:PACKAGE of a nested module
#   GREMLINS_BUDGET=600 bash scripts/gremlins.sh ...         # stop a package after 600 s (default 1200)
#   GREMLINS_DIFF=origin/main bash scripts/gremlins.sh ...   # only mutants on lines changed since a commit
#   GREMLINS_EXCLUDE='cachesim/|seedsummary/' bash scripts/gremlins.sh ./impl/compaction  # not its subpackages
#   GREMLINS_SHORT=1 bash scripts/gremlins.sh ./impl/persist  # tests in -short mode (the crash tests kill at every
#                                                            # fifth point): a lower bound of the score, in a tenth of the time
#   GREMLINS_RUN='SQLite|Store' bash scripts/gremlins.sh ./impl/persist  # only the tests matching a -run regexp:
#                                                            # a lower bound again; replay its survivors against the whole suite
#   GREMLINS_SKIP='Crash|Killed' bash scripts/gremlins.sh ./impl/persist  # the same with a -skip regexp
#
# Prints one row per package: killed, lived, not covered, timed out, and
# the efficacy (killed / (killed + lived)); the full lists go to
# $GREMLINS_OUT (default /tmp/gremlins), one JSON file per package. A
# package that runs past its budget is reported as such, not scored. It
# installs gremlins v0.6.0 when it is not on PATH. RAPID_CHECKS (default
# here 100, a tenth of the state machines' own default) is passed to the
# tests, so a package's state machines run in seconds per mutant. Not run by CI (a whole
# run takes hours on two cores); its figures are in the issue notes.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${GREMLINS_OUT:-/tmp/gremlins}
budget=${GREMLINS_BUDGET:-1200}
mkdir -p "$out"
g=$(command -v gremlins || true)
if [ -z "$g" ]; then
  GOBIN="$out/bin" go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0 || exit 2
  g="$out/bin/gremlins"
fi
diff=()
[ -n "${GREMLINS_DIFF:-}" ] && diff=(--diff "$GREMLINS_DIFF")
# The tool mutates a package's subdirectories too, but runs only the
# package's own tests: exclude them (GREMLINS_EXCLUDE, a file path regexp)
# and score each subpackage on its own.
[ -n "${GREMLINS_EXCLUDE:-}" ] && diff+=(--exclude-files "$GREMLINS_EXCLUDE")
printf '%-40s %7s %6s %8s %6s %9s\n' package killed lived uncovered timed efficacy
for arg in "$@"; do
  module=.
  pkg=$arg
  case "$arg" in *:*) module=${arg%%:*}; pkg=${arg#*:};; esac
  name=$(echo "$module/$pkg" | sed 's,\./,,g; s,^/*,,; s,/,_,g')
  log="$out/$name.log"
  short=()
  flags=""
  [ -n "${GREMLINS_SHORT:-}" ] && flags="-short"
  [ -n "${GREMLINS_RUN:-}" ] && flags="$flags -run=${GREMLINS_RUN}"
  [ -n "${GREMLINS_SKIP:-}" ] && flags="$flags -skip=${GREMLINS_SKIP}"
  [ -n "$flags" ] && short=(env "GOFLAGS=$flags")
  (cd "$root/$module" && RAPID_CHECKS=${RAPID_CHECKS:-100} "${short[@]}" timeout "$budget" "$g" unleash --workers 1 --timeout-coefficient 5 "${diff[@]}" -o "$out/$name.json" "$pkg" >"$log" 2>&1)
  rc=$?
  if [ $rc -eq 124 ]; then
    # Over budget: score the mutants it did run, from its log.
    k=$(grep -c '^ *KILLED ' "$log"); l=$(grep -c '^ *LIVED ' "$log")
    u=$(grep -c '^ *NOT COVERED ' "$log"); tmo=$(grep -c '^ *TIMED OUT ' "$log")
    eff=$(awk -v k="$k" -v l="$l" 'BEGIN { printf "%.1f", (k + l) ? 100 * k / (k + l) : 100 }')
    printf '%-40s %7d %6d %8d %6d %8s%%  (over its budget of %ss: the mutants it ran; list in %s)\n' "$module/$pkg" "$k" "$l" "$u" "$tmo" "$eff" "$budget" "$log"
    continue
  fi
  python3 - "$out/$name.json" "$module/$pkg" "$log" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print(f"{sys.argv[2]:<40} no report (see {sys.argv[3]})")
    sys.exit(0)
timed = sum(1 for f in d.get("files", []) for m in f.get("mutations", []) if m.get("status") == "TIMED OUT")
k, l = d["mutants_killed"], d["mutants_lived"]
eff = 100.0 * k / (k + l) if k + l else 100.0
print(f"{sys.argv[2]:<40} {k:7d} {l:6d} {d['mutants_not_covered']:8d} {timed:6d} {eff:8.1f}%")
PY
done
