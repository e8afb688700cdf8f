#!/usr/bin/env bash
# Fails when the repository tracks a build output: a file git sees as
# binary (compiled test binaries, executables, archives, databases, jars).
# Binary fixtures that a test needs are listed in ALLOWED below (glob
# patterns): the .jsonl.zstd files the reference zstd encoder wrote for
# impl/released's tests (testdata/libzstd/make.sh writes them).
set -euo pipefail
cd "$(dirname "$0")/.."
ALLOWED=('impl/released/testdata/libzstd/*.jsonl.zstd')
bad=0
while IFS= read -r -d '' f; do
  [ -s "$f" ] || continue
  # git's own heuristic: numstat prints "-	-" for a binary file
  if [ "$(git diff --no-index --numstat /dev/null "$f" 2>/dev/null | cut -f1)" = "-" ]; then
    for a in "${ALLOWED[@]+"${ALLOWED[@]}"}"; do
      # shellcheck disable=SC2053 # a glob pattern on purpose
      [[ "$f" == $a ]] && continue 2
    done
    echo "tracked binary file: $f ($(wc -c <"$f") bytes)"; bad=1
  fi
  case "$f" in
    *.test|*.jar|*.exe|*.so|*.a|*.o) echo "tracked build output: $f"; bad=1 ;;
  esac
done < <(git ls-files -z)
[ "$bad" -eq 0 ] && echo "no tracked binaries"
exit "$bad"
