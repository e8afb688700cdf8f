// Package persist stores session logs on disk and brings them back: a
// JSONL backend (one event per line after a header line) and a SQLite
// backend (the seed system's schema, SCHEMA_VERSION 4), behind one Store
// interface; Resume turns a store into a durable Session, repairing a log
// a crash left open (spec/README.md, STORE-1 to STORE-7, REP-1 to REP-5).
//
// Durability: Session.Append writes the event through the store before it
// enters the in-memory log, so an acknowledged append is on disk (synced
// under the store's SyncPolicy, by default on every append). A failed write
// fails the append and leaves both the session and the file as they were.
//
// Single writer: a store holds an exclusive flock on its file while open; a
// second writer, in this process or another, gets persist.locked at once.
//
// Loading goes through session.Seed, so every rule of the spec is checked:
// a stored log that breaks one is rejected with the rule's code.
package persist
