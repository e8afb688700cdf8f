// Package seedsummary is the seed system's default summariser, in Go: the
// summariser its b736889ac7 compaction uses when no other is configured
// (summarizeWithLlm of compact-basic), offered over a model call the
// caller supplies.
//
// A compaction with it renders the shadowed events as the seed system's
// transcript (Transcript), asks the model, with the seed system's system
// prompt, for "Summarize this conversation history:" followed by the
// transcript (Request), assembles the streamed reply as the seed system's
// block assembler does (Assembler), keeps its text blocks, and fails as
// the seed system fails: a reply that stopped at its token cap, was
// aborted or errored, or holds no text. Given the same chunks, the summary,
// the records a compaction writes with it and the errors its end event
// records are byte for byte the seed system's (spec DIFFERENCES D61 says
// where this library's selection differs).
//
// Model is a function: wire it to any provider with the adapters of
// impl/providers, or to a recorded stream in tests.
//
//	sum := seedsummary.Summarizer(model, seedsummary.Config{Provider: "deepseek", Model: "deepseek-chat"})
//	res, err := compaction.CompactSelected(ctx, s, compaction.TargetTokens(budget, nil), sum, nil)
package seedsummary
