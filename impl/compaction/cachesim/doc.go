// Package cachesim measures what a compaction policy costs once the
// providers' prompt caches are counted (issue: cache-aware compaction).
//
// Every major provider bills the prefix of a request it has seen recently
// at about a tenth of the input price, so the input bill of a long agent
// session is decided by how often that prefix changes: a compaction or a
// prune changes the prompt from the first node it replaces, and the cache
// is lost from there. Cache simulates the cache of one provider from its
// public documentation (Model: Anthropic, OpenAI, Gemini); Run plays a
// synthetic coding session (Workload) through the real session and
// compaction API as a harness would, under a compaction Policy, and sends
// every request to each provider's Cache. Report prints, per workload,
// provider and policy, the effective input cost in base-price tokens, the
// cached fraction, the prefix resets and resets per compaction, overflows
// and the largest prompt.
//
// go run ./cmd/cachereport prints the table; go test -bench . in this
// package reports each policy's cost relative to the head-anchored
// baseline.
package cachesim
