package persist

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/pgtest"
)

// TestPostgresSessionsAndSecondWriter: PostgresSessions lists a schema's
// sessions in id order, and a schema that has no store yet lists none
// without an error (two look-alikes of "nothing there"); a second writer
// of one session is persist.locked, naming no event, and a writer of
// another session of the same schema is not.
func TestPostgresSessionsAndSecondWriter(t *testing.T) {
	url := pgtest.URL(t)
	schema := pgtest.Schema("listing")
	if ids, err := PostgresSessions(url, WithPostgresSchema(schema)); err != nil || len(ids) != 0 {
		t.Fatalf("a schema with no store: %v %v", ids, err)
	}
	var open []*Postgres
	defer func() {
		for _, p := range open {
			p.Close(context.Background())
		}
	}()
	for _, id := range []string{"b", "a", "c"} {
		p, err := OpenPostgres(context.Background(), url, hdr(id), WithPostgresSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, p)
	}
	if ids, err := PostgresSessions(url, WithPostgresSchema(schema)); err != nil || !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("sessions %v %v, want [a b c]", ids, err)
	}
	if _, err := OpenPostgres(context.Background(), url, hdr("a"), WithPostgresSchema(schema)); !isErr(err, event.CodePersistLocked, -1) {
		t.Fatalf("a second writer of a: %#v", err)
	}
}

// TestSQLiteReaderSessions: a reader of a database with sessions lists
// them in id order and closes; a reader of an empty file (a fresh
// database, nothing in it yet) lists none and closes too.
func TestSQLiteReaderSessions(t *testing.T) {
	requireSQLite(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	for _, id := range []string{"b", "a"} {
		sq, err := OpenSQLite(context.Background(), db, hdr(id))
		if err != nil {
			t.Fatal(err)
		}
		sq.Close(context.Background())
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]string{db: {"a", "b"}, empty: nil} {
		r, err := OpenSQLiteReader(path)
		if err != nil {
			t.Fatal(err)
		}
		if ids, err := r.Sessions(); err != nil || !slices.Equal(ids, want) {
			t.Errorf("%s: sessions %v %v, want %v", filepath.Base(path), ids, err, want)
		}
		if err := r.Close(); err != nil {
			t.Errorf("%s: close: %v", filepath.Base(path), err)
		}
	}
}
