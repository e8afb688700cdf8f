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
// The events of a batch (Session.AppendBatch, a repair's closers) reach the
// store in one write: one sync of a file store, one transaction of a
// database, all of them acknowledged or none (STORE-17).
//
// Contexts (STORE-16): every store call that writes or waits (open, Append,
// Sync, Close, Resume, Fork, and Session.Append through them) takes
// a context; when it ends first the call fails with persist.cancelled and
// nothing of it is acknowledged. A Postgres statement is cancelled on the
// server and rolled back, so the store goes on; a file store checks the
// context before it writes and before it syncs.
//
// Nothing is destroyed. A store refuses, and never "fixes", a file it
// cannot prove it wrote: a JSONL file without a session header or a SQLite
// database without the session tables is persist.not_a_session and keeps
// every byte. New JSONL files are created atomically. The only bytes a
// store ever cuts are a torn last line (a line without its newline, or
// bytes that are not JSON at all), and it copies them to NAME.torn-OFFSET
// first; a complete line that breaks a rule is an error naming the line.
//
// One writer per session (STORE-4): a JSONL store holds an exclusive lock
// on its file, a SQLite store on a lock file of its session beside the
// database (PATH.lock-HASH; other sessions of the database have writers of
// their own), a Postgres store an advisory lock; a second writer of the
// same session, in this process or another, gets persist.locked at once.
// A store has at most one live session (a second Resume is persist.locked)
// and refuses an event that is not its next seq (persist.conflict).
//
// Forks are all or nothing (STORE-14): Fork writes a child's header and
// inherited events as one step (a JSONL file linked into place once
// complete, one transaction in SQLite and Postgres), and a child whose
// header promises more events than it holds is refused with
// persist.fork_incomplete.
//
// Checkpoints (STORE-18): WithCheckpoints (JSONL: PATH.checkpoint),
// WithSQLiteCheckpoints and WithPostgresCheckpoints (a table checkpoints)
// keep the session's derived state beside its log, written at turn ends
// and at Close. Opening the store checks the checkpoint against the log
// (the last line or row it covers, the surface's lines or rows) and reads
// only the events after it; one that does not match is ignored
// (LoadReport.CheckpointIgnored), so a checkpoint makes a resume faster,
// never different. CheckJSONLCheckpoint, SQLiteReader.Checkpoint and
// CheckPostgresCheckpoint check one against a replay of the whole log.
//
// Postgres: when the connection dies, appends fail with persist.closed;
// reopen the store with OpenPostgres and Resume it to go on from what was
// committed.
//
// Loading goes through session.Seed, so every rule of the spec is checked:
// a stored log that breaks one is rejected with the rule's code, and the
// error names the line or row.
package persist
