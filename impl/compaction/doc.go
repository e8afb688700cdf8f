// Package compaction folds history: it replaces a range of a session's
// surface by one summary node (a compaction), or one tool result by a
// shorter one (a prune), through the surface's replace, with the records
// that make each decision replayable (spec/README.md, COMP-1 to COMP-10,
// REP-6).
//
// The one call an agent makes when its context grows too large:
//
//	res, err := compaction.CompactSelected(ctx, s, compaction.TargetTokens(budget, nil), summarize, nil)
//
// chooses what to fold by a policy and begins the compaction in one step
// (no append comes between), asks summarize for the summary, and commits
// it. Policies: KeepTurns(n) keeps the last n complete turns; TargetTokens
// folds whole turns until the rest fits a budget (and says in
// Result.Selection.OverBudget when even the open turn alone does not);
// KeepLast and KeepTokens keep a number of nodes or at least a number of
// tokens. By default a selection cuts only where a turn begins and never
// folds the open turn (its prompt and what followed it), so the model
// always sees the question it is answering; WithNodeCuts and WithOpenTurn
// lift each. Select proposes a range without beginning anything.
//
// A compaction has two phases, so a summariser can take its time:
//
//	op, err := compaction.Begin(ctx, s, start, end)  // checks, then appends the start event: the lock
//	summary, meta := summarise(op.Messages)           // the shadowed nodes' messages
//	res, err := op.Commit(ctx, summary, meta)         // record, replacing user/message, end event
//	// or op.Abort(err): the end event with the error, no replace
//
// Compact and CompactSelected do all three with a Summarizer and never
// leave the lock held: a summariser error, a summary Commit refuses, a
// cancelled context or a summariser panic aborts the compaction (the end
// event records why; a panic is raised again after). A Commit refused
// before it appends (compaction.summary_invalid: an empty summary, a
// tool-call or tool-result block, a block that is not text or image)
// leaves the Operation open, to commit another summary or abort.
//
// The lock lives in the log: a second Begin while a start event has no end
// event after it fails with compaction.locked, in this process or after a
// resume. InProgress says whether one is open; AbortOpen ends one whose
// Operation was lost without ending the turn; repair closes a start event
// a crash left open (REP-6). Nothing retries by itself: a caller that
// gets compaction.locked waits for the other compaction to end.
//
// Tool pairing: a range may not split an assistant tool call from its
// result. The balance of every surface cut (how many calls made before it
// are answered after it) is kept incrementally, O(1) amortised per append
// and rebuilt after a replace; Begin refuses an unbalanced range with
// compaction.unbalanced, or shrinks it to balanced cuts with WithSnap.
//
// Pruning: ProposePrunes lists the tool results over a size that the model
// has answered and that lie before the open turn; PruneToolResult replaces
// one tool result's content, keeping its call id and the rest of its data,
// after a compaction/prune record.
//
// Records are written in the seed system's b736889ac7 vocabulary
// (compact/*) by default, or in its later one (compaction/*, with a
// compactionId) with WithVocabulary(CompactionEvents). Both load.
package compaction
