// Package persist stores session logs on disk and brings them back: a
// JSONL backend (one event per line after a header line) and a SQLite
// backend (the seed system's schema, SCHEMA_VERSION 4), behind one Store
// interface; Resume turns a store into a durable Session, repairing a log
// a crash left open (spec/README.md, STORE-1 to STORE-12, REP-1 to REP-5).
//
// Durability: Session.Append writes the event through the store before it
// enters the in-memory log, so an acknowledged append is on disk (synced
// under the store's SyncPolicy, by default on every append). A failed write
// fails the append and leaves both the session and the file as they were.
//
// Nothing is destroyed. A store refuses, and never "fixes", a file it
// cannot prove it wrote: a JSONL file without a session header or a SQLite
// database without the session tables is persist.not_a_session and keeps
// every byte. New JSONL files are created atomically. The only bytes a
// store ever cuts are a torn last line (a line without its newline, or
// bytes that are not JSON at all), and it copies them to NAME.torn-OFFSET
// first; a complete line that breaks a rule is an error naming the line.
//
// One writer, one session: a store holds an exclusive flock on its file
// while open, so a second writer, in this process or another, gets
// persist.locked at once; a store has at most one live session (a second
// Resume is persist.locked) and refuses an event that is not its next seq
// (persist.conflict).
//
// Loading goes through session.Seed, so every rule of the spec is checked:
// a stored log that breaks one is rejected with the rule's code, and the
// error names the line or row.
package persist
