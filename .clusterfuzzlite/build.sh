#!/bin/bash -eu
# Builds every native Go fuzz target of ./fuzz as a libFuzzer binary
# (OSS-Fuzz's compile_native_go_fuzzer), with its seed corpus.
cd "$SRC/surface"
for target in $(grep -ho '^func Fuzz[A-Za-z]*' fuzz/*_test.go | sed 's/^func //'); do
  name=$(echo "$target" | sed 's/^Fuzz//' | tr '[:upper:]' '[:lower:]')
  compile_native_go_fuzzer github.com/surfacelog/surface/fuzz "$target" "fuzz_$name"
  if [ -d "fuzz/testdata/fuzz/$target" ]; then
    zip -jq "$OUT/fuzz_${name}_seed_corpus.zip" "fuzz/testdata/fuzz/$target"/*
  fi
done
