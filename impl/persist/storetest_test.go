package persist_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/persist/storetest"
)

// The store kit (package storetest) run against the three stores of this
// package: STORE-1 to STORE-13.

type jsonlFactory struct{ dir string }

func (f jsonlFactory) path(id string) string { return filepath.Join(f.dir, id+".jsonl") }

func (f jsonlFactory) Open(t testing.TB, h persist.Header) (persist.Store, error) {
	return persist.OpenJSONL(f.path(h.ID), h)
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
	return persist.OpenSQLite(f.path(h.ID), h)
}

func TestStoreKitSQLite(t *testing.T) {
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

// pgURL returns the URL of the Postgres server for the tests: skipped
// without SURFACE_PG_URL, except under CI, where a missing server fails.
func pgURL(t testing.TB) string {
	url := os.Getenv("SURFACE_PG_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but SURFACE_PG_URL is not set: .ci/run starts a Postgres server for these tests")
		}
		t.Skip("no SURFACE_PG_URL: start one with scripts/pg.sh")
	}
	return url
}

type pgFactory struct{ url, schema string }

func (f pgFactory) Open(t testing.TB, h persist.Header) (persist.Store, error) {
	return persist.OpenPostgres(f.url, h, persist.WithPostgresSchema(f.schema))
}

func TestStoreKitPostgres(t *testing.T) {
	f := pgFactory{url: pgURL(t), schema: fmt.Sprintf("storetest_%d_%d", os.Getpid(), time.Now().UnixNano())}
	storetest.Run(t, f, storetest.Caps{
		SingleWriter: true,
		Fork:         true,
		Read: func(t testing.TB, id string) ([]event.Event, error) {
			return persist.ReadPostgres(f.url, id, persist.WithPostgresSchema(f.schema))
		},
	})
}
