// Package importer holds what the importers of other agent harnesses'
// session logs share (spec/README.md §15, spec/harnesses.md): the
// findings a check reports with the line they come from, the imported
// log with each event's line, and the builder that appends the imported
// events to a session as they are made, so that every event is checked by
// this library's rules the moment it is written.
//
// The harnesses themselves live in subpackages: importer/codex (Codex CLI
// rollouts) and importer/claudecode (Claude Code transcripts). Each has a
// Check (the harness's own rules, line by line) and an Import (the log as
// this library's events, seqs in the order of the lines they come from).
// Input is never changed.
package importer
