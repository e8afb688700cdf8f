package persist

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/pgtest"
)

// TestSQLiteLeaseIsPerSession: STORE-4. Two sessions of one SQLite
// database have a writer each at the same time; a second writer of the
// same session gets persist.locked, and gets the session once the first
// closes.
func TestSQLiteLeaseIsPerSession(t *testing.T) {
	requireSQLite(t)
	db := filepath.Join(t.TempDir(), "shared.db")
	a, err := OpenSQLite(context.Background(), db, hdr("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenSQLite(context.Background(), db, hdr("b"))
	if err != nil {
		t.Fatalf("a second session of the same database: %v", err)
	}
	sa, _, err := Resume(context.Background(), a, clock())
	if err != nil {
		t.Fatal(err)
	}
	sb, _, err := Resume(context.Background(), b, clock())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := sa.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(userData)}, event.Intent{Op: event.Append()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := OpenSQLite(context.Background(), db, hdr("a")); !isErr(err, event.CodePersistLocked, -1) {
		t.Fatalf("a second writer of session a: %v", err)
	}
	sa.Close(context.Background())
	a2, err := OpenSQLite(context.Background(), db, hdr("a"))
	if err != nil {
		t.Fatalf("session a after its writer closed: %v", err)
	}
	a2.Close(context.Background())
	sb.Close(context.Background())
	r, _ := OpenSQLiteReader(db)
	defer r.Close()
	for id, want := range map[string]int{"a": 3, "b": 3} {
		events, err := r.Events(id)
		if err != nil || len(events) != want {
			t.Fatalf("session %s: %d events, %v", id, len(events), err)
		}
	}
}

// TestPostgresConnectionLoss: STORE-13. After the server ends the store's
// connection, an append is persist.closed (not persist.io), and so is every
// later one; reopening the store resumes what was committed.
func TestPostgresConnectionLoss(t *testing.T) {
	url := pgtest.URL(t)
	schema := pgtest.Schema("connloss")
	st, err := OpenPostgres(context.Background(), url, hdr("lost"), WithPostgresSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Resume(context.Background(), st, clock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(turnOpen)}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	pid := st.conn.PgConn().PID()
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, err := s.Append(ctx, event.Raw{Type: event.TypeUserMessage, Data: raw(userData)}, event.Intent{Op: event.Append()})
		if !errors.Is(err, event.CodePersistClosed) {
			t.Fatalf("append %d after the connection died: %v", i, err)
		}
	}
	s.Close(context.Background())
	st2 := openPgEventually(t, url, "lost", schema)
	defer st2.Close(context.Background())
	s2, _, err := Resume(context.Background(), st2, clock())
	if err != nil {
		t.Fatal(err)
	}
	if s2.Len() < 1 {
		t.Fatalf("reopened with %d events", s2.Len())
	}
}

// TestPostgresSchemas: STORE-13. A database without the store's schema is
// persist.not_a_session to a reader; a schema that exists and is empty
// (made for the store by an administrator) is taken; one with other
// tables is persist.not_a_session.
func TestPostgresSchemas(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	missing := pgtest.Schema("missing")
	if _, err := ReadPostgres(url, "x", WithPostgresSchema(missing)); !isErr(err, event.CodePersistNotASession, -1) {
		t.Fatalf("reading a database without the schema: %v", err)
	}
	empty := pgtest.Schema("empty")
	if _, err := admin.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{empty}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	st, err := OpenPostgres(context.Background(), url, hdr("e"), WithPostgresSchema(empty))
	if err != nil {
		t.Fatalf("an empty schema: %v", err)
	}
	st.Close(context.Background())
	other := pgtest.Schema("other")
	if _, err := admin.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{other}.Sanitize()+`; CREATE TABLE `+pgx.Identifier{other, "t"}.Sanitize()+` (x int)`); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPostgres(context.Background(), url, hdr("o"), WithPostgresSchema(other)); !isErr(err, event.CodePersistNotASession, -1) {
		t.Fatalf("a schema with other tables: %v", err)
	}
	if _, err := ReadPostgres(url, "o", WithPostgresSchema(other)); !isErr(err, event.CodePersistNotASession, -1) {
		t.Fatalf("reading a schema with other tables: %v", err)
	}
}
