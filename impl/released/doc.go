// Package released reads, checks and writes the session files of the
// released versions of the seed system (0.0.1-rc.1 to 0.1.0-rc.8 of its
// session packages; ../shared/seed-system-formats.md Part B and
// spec/README.md §13, REL-1 to REL-7), never changing what it reads:
//
//   - Read reads released JSONL, plain or as a .jsonl.zstd concatenation
//     of checksummed zstd frames (a torn last frame is reported and its
//     complete records kept), and expands packed chunk rows (text-chunks,
//     reasoning-chunks, tool-call-chunks) into assistant/chunk events.
//   - ReadSQLite reads a session of a released SQLite database, schema 14,
//     15 or 17 (compressed data, varint sources, packed rows), read-only.
//   - Check applies the released rules: the 48 known types (REL-2), the
//     identified messages (REL-3), the b736889ac7 surface rules with the
//     released surface types and the tool/result replace rule (REL-4), and
//     derives the identified messages (REL-5).
//   - Encode writes released JSONL, plain or zstd, with the header the
//     released reader requires (delegationDepth), and Path names where the
//     released store looks for it (REL-7).
//
// Converting between the two vocabularies is package convert's job.
// Errors are *event.Error values with the codes of spec/errors.json:
// persist.not_a_session, persist.format_version, persist.corrupt,
// persist.schema_version, persist.wrong_session, the surface codes, and
// released.type_refused, released.message_invalid,
// released.tool_result_replace.
package released
