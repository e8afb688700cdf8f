#!/usr/bin/env bash
# Writes the .jsonl.zstd fixtures of this directory with the zstd CLI, the
# reference C encoder (libzstd, as the released system's Node zlib uses),
# from the plain .jsonl beside them: a frame for the header line, then one
# frame per batch of 3 lines, as the released writer frames its batches.
# Each fixture is written with other encoder settings, so the frames'
# shapes differ (see README). Committed with the version that wrote them:
#   zstd --version  ->  v1.5.4
set -euo pipefail
cd "$(dirname "$0")"
frames() { # OUT PLAIN ZSTD-ARGS...: one frame per batch
  local out=$1 plain=$2; shift 2
  local tmp; tmp=$(mktemp -d)
  head -n 1 "$plain" > "$tmp/h"
  tail -n +2 "$plain" | split -l 3 - "$tmp/b."
  : > "$out"
  for f in "$tmp/h" "$tmp"/b.*; do
    case " $* " in
      *" -stdin "*) zstd -q -c $(echo "$@" | sed 's/-stdin//') < "$f" >> "$out" ;; # streamed: no content size
      *) zstd -q -c "$@" "$f" >> "$out" ;;
    esac
  done
  rm -rf "$tmp"
}
frames small-default.jsonl.zstd small.jsonl -3 --check              # the released writer's settings: single-segment frames, 1-byte sizes
frames small-stream.jsonl.zstd small.jsonl -1 --no-check -stdin     # windowed frames, no content size, no checksum
frames prose-default.jsonl.zstd prose.jsonl -3 --check
frames prose-max.jsonl.zstd prose.jsonl --ultra -22 --check         # the strongest level: other block and sequence shapes
frames prose-stream.jsonl.zstd prose.jsonl -1 --check -stdin
frames runs-default.jsonl.zstd runs.jsonl -3 --check                # 128 KiB of one byte: RLE blocks
frames runs-raw.jsonl.zstd runs.jsonl --fast=1000 --no-check -stdin # the fastest level
