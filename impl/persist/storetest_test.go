package persist_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/persist/storetest"
	"github.com/surfacelog/surface/internal/pgtest"
)

// The store kit (package storetest) run against the three stores of this
// package: STORE-1 to STORE-13.

type jsonlFactory struct{ dir string }

func (f jsonlFactory) path(id string) string { return filepath.Join(f.dir, id+".jsonl") }

func (f jsonlFactory) Open(t testing.TB, h persist.Header) (persist.Store, error) {
	return persist.OpenJSONL(context.Background(), f.path(h.ID), h)
}

func TestStoreKitJSONL(t *testing.T) {
	f := jsonlFactory{t.TempDir()}
	storetest.Run(t, f, storetest.Caps{
		SingleWriter: true,
		Fork:         true,
		Read: func(t testing.TB, id string) ([]event.Event, error) {
			_, events, _, err := persist.ReadJSONL(f.path(id))
			return events, err
		},
		Tear: func(t testing.TB, id string, keep int) {
			b, err := os.ReadFile(f.path(id))
			if err != nil {
				t.Fatal(err)
			}
			last := strings.LastIndexByte(string(b[:len(b)-1]), '\n') + 1
			if err := os.WriteFile(f.path(id), b[:last+keep], 0o644); err != nil {
				t.Fatal(err)
			}
		},
	})
}

type sqliteFactory struct{ dir string }

func (f sqliteFactory) path(id string) string { return filepath.Join(f.dir, id+".db") }

func (f sqliteFactory) Open(t testing.TB, h persist.Header) (persist.Store, error) {
	return persist.OpenSQLite(context.Background(), f.path(h.ID), h)
}

func TestStoreKitSQLite(t *testing.T) {
	if !persist.SQLiteAvailable {
		t.Skip("built without cgo: no SQLite store")
	}
	f := sqliteFactory{t.TempDir()}
	storetest.Run(t, f, storetest.Caps{
		SingleWriter: true,
		Fork:         true,
		Read: func(t testing.TB, id string) ([]event.Event, error) {
			r, err := persist.OpenSQLiteReader(f.path(id))
			if err != nil {
				return nil, err
			}
			defer r.Close()
			return r.Events(id)
		},
	})
}

type pgFactory struct{ url, schema string }

func (f pgFactory) Open(t testing.TB, h persist.Header) (persist.Store, error) {
	return persist.OpenPostgres(context.Background(), f.url, h, persist.WithPostgresSchema(f.schema))
}

func TestStoreKitPostgres(t *testing.T) {
	f := pgFactory{url: pgtest.URL(t), schema: pgtest.Schema("storetest")}
	storetest.Run(t, f, storetest.Caps{
		SingleWriter: true,
		Fork:         true,
		Read: func(t testing.TB, id string) ([]event.Event, error) {
			return persist.ReadPostgres(f.url, id, persist.WithPostgresSchema(f.schema))
		},
	})
}
