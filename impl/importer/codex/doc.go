// Package codex checks and imports Codex CLI rollout files
// (sessions/YYYY/MM/DD/rollout-*.jsonl under CODEX_HOME): the facts of
// the format, the versions they come from and how Codex rebuilds the
// conversation on resume are in spec/harnesses.md §1.
//
// Check reports every rule of the rollout a line breaks (IMP-2, IMP-4),
// each with its line. Import turns the rollout into this library's events,
// in the order of its lines: response items become messages (a user turn
// per real user message, a step per model response, a tool/result per
// output), a compacted line with its replacement history replaces the
// surface, a thread rollback replaces the turns it drops, and every other
// line (session_meta, turn_context, event_msg, ghost snapshots, system
// messages, kinds it does not know) is kept as an ignorable codex/line
// record. The imported messages are the history Codex itself rebuilds
// from the file on resume (IMP-6), which a test checks against a
// reimplementation of that reconstruction.
package codex
