package persist

import (
	"context"
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
