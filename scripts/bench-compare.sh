#!/usr/bin/env bash
# Compares the key operations of the working tree with a base commit, on
# this machine, in one run, so that a regression shows before it lands:
#   bash scripts/bench-compare.sh BASE [COUNT]      (COUNT: pairs, default 5)
#   ONLY=Resume bash scripts/bench-compare.sh BASE  (only the keys matching a regexp)
# It builds the test binaries of impl/session, impl/persist and
# impl/compaction at BASE (in a temporary worktree) and from the working
# tree, then runs each key benchmark alternately, base then head, COUNT
# times, and prints for each figure (ns/op, and cpu-ns/op where the
# benchmark reports it) the median of each side and the median of the
# head/base ratios taken pair by pair: a machine that slows down slows
# both sides of a pair alike. A benchmark the base lacks is reported as
# such. Ratios below 1 are the head being faster.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bash scripts/bench-compare.sh BASE [COUNT]}
count=${2:-5}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach -q "$work/base" "$base"

# package; benchmark regexp; benchtime (';' apart: a regexp may hold '|'):
# the operations the README quotes. Append+derive runs twice: its first
# 2,000 appends after a seed carry what the seed left behind (a collection
# under way, caches), 10,000 are mostly steady appends and three of the
# traffic's compactions (still within the seed's headroom: no growth).
keys=(
  "impl/session;^BenchmarkSeed$/^impl$/^100000$;3x"
  "impl/session;^BenchmarkAppendDerive$/^impl$/^100000$;2000x"
  "impl/session;^BenchmarkAppendDerive$/^impl$/^100000$;10000x"
  "impl/session;^BenchmarkDerive$/^impl$/^100000$;2000x"
  "impl/session;^BenchmarkReplace$/^impl$/^100000$/^k=100$;500x"
  "impl/session;^BenchmarkFirstAppend$/^(afterSeed|steady)$/^impl$/^100000$;20x"
  "impl/persist;^BenchmarkResume$/^jsonl$/^100000$/^(resume|floor)$;3x"
  "impl/persist;^BenchmarkResume$/^sqlite$/^100000$/^(resume|floor)$;3x"
  "impl/compaction;^BenchmarkBeginCommit$;20x"
)

# ONLY=REGEXP keeps the keys it matches.
if [ -n "${ONLY:-}" ]; then
  kept=()
  for key in "${keys[@]}"; do [[ $key =~ $ONLY ]] && kept+=("$key"); done
  keys=("${kept[@]}")
fi

build() { # build DIR OUT PKG
  (cd "$1" && go test -c -o "$2" "./$3") >/dev/null
}

for key in "${keys[@]}"; do
  IFS=";" read -r pkg re bt <<<"$key"
  name=${pkg//\//_}
  [ -x "$work/head_$name" ] || build . "$work/head_$name" "$pkg"
  [ -e "$work/base_$name" ] || build "$work/base" "$work/base_$name" "$pkg" || touch "$work/base_$name"
done

run() { # run BIN PKG RE BT: benchmark lines
  [ -x "$1" ] || return 0
  (cd "$2" && "$1" -test.run '^$' -test.bench "$3" -test.benchtime "$4" -test.benchmem 2>/dev/null) | grep '^Benchmark' || true
}

for key in "${keys[@]}"; do
  IFS=";" read -r pkg re bt <<<"$key"
  name=${pkg//\//_}
  : >"$work/a" ; : >"$work/b"
  for i in $(seq "$count"); do
    run "$work/base_$name" "$work/base/$pkg" "$re" "$bt" | sed "s/^/$i /" >>"$work/a"
    run "$work/head_$name" "$pkg" "$re" "$bt" | sed "s/^/$i /" >>"$work/b"
  done
  # Each line: pair index, name, iterations, then value/unit pairs.
  awk -v key="$pkg $re" -v bt="$bt" '
    function median(list,   n, i, j, t, a) {
      n = split(list, a, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      if (n == 0) return ""
      return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    {
      side = (FILENAME ~ /\/a$/) ? 1 : 2
      pair = $1; bench = $2; sub(/-[0-9]+$/, "", bench)
      for (f = 4; f < NF; f += 2) {
        unit = $(f + 1)
        if (unit != "ns/op" && unit != "cpu-ns/op") continue
        k = bench " " unit " (" bt ")"
        v[side, k, pair] = $f
        keys[k] = 1
      }
    }
    END {
      found = 0
      for (k in keys) {
        found = 1
        as = ""; bs = ""; rs = ""
        for (p = 1; p <= 1000; p++) {
          if ((1, k, p) in v) as = as " " v[1, k, p]
          if ((2, k, p) in v) bs = bs " " v[2, k, p]
          if ((1, k, p) in v && (2, k, p) in v && v[1, k, p] > 0) rs = rs " " v[2, k, p] / v[1, k, p]
        }
        if (as == "") { printf "%-60s head %12.0f   (not in the base)\n", k, median(bs); continue }
        printf "%-60s base %12.0f  head %12.0f  head/base %.3f\n", k, median(as), median(bs), median(rs)
      }
      if (!found) printf "%s: no benchmark ran\n", key
    }' "$work/a" "$work/b"
done
