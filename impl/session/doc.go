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
// One method appends: Append(ctx, data, intent...), where data names the
// event's type: the struct of a catalog type (event.TurnStartData,
// event.UserMessageData, ..., generated from spec/events.json) or an
// event.Raw for any other. A surface-eligible type takes one event.Intent
// (event.AppendIntent(), event.ReplaceIntent(...)), any other type none;
// both are checked when the event is appended. AppendEvent appends a
// complete event (a replay), AppendBatch several as one write.
//
// Bookkeeping a harness needs is kept as the log grows, so it never walks
// the log itself: OpenTurn, NextTurn, OpenStep, PendingCalls (the tool
// calls of the open turn still waiting for a result) and Tokens (the
// token count of the messages, kept in O(1): provider-reported usage for
// assistant messages that recorded it, an estimate otherwise).
//
// WithStrict makes the session refuse, at append, histories that model
// providers reject (spec/README.md, STRICT-1 to STRICT-8): a result for a
// call never made or already answered, tool-call arguments that are not
// a JSON object, a prompt, steering message, step/end or turn/end while
// calls wait for results, a turn/start inside a turn, events outside a
// turn or of another turn, a call id used twice, a replace that parts a
// call from its result; and it refuses to load (seed, resume, fork) a log
// that breaks one of those rules, naming the first breaking event.
//
// A Session is safe for concurrent use by several goroutines. Appends are
// serialised; readers (Messages, Surface, Events, Len, Position,
// Provenance and the bookkeeping queries) never wait for a store's write
// (WithWriteAhead): they see the log as of the last completed append.
// What can block: an append waits for the append before it, and for its
// own write-ahead. Append, AppendEvent, AppendBatch and Repair
// give the write a context (persist.cancelled when it ends first). A batch
// (AppendBatch, a repair's closers) is written ahead in one call, so a
// store makes it durable with one sync or one transaction; while it is
// written, readers see the session as it was before the batch.
//
// WithObserver reports every append (its lock wait and its write), batch
// and repair to an observe.Observer: log/slog (observe.Logger) or
// OpenTelemetry (impl/surfaceotel). Off by default, at the cost of a nil
// check.
package session
