// Package zstdframe writes zstd frames by hand, from the frame format's own
// description (RFC 8878 §3.1.1), with raw and RLE blocks only: every frame
// header shape the format allows (single-segment or windowed, a dictionary
// ID of 0 in 0 to 4 bytes, a content size of 0 to 8 bytes, with or without
// the content checksum, the unused descriptor bit set or not).
//
// It is the second, independent producer of the released .jsonl.zstd
// files in this repository's tests and conformance vectors: the Go encoder
// the library depends on always writes a window descriptor and compressed
// blocks, so shapes other encoders write would otherwise never be read.
// It compresses nothing and is not for production use.
package zstdframe
