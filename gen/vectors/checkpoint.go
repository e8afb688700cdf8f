package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
)

// checkpointOf is the checkpoint this library's JSONL store keeps beside
// file (STORE-18) after it opened the file's first lines (the header and
// `events` events), resumed, and closed: the bytes of PATH.checkpoint. The
// lines must end every turn they open, so that the resume appends nothing.
func checkpointOf(lines []string, events int) []byte {
	dir, err := os.MkdirTemp("", "surface-gen-checkpoint")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:events+1], "\n")+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	st, err := persist.OpenJSONL(ctx, path, persist.Header{ID: "s1", CreatedAt: 1767225600000}, persist.WithCheckpoints(1), persist.WithSync(persist.SyncNever))
	if err != nil {
		log.Fatal(err)
	}
	s, rep, err := persist.Resume(ctx, st)
	if err != nil || len(rep.Closers) > 0 {
		log.Fatalf("checkpointOf: %v, %d closers", err, len(rep.Closers))
	}
	if err := s.Close(ctx); err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(persist.CheckpointName(path))
	if err != nil {
		log.Fatal(err)
	}
	return b
}

// sqliteCheckpoint is the schema of the checkpoints table and the state
// this library's SQLite store keeps in it (STORE-18) for a session s1 of
// the given user/message events (seqs 0 on, time 1), written through the
// store and closed.
func sqliteCheckpoint(events int) (schema, state string) {
	dir, err := os.MkdirTemp("", "surface-gen-checkpoint")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.db")
	ctx := context.Background()
	st, err := persist.OpenSQLite(ctx, path, persist.Header{ID: "s1", CreatedAt: 1767225600000}, persist.WithSQLiteCheckpoints(1), persist.WithSQLiteSync(persist.SyncNever))
	if err != nil {
		log.Fatal(err)
	}
	s, _, err := persist.Resume(ctx, st, session.WithClock(func() int64 { return 1 }))
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < events; i++ {
		if _, err := s.Append(ctx, event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(user)}, event.AppendIntent()); err != nil {
			log.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		log.Fatal(err)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'checkpoints'`).Scan(&schema); err != nil {
		log.Fatal(err)
	}
	if err := db.QueryRow(`SELECT state FROM checkpoints WHERE session_id = 's1'`).Scan(&state); err != nil {
		log.Fatal(err)
	}
	return schema, state
}
