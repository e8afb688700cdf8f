// Package claudecode checks and imports Claude Code session transcripts
// (<config>/projects/<project-slug>/<sessionId>.jsonl): the facts of the
// format, the versions they come from and how Claude Code rebuilds the
// conversation on resume are in spec/harnesses.md §2.
//
// A transcript is a tree of entries linked by parentUuid; the
// conversation is the chain from the newest main entry back to the latest
// compact boundary, with the blocks of one API response, written one per
// entry, regrouped by their message id. Check reports every rule a line
// breaks (IMP-2, IMP-4, IMP-5), each with its line. Import turns the
// transcript into this library's events in the order of its lines: the
// entries on the conversation's chains become messages (an assistant/message
// per API response, a tool/result per tool_result block, a user turn per
// prompt), a compact summary replaces the surface, and every other line
// (other branches, sidechains, progress, system, attachment and metadata
// entries, synthetic API errors) is kept as an ignorable claude-code/entry
// record.
package claudecode
