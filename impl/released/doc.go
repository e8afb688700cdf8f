// Package released reads the session files that the released versions of
// the seed system write (0.0.1-rc.1 to 0.1.0-rc.8 of its session packages,
// ../shared/seed-system-formats.md Part B), read-only: JSONL, plain or as a
// `.jsonl.zstd` concatenation of checksummed zstd frames, with packed
// chunk rows expanded into the assistant/chunk events they stand for.
//
// This is the first part of issue 22 (the reader of the file layer): the
// header with its required delegationDepth, the frames (a torn last frame
// is reported, the complete records before it kept; a bad checksum or a
// complete frame that ends inside a record is persist.corrupt), and the
// three row kinds text-chunks, reasoning-chunks and tool-call-chunks. The
// released vocabulary's rules, SQLite schemas 14, 15 and 17, the converter
// and the writer are not here yet.
//
// Errors are *event.Error values with the codes of spec/errors.json:
// persist.not_a_session (no session header, a first frame that is not
// exactly one header line), persist.format_version, persist.corrupt.
package released
