// Package compaction folds history: it replaces a range of a session's
// surface by one summary node (a compaction), or one tool result by a
// shorter one (a prune), through the surface's replace, with the records
// that make each decision replayable (spec/README.md, COMP-1 to COMP-8,
// REP-6).
//
// A compaction has two phases, so a summariser can take its time:
//
//	op, err := compaction.Begin(s, start, end)     // checks, then appends the start event: the lock
//	summary, meta := summarise(op.Messages)          // the shadowed nodes' messages
//	res, err := op.Commit(summary, meta)             // record, replacing user/message, end event
//	// or op.Abort(err): the end event with the error, no replace
//
// Compact does all three with a Summarizer. The lock lives in the log: a
// second Begin while a start event has no end event after it fails with
// compaction.locked, in this process or after a resume, and repair closes
// a start event a crash left open (REP-6), so the lock never wedges.
//
// Tool pairing: a range may not split an assistant tool call from its
// result. The balance of every surface cut (how many calls made before it
// are answered after it) is kept incrementally, O(1) amortised per append
// and rebuilt after a replace; Begin refuses an unbalanced range with
// compaction.unbalanced, or shrinks it to balanced cuts with WithSnap.
// Select proposes a range under a policy (KeepLast, KeepTokens).
//
// PruneToolResult replaces one tool result's content, keeping its call id
// and the rest of its data, after a compaction/prune record.
//
// Records are written in the seed system's b736889ac7 vocabulary
// (compact/*) by default, or in its later one (compaction/*, with a
// compactionId) with WithVocabulary(CompactionEvents). Both load.
package compaction
