package main

import (
	"bytes"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/model"
)

// validateCmd checks persisted logs, written by any implementation,
// against the spec: the file format (STORE-1, STORE-2, STORE-5) and every
// rule of every event (through the model). It never changes the files.
func validateCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sessionID := fs.String("session", "", "SQLite: only this session (default: every session)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: conformance validate [--session ID] FILE...")
		return 2
	}
	status := 0
	for _, path := range fs.Args() {
		logs, err := readLogs(path, *sessionID)
		if err != nil {
			fmt.Fprintf(stdout, "%s: INVALID %s\n", path, err)
			status = max(status, 1)
			continue
		}
		for name, events := range logs {
			st, err := model.Derive(events)
			if err != nil {
				fmt.Fprintf(stdout, "%s%s: INVALID %s\n", path, name, err)
				status = max(status, 1)
				continue
			}
			open := ""
			if len(model.Closers(st.Log)) > 0 {
				open = " (last turn open: resume will repair it)"
			}
			fmt.Fprintf(stdout, "%s%s: OK %d events, %d surface nodes, %d messages%s\n", path, name, len(events), len(st.Surface), len(st.Messages), open)
		}
	}
	return status
}

func readLogs(path, sessionID string) (map[string][]event.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	magic := make([]byte, 16)
	n, _ := io.ReadFull(f, magic)
	f.Close()
	if !bytes.Equal(magic[:n], []byte("SQLite format 3\x00")) {
		_, events, torn, err := persist.ReadJSONL(path)
		if err != nil {
			return nil, err
		}
		if torn > 0 {
			fmt.Fprintf(os.Stderr, "%s: a torn last line of %d bytes (a crash during a write) is ignored\n", path, torn)
		}
		return map[string][]event.Event{"": events}, nil
	}
	abs, _ := filepath.Abs(path)
	db, err := sql.Open("sqlite3", "file:"+abs+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var version int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return nil, err
	}
	if version != persist.SchemaVersion {
		return nil, event.Errorf(event.CodePersistSchemaVersion, -1, "schema version %d, this build reads %d", version, persist.SchemaVersion)
	}
	ids := []string{sessionID}
	if sessionID == "" {
		ids = nil
		rows, err := db.Query(`SELECT id FROM sessions ORDER BY id`)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			rows.Scan(&id)
			ids = append(ids, id)
		}
		rows.Close()
	}
	out := map[string][]event.Event{}
	for _, id := range ids {
		events, err := persist.ReadSQLite(db, id)
		if err != nil {
			return nil, err
		}
		out[fmt.Sprintf(" session %q", id)] = events
	}
	return out, nil
}
