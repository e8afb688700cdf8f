// Package session is the library users import: an event-sourced session log
// with its surface and the LLM messages derived from it.
//
// A Session is an append-only log of events (package event). Events of the
// five message-producing types enter the surface by an explicit marker:
// append at the tail, or replace of an inclusive range of surface nodes by
// one new node whose sourceEventSeqs cover every node it shadows. Messages
// walks the surface; Provenance follows sourceEventSeqs; Fork starts a new
// session from a prefix of the log.
//
// Every rule of spec/README.md is checked before an event enters the log,
// at Append and at Seed alike; a rejection is an *event.Error with a stable
// code and changes nothing. Queries are incremental: with no new events
// Messages and Surface cost O(1) and allocate nothing.
//
// The typed helpers (AppendUserMessage, AppendTurnStart, ...) are generated
// from spec/events.json: the helper of a surface-eligible type takes an
// event.Intent, so forgetting the marker is a compile error.
//
// A Session is safe for concurrent use by several goroutines.
package session
